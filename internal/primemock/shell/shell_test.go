package shell

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string
	}{
		{"echo hi", "[echo hi]"},
		{"echo a; echo b\necho c", "[echo a] [echo b] [echo c]"},
		{"a && b; c || d", "[a] &&[b] [c] ||[d]"},
		{`echo "a b;c" 'd && e'`, "[echo a b;c d && e]"},
		{`echo a\ b "x\"y" 'q\n'`, `[echo a b x"y q\n]`},
		{"  \n;; echo x  \n", "[echo x]"},
		{"echo x >&2", "[echo x]>"},
		{"a&&b", "[a] &&[b]"},
		{"echo a&b", "[echo a]& [b]"},
		{"echo a|b", "[echo a] | [b]"},
		{"! a | b |& c && d", "![a] | [b]> | [c] &&[d]"},
		{"(a; b) > f 2> g; c", "([a] [b])> [c]"},
		{"nohup sh -c 'x' < /dev/null > /dev/null 2>&1 &", "[nohup sh -c x]>&"},
		{"a && b &\nc", "[a] &&[b]& [c]"},
		{"echo $$ $! $?", "[echo $ ! ?]"},
		{"echo a # comment\n#only\necho b#c", "[echo a] [echo b#c]"},
		{"a &&\n b", "[a] &&[b]"},
		{"echo 'it''s'", "[echo its]"},
		{"(\n a\n ( b ) ) && c", "([a] ([b])) &&[c]"},
	} {
		list, err := parseScript(tc.src)
		if err != nil {
			t.Errorf("parseScript(%q): %s", tc.src, err.msg)
			continue
		}
		if got := formatList(list); got != tc.want {
			t.Errorf("parseScript(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

// formatList renders parsed lists for TestParseScript: words in brackets
// (expansions by name), an operator before the command it joins, ">" after
// a command with redirections, "&" after a background list, "(...)" for a
// subshell.
func formatList(list []andOr) string {
	var parts []string
	for _, ao := range list {
		for i, c := range ao.cmds {
			var p string
			switch {
			case len(c.stages) > 0:
				var stages []string
				for _, st := range c.stages {
					stages = append(stages, formatList([]andOr{{cmds: []command{st}}}))
				}
				p = strings.Join(stages, " | ")
			case c.isSub:
				p = "(" + formatList(c.sub) + ")"
			default:
				var words []string
				for _, w := range c.words {
					var b strings.Builder
					for _, part := range w {
						b.WriteString(part.text + part.varName)
					}
					words = append(words, b.String())
				}
				p = fmt.Sprint(words)
			}
			if c.negate {
				p = "!" + p
			}
			if c.op != "" {
				p = c.op + p
			}
			if len(c.redirs) > 0 {
				p += ">"
			}
			if ao.async && i == len(ao.cmds)-1 {
				p += "&"
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// runScript runs a script in a fresh interpreter with a reachability rule,
// an environment and a working directory.
func runScript(t *testing.T, script string, timeout time.Duration, env map[string]string, cwd string) (string, string, Outcome, error) {
	t.Helper()
	in := newInterp(env, cwd)
	in.m.hooks.Reachable = func(host string) bool { return host == "ok.example" || host == "10.0.0.1" }
	var stdout, stderr strings.Builder
	in.out.output = func(isErr bool, s string) {
		if isErr {
			stderr.WriteString(s)
		} else {
			stdout.WriteString(s)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := in.run(ctx, script)
	return stdout.String(), stderr.String(), out, err
}

// mockLacks is the line that follows bash's "command not found".
func mockLacks(name string) string {
	return fmt.Sprintf("prime-mock: %q is not one of the mock's commands (prime-mock -h lists them)\n", name)
}

const notFound = "bash: line %[1]d: %[2]s: command not found\nprime-mock: %[2]q is not one of the mock's commands (prime-mock -h lists them)\n"

func TestShellLanguage(t *testing.T) {
	env := map[string]string{"NAME": "world", "SPACED": "a  b", "EMPTY": ""}
	for _, tc := range []struct {
		script         string
		stdout, stderr string
		exit           int
	}{
		// Builtins kept from the first language.
		{"echo hello world", "hello world\n", "", 0},
		{"echo -n x; echo y", "xy\n", "", 0},
		{"echo oops >&2", "", "oops\n", 0},
		{"echo oops 1>&2; echo fine", "fine\n", "oops\n", 0},
		{"exit 3", "", "", 3},
		{"exit 256", "", "", 0},
		{"exit -1", "", "", 255},
		{"exit nope", "", "bash: line 1: exit: nope: numeric argument required\n", 2},
		{"echo a; exit 4; echo b", "a\n", "", 4},
		{"false; exit", "", "", 1},
		{"exit 1 && echo no", "", "", 1},
		{"echo a && echo b", "a\nb\n", "", 0},
		{"probe nope.example && echo no; echo yes", "yes\n", "curl: (7) Failed to connect to nope.example port 443 after 0 ms: Couldn't connect to server\n", 0},
		{"probe nope.example && echo no", "", "curl: (7) Failed to connect to nope.example port 443 after 0 ms: Couldn't connect to server\n", 7},
		{"probe ok.example", "", "", 0},
		{"curl -sS -o /dev/null -w '%{http_code}' --max-time 5 https://ok.example:8443/path?q=1", "", "", 0},
		{"curl -H 'Host: ok.example' http://nope.example/", "", "curl: (7) Failed to connect to nope.example port 443 after 0 ms: Couldn't connect to server\n", 7},
		{"curl 10.0.0.1", "", "", 0},
		{"curl -s", "", "curl: (2) no URL specified\n", 2},
		{"repeat 3 a b", "a b\na b\na b\n", "", 0},
		{"repeat 0 x", "", "", 0},
		{"sleep 0.01 && echo done", "done\n", "", 0},
		{"sleep soon", "", "sleep: invalid time interval \"soon\"\n", 1},
		// Operators, true/false.
		{"true && echo t || echo f", "t\n", "", 0},
		{"false && echo t || echo f", "f\n", "", 0},
		{"false || false || echo third", "third\n", "", 0},
		{"true || echo skipped; echo next", "next\n", "", 0},
		{"false", "", "", 1},
		{"false; echo $?", "1\n", "", 0},
		// Unknown commands.
		{"pip install -r x", "", fmt.Sprintf(notFound, 1, "pip"), 127},
		{"echo a\n  uname -a; echo $?", "a\n127\n", fmt.Sprintf(notFound, 2, "uname"), 0},
		{"nosuch || echo recovered", "recovered\n", fmt.Sprintf(notFound, 1, "nosuch"), 0},
		// Commands answer to their paths in the system bin directories.
		{"/bin/echo a; /usr/bin/true && /usr/local/bin/echo b", "a\nb\n", "", 0},
		{"/usr/bin/pip x", "", fmt.Sprintf(notFound, 1, "pip"), 127},
		{"/opt/bin/echo x", "", fmt.Sprintf(notFound, 1, "/opt/bin/echo"), 127},
		// Variables: bare, braced, in double quotes, not in single quotes.
		{"echo $NAME ${NAME} \"$NAME\" \"x${NAME}y\" '$NAME'", "world world world xworldy $NAME\n", "", 0},
		{"echo [$UNSET] \"[$UNSET]\" $ \"$\" \\$NAME", "[] [] $ $ $NAME\n", "", 0},
		{"printenv NAME; printenv UNSET; echo $?", "world\n1\n", "", 0},
		{"export A=1 B; B=2; printenv A B", "1\n2\n", "", 0},
		{"C=local; printenv C || echo unexported; echo $C", "unexported\nlocal\n", "", 0},
		{"D=once printenv D; printenv D || echo gone", "once\ngone\n", "", 0},
		{"export 1A=b", "", "bash: line 1: export: `1A=b': not a valid identifier\n", 1},
		{"for_each=$SPACED; echo \"$for_each\"", "a  b\n", "", 0},
		// Working directory.
		{"pwd", "/root\n", "", 0},
		{"cd /tmp && pwd; mkdir sub; cd sub; pwd; cd ..; pwd; cd; pwd; echo $PWD", "/tmp\n/tmp/sub\n/tmp\n/root\n/root\n", "", 0},
		{"cd /nowhere; pwd", "/root\n", "bash: line 1: cd: /nowhere: No such file or directory\n", 0},
		{"cd a b", "", "bash: line 1: cd: too many arguments\n", 1},
		// Redirections.
		{"echo gone >/dev/null; echo kept", "kept\n", "", 0},
		{"echo kept 2>&1 >&2; echo dropped 2>/dev/null >&2", "kept\n", "", 0},
		{"nosuch 2>/dev/null; echo $?", "127\n", "", 0},
		{"echo both &>/dev/null; echo to-file > /tmp/x; echo ok", "ok\n", "", 0},
		{"echo err >/dev/stderr", "", "err\n", 0},
		// trap and comments.
		{"trap 'echo bye' EXIT; echo hi; exit 3", "hi\nbye\n", "", 3},
		{"trap 'exit 9' EXIT; true", "", "", 9},
		{"trap 'echo x' NOPE", "", "bash: line 1: trap: NOPE: invalid signal specification\n", 1},
		{"# just a comment\necho after # trailing", "after\n", "", 0},
		// Syntax errors stop the script from that line on, with exit 2.
		{"echo a\necho \"b", "a\n", "bash: -c: line 2: unexpected EOF while looking for matching `\"'\n", 2},
		{"echo a\necho b >", "a\n", "bash: -c: line 2: syntax error near unexpected token `newline'\n", 2},
		{"&& echo x", "", "bash: -c: line 1: syntax error near unexpected token `&&'\n", 2},
	} {
		stdout, stderr, out, err := runScript(t, tc.script, 5*time.Second, env, "")
		if err != nil || stdout != tc.stdout || stderr != tc.stderr || out.Exit != tc.exit || out.Signal != "" {
			t.Errorf("%q:\n got stdout %q stderr %q exit %d signal %q err %v\nwant stdout %q stderr %q exit %d",
				tc.script, stdout, stderr, out.Exit, out.Signal, err, tc.stdout, tc.stderr, tc.exit)
		}
	}
}

func TestShellEnvironmentAndWorkDir(t *testing.T) {
	stdout, _, _, err := runScript(t, "pwd; printenv HOME; printenv PWD", time.Second, nil, "work/../data")
	if err != nil || stdout != "/root/data\n/root\n/root/data\n" {
		t.Errorf("relative working dir: %q %v", stdout, err)
	}
	stdout, _, _, _ = runScript(t, "pwd", time.Second, nil, "/srv/app/")
	if stdout != "/srv/app\n" {
		t.Errorf("absolute working dir: %q", stdout)
	}
	stdout, _, _, _ = runScript(t, "printenv", time.Second, map[string]string{"Z": "1", "A": "2"}, "/w")
	want := "A=2\nHOME=/root\nPATH=" + defaultPath + "\nPWD=/w\nZ=1\n"
	if stdout != want {
		t.Errorf("printenv = %q, want %q", stdout, want)
	}
}

func TestShellLimits(t *testing.T) {
	if _, _, _, err := runScript(t, "echo a; sleep 10", 30*time.Millisecond, nil, ""); !errors.Is(err, ErrTimeout) {
		t.Errorf("sleep past the timeout: %v, want errExecTimeout", err)
	}
	stdout, stderr, out, err := runScript(t, "repeat 100000000 0123456789abcdef", 5*time.Second, nil, "")
	if err != nil || out.Exit != 0 || len(stdout) != MaxOutputBytes || !strings.Contains(stderr, "truncated") {
		t.Errorf("huge repeat: %d bytes, stderr %q, exit %d, err %v", len(stdout), stderr, out.Exit, err)
	}
	if _, _, _, err := runScript(t, "repeat 100000000 x >/dev/null", 5*time.Second, nil, ""); err != nil {
		t.Errorf("discarded repeat: %v", err)
	}
	in := newInterp(nil, "")
	in.m.hooks.Alive = func() bool { return false }
	if _, err := in.run(context.Background(), "echo x"); !errors.Is(err, ErrVanished) {
		t.Errorf("a stopped sandbox: %v", err)
	}
	// A sandbox that goes away interrupts a sleep at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	in = newInterp(nil, "")
	done := make(chan error, 1)
	go func() { _, err := in.run(ctx, "sleep 3600"); done <- err }()
	cancel(ErrVanished)
	if err := <-done; !errors.Is(err, ErrVanished) {
		t.Errorf("vanished during sleep: %v", err)
	}
}

// TestShellSignals checks SIGTERM and SIGKILL at a step and during a sleep,
// and "trap" ignoring or handling SIGTERM. The signals are sent when the
// script prints "ready" (after its traps are set), so every case is
// deterministic: the script meets them at the next checkpoint or sleep.
func TestShellSignals(t *testing.T) {
	for _, tc := range []struct {
		script  string
		signals []string
		stdout  string
		exit    int
		signal  string
	}{
		{"echo ready; echo never", []string{SigTERM}, "", 143, SigTERM},
		{"echo ready; echo never", []string{SigKILL}, "", 137, SigKILL},
		{"echo ready; sleep 3600; echo never", []string{SigTERM}, "", 143, SigTERM},
		{"trap '' TERM; echo ready; sleep 0.05; echo survived", []string{SigTERM}, "survived\n", 0, ""},
		{"trap '' TERM; echo ready; sleep 3600", []string{SigTERM, SigKILL}, "", 137, SigKILL},
		{"trap 'echo handled' TERM; echo ready; sleep 0.05; echo after", []string{SigTERM}, "handled\nafter\n", 0, ""},
		{"trap 'echo handled; exit 5' SIGTERM; echo ready; sleep 0.05; echo after", []string{SigTERM}, "handled\n", 5, ""},
		{"trap '' 15; trap - TERM; echo ready; sleep 3600", []string{SigTERM}, "", 143, SigTERM},
		{"trap 'echo bye' EXIT; echo ready; sleep 3600", []string{SigKILL}, "", 137, SigKILL},
	} {
		in := newInterp(nil, "")
		var stdout strings.Builder
		in.out.output = func(isErr bool, s string) {
			switch {
			case isErr:
			case s == "ready\n":
				for _, sig := range tc.signals {
					in.proc.sig.send(sig)
				}
			default:
				stdout.WriteString(s)
			}
		}
		out, err := in.run(context.Background(), tc.script)
		if err != nil || out.Exit != tc.exit || out.Signal != tc.signal || stdout.String() != tc.stdout {
			t.Errorf("%q with %v: stdout %q exit %d signal %q err %v; want %q %d %q",
				tc.script, tc.signals, stdout.String(), out.Exit, out.Signal, err, tc.stdout, tc.exit, tc.signal)
		}
	}
}
