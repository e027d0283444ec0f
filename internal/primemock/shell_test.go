package primemock

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
		{"a && b; c", "[a] &&[b] [c]"},
		{`echo "a b;c" 'd && e'`, "[echo a b;c d && e]"},
		{`echo a\ b "x\"y" 'q\n'`, `[echo a b x"y q\n]`},
		{"  \n;; echo x  \n", "[echo x]"},
		{"echo x >&2", "[echo x >&2]"},
		{"a&&b", "[a] &&[b]"},
		{"echo a&b", "[echo a&b]"},
	} {
		var parts []string
		for _, st := range parseScript(tc.src) {
			p := fmt.Sprint(st.words)
			if st.andIf {
				p = "&&" + p
			}
			parts = append(parts, p)
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("parseScript(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

func runScript(t *testing.T, script string, timeout time.Duration) (string, string, int, error) {
	t.Helper()
	in := &interp{
		reachable: func(host string) bool { return host == "ok.example" || host == "10.0.0.1" },
		alive:     func() bool { return true },
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	code, err := in.run(ctx, script)
	return in.stdout.b.String(), in.stderr.b.String(), code, err
}

func TestExecLanguage(t *testing.T) {
	for _, tc := range []struct {
		script         string
		stdout, stderr string
		exit           int
	}{
		{"echo hello world", "hello world\n", "", 0},
		{"echo -n x; echo y", "xy\n", "", 0},
		{"echo oops >&2", "", "oops\n", 0},
		{"exit 3", "", "", 3},
		{"exit 256", "", "", 0},
		{"exit -1", "", "", 255},
		{"exit nope", "", "exit: nope: numeric argument required\n", 2},
		{"echo a; exit 4; echo b", "a\n", "", 4},
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
		{"ls -la /; uname -a", "", "", 0},
		{"sleep 0.01 && echo done", "done\n", "", 0},
		{"sleep soon", "", "sleep: invalid time interval \"soon\"\n", 1},
	} {
		stdout, stderr, exit, err := runScript(t, tc.script, 5*time.Second)
		if err != nil || stdout != tc.stdout || stderr != tc.stderr || exit != tc.exit {
			t.Errorf("%q: stdout %q stderr %q exit %d err %v\nwant stdout %q stderr %q exit %d",
				tc.script, stdout, stderr, exit, err, tc.stdout, tc.stderr, tc.exit)
		}
	}
}

func TestExecLanguageLimits(t *testing.T) {
	if _, _, _, err := runScript(t, "echo a; sleep 10", 30*time.Millisecond); !errors.Is(err, errExecTimeout) {
		t.Errorf("sleep past the timeout: %v, want errExecTimeout", err)
	}
	stdout, stderr, exit, err := runScript(t, "repeat 100000000 0123456789abcdef", 5*time.Second)
	if err != nil || exit != 0 || len(stdout) != MaxExecOutputBytes || !strings.Contains(stderr, "truncated") {
		t.Errorf("huge repeat: %d bytes, stderr %q, exit %d, err %v", len(stdout), stderr, exit, err)
	}
	in := &interp{reachable: func(string) bool { return true }, alive: func() bool { return false }}
	if _, err := in.run(context.Background(), "echo x"); !errors.Is(err, errVanished) {
		t.Errorf("a stopped sandbox: %v", err)
	}
}
