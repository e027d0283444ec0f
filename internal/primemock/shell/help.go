package shell

// ShellSubset is the part of bash the mock's shell interprets, as
// "prime-mock -h" prints it. Everything else is refused with "prime-mock
// does not support …" on stderr and ExitUnsupported, or, for a command
// name it does not know, bash's "command not found" (127) and a line
// saying that the mock lacks it.
const Subset = `Shell (commands run in prime-mock's own interpreter, never on the host):

  Syntax      lists with ; & && || and newlines; pipelines a | b |& c (stdout,
              with |& also stderr, into the next stage's stdin; each stage in a
              subshell; status of the last stage, or with pipefail the last
              failing one); ! negation; ( subshells ); 'single' and "double"
              quotes, backslash escapes, # comments; NAME=value assignments and
              NAME=value before a command.
  Expansions  $NAME ${NAME} $? $$ $!; ~ and ~/path; globs * ? [...] [!...]
              against the sandbox's files (no match: the word stays as written).
  Redirects   < > >> >| &> &>> n>&m n>&- <<WORD and <<-WORD (here-documents,
              expanded unless WORD is quoted) <<< (here-strings); /dev/null,
              /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N.
  set         -e -u -x -o errexit|nounset|xtrace|pipefail (and +).
  Builtins    true : false echo exit sleep cd pwd export unset printenv trap kill
              set printf source . test [ sh bash nohup setsid
  Files       cat ls mkdir mv cp chmod rm ln touch wc sha256sum head tail tar
  Text        tr grep sort uniq cut tee basename dirname
  Network     probe HOST; curl [flags] URL (exit 0 if the applied egress policy
              lets the sandbox reach the host, else 7)
  Mock only   repeat N TEXT (TEXT N times, for output-size tests)
  Paths       each command also answers to its path in /bin, /usr/bin,
              /usr/local/bin, /sbin and /usr/sbin (start_argv = ["/bin/sleep",
              "infinity"] runs as on a real image)

  Refused (exit 2, "prime-mock does not support …" on stderr; the shell that
  meets one stops there, and the whole command fails with 2 even when a parent
  shell goes on): if/case/for/while/until/select, { groups; }, [[ ]], (( )),
  functions, arrays, $(…) and backticks, $((…)), ${X:-…} and every other
  parameter operator, $1 $@ $* $# $0 $-, $'…', <(…) >(…), {a,b} and {1..3}
  brace expansion, time, coproc, and the bash builtins the mock lacks (read,
  eval, exec, wait, shift, local, declare, …). An unknown command is exit 127,
  "command not found", with a line saying that the mock lacks it.
`
