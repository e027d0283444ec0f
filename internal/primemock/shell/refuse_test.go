package shell

import (
	"strings"
	"testing"
)

// TestShellRefusesUnsupportedSyntax: every construct the mock's shell does
// not interpret stops the shell that meets it, with "prime-mock does not
// support …" on stderr and ExitUnsupported, never a silent literal or a
// bare "command not found". What ran before it stays run; the script's
// status is ExitUnsupported whatever follows in a parent shell.
func TestShellRefusesUnsupportedSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		stdout       string
		what         string // the refused construct, as the message names it
	}{
		{"command substitution", "echo today: $(date)", "", `command substitution "$(date)"`},
		{"command substitution quoted", `echo "today: $(date +%F)"`, "", `command substitution "$(date +%F)"`},
		{"nested command substitution", "echo $(echo $(echo x))", "", `command substitution "$(echo $(echo x))"`},
		{"backticks", "echo `date`", "", "command substitution \"`date`\""},
		{"arithmetic expansion", "echo $((1 + 2))", "", `arithmetic expansion "$((1 + 2))"`},
		{"arithmetic command", "(( x = 1 ))", "", `arithmetic commands "(( x = 1 ))"`},
		{"parameter default", "echo ${X:-default}", "", `parameter expansion "${X:-default}"`},
		{"parameter length", `echo "${#X}"`, "", `parameter expansion "${#X}"`},
		{"positional parameters", "echo $1", "", `the special parameter "$1"`},
		{"all arguments", `echo "$@"`, "", `the special parameter "$@"`},
		{"argument count", "echo $#", "", `the special parameter "$#"`},
		{"ANSI-C quoting", `echo $'a\tb'`, "", `ANSI-C quoting "$'a\tb'"`},
		{"process substitution", "cat <(echo x)", "", `process substitution "<(echo x)"`},
		{"brace expansion", "echo a{b,c}d", "", `brace expansion "{b,c}"`},
		{"brace sequence", "touch /tmp/f{1..3}", "", `brace expansion "{1..3}"`},
		{"for loop", "echo before; for i in 1 2; do echo $i; done; echo after", "before\n", `the "for" loop`},
		{"while loop", "while true; do echo x; done", "", `the "while" loop`},
		{"until loop", "until false; do :; done", "", `the "until" loop`},
		{"if statement", "if [ -d /tmp ]; then echo yes; else echo no; fi", "", `the "if" statement`},
		{"case statement", "case x in x) echo x;; *) echo y;; esac", "", `the "case" statement`},
		{"brace group", "{ echo a; echo b; } > /tmp/out", "", `brace groups "{ …; }"`},
		{"double brackets", "[[ -f /etc/hostname ]] && echo yes", "", `the "[[ … ]]" test`},
		{"function definition", "greet() { echo hi; }; greet", "", "function definitions"},
		{"function keyword", "function greet { echo hi; }", "", "function definitions"},
		{"array assignment", "a=(1 2 3); echo $a", "", "array assignments"},
		{"time keyword", "time sleep 0", "", `the "time" keyword`},
		{"bash builtin read", "echo x | read line", "", `the bash builtin "read"`},
		{"bash builtin eval", "eval echo hi", "", `the bash builtin "eval"`},
		{"bash builtin exec", "exec > /tmp/log", "", `the bash builtin "exec"`},
		{"set option", "set -m", "", `the "set -m" option`},
		{"loop after a pipe", "echo a | while read l; do echo $l; done", "", `the "while" loop`},
		{"heredoc with substitution", "cat <<EOF\n$(date)\nEOF", "", `command substitution "$(date)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := newShellBox(t).run(tc.script)
			if code != ExitUnsupported {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, ExitUnsupported, stdout, stderr)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			want := "prime-mock does not support " + tc.what
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr %q does not say %q", stderr, want)
			}
			if strings.Count(stderr, "prime-mock does not support") != 1 {
				t.Errorf("stderr %q: want exactly one refusal", stderr)
			}
		})
	}
}

// TestShellRefusalIsSticky: a refusal in a subshell ends the subshell; the
// parent goes on (the job wrapper still records the exit code), but the
// execution's status is ExitUnsupported.
func TestShellRefusalIsSticky(t *testing.T) {
	b := newShellBox(t)
	stdout, stderr, code := b.run("(for x in a; do :; done); echo after $?")
	if stdout != "after 2\n" || code != ExitUnsupported || !strings.Contains(stderr, `the "for" loop`) {
		t.Errorf("got %q %q %d", stdout, stderr, code)
	}
	// The provider's job wrapper, with a command the mock cannot run: the
	// job still ends, with the refusal in its stderr log and its status in
	// the exit file.
	_, _, code = b.run(`sh -c 'echo $$ > /tmp/j.pgid; (for i in 1; do echo $i; done) > /tmp/j.out 2> /tmp/j.err; echo $? > /tmp/j.exit'`)
	if code != ExitUnsupported {
		t.Errorf("wrapper exit %d", code)
	}
	if got := b.file("/tmp/j.exit"); got != "2\n" {
		t.Errorf("exit file %q", got)
	}
	if got := b.file("/tmp/j.err"); !strings.Contains(got, `prime-mock does not support the "for" loop`) {
		t.Errorf("stderr log %q", got)
	}
	// A background list that cannot run is refused in the foreground,
	// where someone reads the message.
	stdout, stderr, code = b.run("echo $(date) & echo fg")
	if code != ExitUnsupported || stdout != "" || !strings.Contains(stderr, "command substitution") {
		t.Errorf("background: got %q %q %d", stdout, stderr, code)
	}
}

// TestShellUnknownCommandSaysTheMockLacksIt: a command that is not one of
// the mock's is still exit 127, with a line saying that the mock lacks it.
func TestShellUnknownCommandSaysTheMockLacksIt(t *testing.T) {
	_, stderr, code := newShellBox(t).run("sed -e s/a/b/ /etc/hostname")
	if code != 127 || !strings.Contains(stderr, "bash: line 1: sed: command not found\n") ||
		!strings.Contains(stderr, `prime-mock: "sed" is not one of the mock's commands`) {
		t.Errorf("got %q %d", stderr, code)
	}
}

// TestShellOptions: set -e, -u, -x and -o pipefail, as bash applies them.
func TestShellOptions(t *testing.T) {
	for _, tc := range []struct {
		script, stdout, stderr string
		exit                   int
	}{
		{"set -e; false; echo no", "", "", 1},
		{"set -e; false || echo yes; echo after", "yes\nafter\n", "", 0},
		{"set -e; false && echo no; echo after", "after\n", "", 0},
		{"set -e; true && false; echo no", "", "", 1},
		{"set -e; ! true; echo still", "still\n", "", 0},
		{"set -e; (false); echo no", "", "", 1},
		{"set -e; (false; echo no)", "", "", 1},
		{"set -e; sh -c 'false; echo inner'; echo outer", "inner\nouter\n", "", 0},
		{"set -e; set +e; false; echo on", "on\n", "", 0},
		{"set -o errexit; false; echo no", "", "", 1},
		{"set -u; echo $NOPE; echo no", "", "bash: line 1: NOPE: unbound variable\n", 127},
		{"set -u; X=1; echo $X ${X}", "1 1\n", "", 0},
		{"set -x; echo a 'b c'", "a b c\n", "+ echo a 'b c'\n", 0},
		{"false | true; echo $?", "0\n", "", 0},
		{"true | false; echo $?", "1\n", "", 0},
		{"set -o pipefail; false | true; echo $?", "1\n", "", 0},
		{"set -euo pipefail; echo a | false; echo no", "", "", 1},
		{"set -eu; echo ok", "ok\n", "", 0},
		{"! false | false; echo $?", "0\n", "", 0},
	} {
		stdout, stderr, code := newShellBox(t).run(tc.script)
		if stdout != tc.stdout || stderr != tc.stderr || code != tc.exit {
			t.Errorf("%q:\n got %q %q %d\nwant %q %q %d", tc.script, stdout, stderr, code, tc.stdout, tc.stderr, tc.exit)
		}
	}
}
