// Package shell is prime-mock's interpreted shell: what both gateway
// transports run instead of anything on the host. It holds the language
// (lexer, parser, expansion, redirections, pipelines), the commands it
// knows, and a sandbox's process table (Machine: pids, process groups,
// signals, background processes) over the sandbox's file system
// (internal/primemock/sandboxfs). The mock's server starts a Process with
// Machine.NewProcess and runs a script in it with Machine.Run; Hooks
// connect a Machine to its sandbox (liveness, reachability, sleep scale,
// background launches, signal reports).
//
// It may import: the standard library, internal/prime, internal/primemock/sandboxfs.
//
// Only internal/primemock (and cmd/prime-mock, for Subset) import it.
//
// # Language
//
// Both transports run the same interpreter; nothing runs on the host.
//
// Syntax: and-or lists ("&&" and "||", equal precedence, left to right) are
// separated by newlines and ";", or end with "&" (run in the background);
// "! pipeline" negates a status; "( list )" runs a list in a subshell, with
// redirections after the ")". "a | b" runs each stage in a child process
// (as bash without lastpipe), one after the other [I: a stage never
// waits for its reader, so side effects across stages may come in another
// order than through a real pipe; what each stage reads and writes is the
// same], its stdout (with "|&" also its stderr) the next stage's stdin; the
// status is the last stage's, or with "set -o pipefail" the last non-zero
// one. Words are split on blanks; single quotes keep everything literal;
// double quotes keep everything literal except "$" expansions and the
// backslash before \ " $ `; an unquoted backslash escapes one character, a
// backslash-newline continues the line; "#" at the start of a word comments
// out the rest of the line. "$NAME", "${NAME}", "$?", "$$" (the shell's pid;
// a subshell keeps its parent's, sh -c has its own) and "$!" (the last
// background pid) expand bare (split into fields on blanks) and inside
// double quotes (not split), never inside single quotes; unset names are
// empty (with "set -u", bash's "NAME: unbound variable" and exit 127). A
// leading "~" is $HOME; unquoted "*", "?" and "[...]" glob against the
// sandbox's files (sorted; a pattern without a match stays as written; "*"
// skips dot files). "<<WORD" and "<<-WORD" here-documents (expanded unless
// WORD is quoted) and "<<<" here-strings feed stdin. "set -e", "-u", "-x" and
// "-o pipefail" behave as in bash. "NAME=value" alone sets a shell variable;
// before a command it sets that command's environment only. A syntax error
// stops the script at the line it is on: bash's message on stderr, exit 2.
//
// What the shell does not interpret is refused, never run as a literal:
// Subset lists it (command substitution, control structures,
// functions, parameter operators, positional parameters, brace expansion,
// the bash builtins it lacks, ...). The shell that meets such a construct
// writes "bash: line N: prime-mock does not support …" to stderr and stops
// with ExitUnsupported (2); what ran before stays run, and the execution
// ends with ExitUnsupported even when a parent shell goes on (so the
// background-job wrapper still records the job's status). A background
// list that holds one is refused in the foreground, before it starts.
//
// Redirections apply left to right with dup semantics ("cmd 1>&2 2>/dev/null"
// sends cmd's output to the original stderr and its errors nowhere):
// "[n]>FILE" (create or truncate), "[n]>>FILE" (append), "[n]<FILE", "&>FILE",
// "&>>FILE", ">&FILE", "[n]>&m", "[n]>&-". /dev/null discards (and reads
// empty); /dev/stdout, /dev/stderr, /dev/stdin and /dev/fd/N are the
// descriptors. A file that cannot be opened (a missing parent directory, a
// directory) fails the command with bash's "bash: line N: PATH: No such file
// or directory", status 1, without running it.
//
// Processes: each script runs as a process with a pid from the sandbox's
// counter ([I] from 1000, REST and Connect alike), [I] the leader of a
// process group of its own. "( list )", sh, bash, nohup and setsid run in
// child processes of the same group (an "exit" in a subshell leaves only the
// subshell); "&" starts a child that is detached from the request: the script
// goes on at once with status 0, and the child runs until its program ends,
// it is killed or the sandbox stops running. [I] What a background
// process writes to the request's streams is dropped. A single command after
// "&" is exec'd by that child, as bash does, so "nohup sh -c S &" and "nohup
// setsid sh -c S &" are one process, and setsid makes it the leader of a new
// group (its pgid is its pid). Every other command is interpreted inside the
// shell's process.
//
// Environment: HOME=/root and a standard PATH [I], then the sandbox's
// environment_vars, then its secrets (real values), then the request's env or
// envs [I: this precedence], all exported; PWD follows the working
// directory. The working directory is the request's working_dir or cwd;
// [I] without one it is /root, a relative one is resolved against /root,
// and it is not checked. cd checks the file system.
//
// Commands (coreutils', grep's and bash's messages, C locale, and
// statuses; Subset is the summary "prime-mock -h" prints):
//
//	true, :, false       exit 0, 0, 1
//	echo [-n] WORDS      to stdout
//	exit [N]             stop with N mod 256 (default: the last status)
//	sleep SECONDS        wait (decimal, optional s/m/h suffix, times SleepScale);
//	                     interrupted by a deadline, a signal or the sandbox going away
//	probe HOST           exit 0 if HOST is reachable (see Reachability), else 7
//	                     with curl's "Couldn't connect" message on stderr
//	curl [flags...] URL  the same for the URL's host (scheme optional)
//	repeat N TEXT        TEXT N times, one per line (output-size tests)
//	cd [DIR], pwd        change or print the working directory
//	export [NAME[=V]]... set and export (no arguments: list as declare -x)
//	printenv [NAME...]   the exported environment; exit 1 if a NAME is unset
//	trap [ACTION] SIG... ACTION '' ignores, '-' restores; TERM and EXIT fire
//	kill [-s SIG|-SIG] [--] PID|-PGID...
//	                     TERM (default, 15), KILL (9), 0 (exists?); -PGID is a
//	                     group; "bash: line N: kill: (PID) - No such process", 1
//	sh|bash [-c SCRIPT | FILE]  a new shell process ("$$" its pid; -l accepted)
//	nohup CMD..., setsid CMD...  run CMD (setsid: as a new group's leader)
//	cat, ls [-alAd1], mkdir [-p] [-m MODE], mv [-fT], cp [-r], chmod [-R] MODE
//	                     (octal or u+x style), rm [-rfd] (refuses "rm -rf /"),
//	                     ln -s [-fn], touch, test / [ (-e -f -d -s -L -h -x ...,
//	                     = != -eq ..., ! -a -o), wc [-clwm], sha256sum,
//	                     head/tail [-c N] [-n N] (+N, -N, K/M/G)
//	tar -c|-x|-t [-z] [-v] -f ARCHIVE [-C DIR] [--strip-components=N] [PATH...]
//	                     ustar, PAX and GNU archives; members as GNU tar names
//	                     them ("./a"); directories, files with their permission
//	                     bits, symlinks (made last, so nothing is written
//	                     through a link the archive made), [I] hard links as
//	                     copies; a leading "/" is removed and ".." members are
//	                     skipped, as GNU tar does
//	set -e|-u|-x|-o NAME errexit, nounset, xtrace, pipefail (and +); other options refused
//	unset NAME...        forget variables
//	printf FORMAT ARG... %s %d %i %u %x %X %o %c %f %e %g %b %% with flags, width
//	                     and precision; \n \t \r \\ \a \0NNN; the format repeats
//	source FILE, . FILE  run FILE's script in this shell
//	tr [-ds] SET1 [SET2] ranges, \n \t, [:lower:] [:upper:] [:digit:] [:alpha:]
//	                     [:alnum:] [:space:] [:blank:] [:punct:]
//	grep [-vicqnoxwFEsHh] [-e PAT] PAT [FILE...]  BRE (default), ERE (-E), fixed (-F);
//	                     exit 0 matched, 1 none, 2 error
//	sort [-rnu], uniq [-cdu], cut -f LIST [-d C] [-s] | -c LIST, tee [-a] FILE...,
//	basename NAME [SUFFIX], dirname NAME...
//	                     an option these have elsewhere but not here is refused
//	bash builtins the mock lacks (read, eval, exec, wait, ...)
//	                     refused (ExitUnsupported)
//	anything else        exit 127, "bash: line N: NAME: command not found" and
//	                     "prime-mock: "NAME" is not one of the mock's commands"
//
// Each of stdout and stderr is capped at MaxOutputBytes, with a note on
// stderr when output was dropped.
package shell
