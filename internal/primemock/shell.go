package primemock

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxExecOutputBytes caps each of stdout and stderr of one exec; the rest is
// dropped and a note is appended to stderr. It keeps a runaway "repeat" from
// exhausting memory while leaving room for output-size tests.
const MaxExecOutputBytes = 16 << 20

// step is one command of a script.
type step struct {
	words []string
	// andIf: run only if the previous command exited 0 ("&&").
	andIf bool
}

// parseScript splits a script into commands on newlines, ";" and "&&"
// outside quotes, and each command into words. Quotes and backslashes
// follow the shell: nothing is special inside single quotes; inside double
// quotes a backslash escapes only \ " $ and `.
func parseScript(src string) []step {
	var (
		steps   []step
		words   []string
		word    strings.Builder
		inWord  bool
		quote   rune
		nextAnd bool
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func(and bool) {
		endWord()
		if len(words) > 0 {
			steps = append(steps, step{words: words, andIf: nextAnd})
		}
		words = nil
		nextAnd = and
	}
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				word.WriteRune(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(rs) && strings.ContainsRune("\\\"$`", rs[i+1]):
				i++
				word.WriteRune(rs[i])
			default:
				word.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' { // backslash-newline continues the line
				word.WriteRune(rs[i])
				inWord = true
			}
		case c == '\n' || c == ';':
			endCmd(false)
		case c == '&' && i+1 < len(rs) && rs[i+1] == '&':
			i++
			endCmd(true)
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	endCmd(false)
	return steps
}

// Why a script stopped before finishing.
var (
	errExecTimeout = errors.New("command timed out")
	errVanished    = errors.New("sandbox vanished")
)

// interp runs a parsed script against the mock's model of a sandbox.
type interp struct {
	// reachable decides probe/curl; alive reports whether the sandbox is
	// still RUNNING (checked before every command).
	reachable func(host string) bool
	alive     func() bool

	stdout, stderr capped
}

// capped is a buffer that drops output beyond MaxExecOutputBytes.
type capped struct {
	b         strings.Builder
	truncated bool
}

func (c *capped) write(s string) {
	if room := MaxExecOutputBytes - c.b.Len(); len(s) > room {
		s, c.truncated = s[:max(room, 0)], true
	}
	c.b.WriteString(s)
}

// run executes the script. It returns the exit code, or errExecTimeout when
// ctx's deadline passed, errVanished when the sandbox stopped running, or
// ctx's error when the caller went away.
func (in *interp) run(ctx context.Context, script string) (int, error) {
	exit := 0
	for _, st := range parseScript(script) {
		if st.andIf && exit != 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return -1, ctxErr(ctx)
		}
		if !in.alive() {
			return -1, errVanished
		}
		var stop bool
		var err error
		exit, stop, err = in.command(ctx, st.words)
		if err != nil {
			return -1, err
		}
		if stop {
			break
		}
	}
	in.finish()
	return exit, nil
}

func (in *interp) finish() {
	for _, c := range []*capped{&in.stdout, &in.stderr} {
		if c.truncated {
			fmt.Fprintf(&in.stderr.b, "\n[prime-mock: output truncated at %d bytes]\n", MaxExecOutputBytes)
			return
		}
	}
}

func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errExecTimeout
	}
	return ctx.Err()
}

// command runs one command; stop is true for "exit".
func (in *interp) command(ctx context.Context, w []string) (exit int, stop bool, err error) {
	args := w[1:]
	switch w[0] {
	case "exit":
		if len(args) == 0 {
			return 0, true, nil
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			in.stderr.write(fmt.Sprintf("exit: %s: numeric argument required\n", args[0]))
			return 2, true, nil
		}
		return ((n % 256) + 256) % 256, true, nil
	case "echo":
		out := &in.stdout
		if n := len(args); n > 0 && (args[n-1] == ">&2" || args[n-1] == "1>&2") {
			out, args = &in.stderr, args[:n-1]
		}
		newline := "\n"
		if len(args) > 0 && args[0] == "-n" {
			newline, args = "", args[1:]
		}
		out.write(strings.Join(args, " ") + newline)
		return 0, false, nil
	case "sleep":
		if len(args) == 0 {
			in.stderr.write("sleep: missing operand\n")
			return 1, false, nil
		}
		d, ok := parseSleep(args[0])
		if !ok {
			in.stderr.write(fmt.Sprintf("sleep: invalid time interval %q\n", args[0]))
			return 1, false, nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return 0, false, nil
		case <-ctx.Done():
			return -1, false, ctxErr(ctx)
		}
	case "probe":
		if len(args) == 0 {
			in.stderr.write("probe: usage: probe HOST\n")
			return 2, false, nil
		}
		return in.connect(args[0]), false, nil
	case "curl":
		host, ok := curlHost(args)
		if !ok {
			in.stderr.write("curl: (2) no URL specified\n")
			return 2, false, nil
		}
		if host == "" {
			in.stderr.write("curl: (3) URL rejected: No host part in the URL\n")
			return 3, false, nil
		}
		return in.connect(host), false, nil
	case "repeat":
		if len(args) == 0 {
			in.stderr.write("repeat: usage: repeat N TEXT\n")
			return 2, false, nil
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			in.stderr.write(fmt.Sprintf("repeat: invalid count %q\n", args[0]))
			return 2, false, nil
		}
		line := strings.Join(args[1:], " ") + "\n"
		// Bounded by the cap, not by n: a huge n costs nothing extra.
		for i := 0; i < n && !in.stdout.truncated; i++ {
			in.stdout.write(line)
		}
		return 0, false, nil
	}
	return 0, false, nil
}

// connect is the outcome of opening a connection to host: exit 0, or curl's
// "couldn't connect" exit 7.
func (in *interp) connect(host string) int {
	if in.reachable(host) {
		return 0
	}
	in.stderr.write(fmt.Sprintf("curl: (7) Failed to connect to %s port 443 after 0 ms: Couldn't connect to server\n", host))
	return 7
}

func parseSleep(v string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(v, "s"):
		v = strings.TrimSuffix(v, "s")
	case strings.HasSuffix(v, "m"):
		v, unit = strings.TrimSuffix(v, "m"), time.Minute
	case strings.HasSuffix(v, "h"):
		v, unit = strings.TrimSuffix(v, "h"), time.Hour
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// curlArgFlags are curl options that consume the next word, so it is not
// mistaken for the URL.
var curlArgFlags = map[string]bool{
	"-o": true, "--output": true, "-H": true, "--header": true, "-X": true, "--request": true,
	"-d": true, "--data": true, "--data-raw": true, "--data-binary": true, "-m": true, "--max-time": true,
	"--connect-timeout": true, "-w": true, "--write-out": true, "-u": true, "--user": true,
	"-A": true, "--user-agent": true, "-e": true, "--referer": true, "--retry": true,
	"-x": true, "--proxy": true, "-F": true, "--form": true, "-b": true, "--cookie": true,
	"-c": true, "--cookie-jar": true, "--resolve": true, "-T": true, "--upload-file": true,
}

// curlHost finds the URL among curl's arguments and returns its host; ok is
// false when there is no URL.
func curlHost(args []string) (host string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if curlArgFlags[a] {
				i++
			}
			continue
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a // curl's default scheme
		}
		u, err := url.Parse(a)
		if err != nil {
			return "", true
		}
		return u.Hostname(), true
	}
	return "", false
}
