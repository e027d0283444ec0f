package primemock

// The interpreted shell both gateway transports run instead of anything on
// the host. See the package documentation ("Shell language") for what it
// understands; everything else is an unknown command (exit 127).

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxExecOutputBytes caps each of stdout and stderr of one execution; the
// rest is dropped and a note is appended to stderr. It keeps a runaway
// "repeat" from exhausting memory while leaving room for output-size tests.
const MaxExecOutputBytes = 16 << 20

// defaultWorkDir is the working directory of a command that names none,
// and the base of a relative one. [guess] It is root's home, where a process
// API on a VM typically starts commands; a container's image may differ.
const defaultWorkDir = "/root"

// defaultPath is the PATH every command starts with [guess].
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// wordPart is a piece of a word: literal text, or a variable expansion.
type wordPart struct {
	text    string
	varName string // non-empty for "$NAME", "${NAME}" and "$?"
	quoted  bool   // from inside quotes: never split into fields
}

type word []wordPart

// Redirection targets.
const (
	toStdout = 1
	toStderr = 2
	toNull   = 3
)

// redirect is "[n]>&m", "[n]>FILE" or "&>FILE" (fd 0 means both 1 and 2).
type redirect struct {
	fd     int
	dup    int  // 1 or 2 for ">&m"
	file   bool // a file: /dev/stdout and /dev/stderr, or anything else (discarded)
	target word
}

// command is one simple command of a script.
type command struct {
	words  []word
	redirs []redirect
	// op joins it to the previous command: "" (";" or a newline), "&&"
	// or "||".
	op string
	// line is the script line the command starts on (1-based); logical is
	// the line its list began on (what a syntax error stops).
	line, logical int
}

// syntaxError is bash's refusal of a line: nothing from that line on runs.
type syntaxError struct {
	logical int
	msg     string
}

// parseScript splits a script into commands. Newlines, ";", "&&" and "||"
// outside quotes separate commands; words are split on blanks; single
// quotes keep everything literal; double quotes keep everything literal
// except "$" expansions and the backslash before \ " $ and `; an unquoted
// backslash escapes the next character (a backslash-newline is dropped); an
// unquoted "#" at the start of a word comments out the rest of the line.
func parseScript(src string) ([]command, *syntaxError) {
	var (
		cmds    []command
		cur     command
		words   []word
		w       word
		lit     strings.Builder
		inWord  bool
		line    = 1
		logical = 1
		pending *redirect
		nextOp  string
	)
	rs := []rune(src)
	flushLit := func() {
		if lit.Len() > 0 {
			w = append(w, wordPart{text: lit.String()})
			lit.Reset()
		}
	}
	endWord := func() {
		flushLit()
		if inWord {
			if pending != nil {
				pending.target = w
				cur.redirs = append(cur.redirs, *pending)
				pending = nil
			} else {
				words = append(words, w)
			}
		}
		w, inWord = nil, false
	}
	endCmd := func(op string) *syntaxError {
		endWord()
		if pending != nil {
			return &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `newline'", line)}
		}
		if len(words) == 0 && len(cur.redirs) == 0 {
			if op != "" {
				return &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `%s'", line, op)}
			}
			return nil // an empty command: a blank line or a stray ";"
		}
		cur.words, cur.op = words, nextOp
		cmds = append(cmds, cur)
		cur, words, nextOp = command{line: line, logical: logical}, nil, op
		return nil
	}
	cur = command{line: 1, logical: 1}
	startWord := func() {
		if !inWord {
			inWord = true
			if len(words) == 0 && len(cur.redirs) == 0 && pending == nil {
				cur.line = line
			}
		}
	}
	// expansion parses a "$..." at rs[i] (rs[i] == '$'); it returns the
	// part and the index of its last rune, or ok false for a literal "$".
	expansion := func(i int, quoted bool) (wordPart, int, bool) {
		if i+1 >= len(rs) {
			return wordPart{}, i, false
		}
		switch c := rs[i+1]; {
		case c == '?':
			return wordPart{varName: "?", quoted: quoted}, i + 1, true
		case c == '{':
			j := i + 2
			for j < len(rs) && isNameRune(rs[j], j == i+2) {
				j++
			}
			if j < len(rs) && rs[j] == '}' && j > i+2 {
				return wordPart{varName: string(rs[i+2 : j]), quoted: quoted}, j, true
			}
		case isNameRune(c, true):
			j := i + 1
			for j < len(rs) && isNameRune(rs[j], j == i+1) {
				j++
			}
			return wordPart{varName: string(rs[i+1 : j]), quoted: quoted}, j - 1, true
		}
		return wordPart{}, i, false
	}
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\'':
			startWord()
			flushLit()
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				if rs[j] == '\n' {
					line++
				}
				j++
			}
			if j == len(rs) {
				return cmds, &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: unexpected EOF while looking for matching `''", line)}
			}
			w = append(w, wordPart{text: string(rs[i+1 : j]), quoted: true})
			i = j
		case c == '"':
			startWord()
			flushLit()
			var q strings.Builder
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				switch {
				case rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\\\"$`\n", rs[j+1]):
					j++
					if rs[j] != '\n' {
						q.WriteRune(rs[j])
					} else {
						line++
					}
				case rs[j] == '$':
					if p, end, ok := expansion(j, true); ok {
						w = append(w, wordPart{text: q.String(), quoted: true})
						q.Reset()
						w = append(w, p)
						j = end
						continue
					}
					q.WriteRune('$')
				default:
					if rs[j] == '\n' {
						line++
					}
					q.WriteRune(rs[j])
				}
			}
			if j == len(rs) {
				return cmds, &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: unexpected EOF while looking for matching `\"'", line)}
			}
			w = append(w, wordPart{text: q.String(), quoted: true})
			i = j
		case c == '\\':
			if i+1 < len(rs) {
				i++
				if rs[i] == '\n' { // a line continuation
					line++
					continue
				}
				startWord()
				lit.WriteRune(rs[i])
			}
		case c == '$':
			startWord()
			if p, end, ok := expansion(i, false); ok {
				flushLit()
				w = append(w, p)
				i = end
			} else {
				lit.WriteRune('$')
			}
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == '\n' || c == ';':
			if err := endCmd(""); err != nil {
				return cmds, err
			}
			if c == '\n' {
				line++
				if nextOp == "" { // after "&&" or "||" the list goes on
					logical = line
				}
				cur.line, cur.logical = line, logical
			}
		case (c == '&' || c == '|') && i+1 < len(rs) && rs[i+1] == c:
			op := string([]rune{c, c})
			i++
			if err := endCmd(op); err != nil {
				return cmds, err
			}
		case c == '>' || c == '<' || (c == '&' && i+1 < len(rs) && rs[i+1] == '>'):
			if pending != nil {
				return cmds, &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `%c'", line, c)}
			}
			r := redirect{fd: 1}
			if c == '<' {
				r.fd = -1 // input: ignored (no stdin)
			}
			switch {
			case c == '&':
				r.fd = 0
				i++
			case inWord && len(w) == 0 && (lit.String() == "1" || lit.String() == "2"):
				// "2>" and "1>": the digit right before ">" is the fd.
				r.fd = int(lit.String()[0] - '0')
				lit.Reset()
				inWord = false
			default:
				endWord()
			}
			if i+1 < len(rs) && rs[i+1] == '>' && c != '<' {
				i++ // ">>" appends: the same to a mock without files
			}
			if c != '&' && r.fd > 0 && i+1 < len(rs) && rs[i+1] == '&' {
				j := i + 2
				if j < len(rs) && (rs[j] == '1' || rs[j] == '2') && (j+1 == len(rs) || strings.ContainsRune(" \t\r\n;&|", rs[j+1])) {
					r.dup = int(rs[j] - '0')
					cur.redirs = append(cur.redirs, r)
					i = j
					continue
				}
				return cmds, &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `&'", line)}
			}
			r.file = true
			pending = &r
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			startWord()
			lit.WriteRune(c)
		}
	}
	if err := endCmd(""); err != nil {
		return cmds, err
	}
	if nextOp != "" {
		return cmds, &syntaxError{logical: logical, msg: fmt.Sprintf("bash: -c: line %d: syntax error: unexpected end of file", line)}
	}
	return cmds, nil
}

func isNameRune(r rune, first bool) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (!first && r >= '0' && r <= '9')
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !isNameRune(r, i == 0) {
			return false
		}
	}
	return true
}

// Why a script stopped before finishing.
var (
	errExecTimeout = errors.New("command timed out")
	errVanished    = errors.New("sandbox vanished")
)

// Signal names as the events and SendSignal spell them.
const (
	sigTERM = "SIGTERM"
	sigKILL = "SIGKILL"
)

// signalBox carries signals to a running script.
type signalBox struct {
	mu      sync.Mutex
	pending []string
	wake    chan struct{}
}

func newSignalBox() *signalBox { return &signalBox{wake: make(chan struct{}, 1)} }

func (b *signalBox) send(sig string) {
	b.mu.Lock()
	b.pending = append(b.pending, sig)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take returns the next signal: SIGKILL first, then SIGTERM, "" for none.
func (b *signalBox) take() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return ""
	}
	sig := b.pending[0]
	if slices.Contains(b.pending, sigKILL) {
		sig = sigKILL
		b.pending = nil
	} else {
		b.pending = b.pending[1:]
	}
	return sig
}

func (b *signalBox) wakeC() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.wake
}

// capped counts one output stream and drops what is beyond
// MaxExecOutputBytes.
type capped struct {
	n         int
	truncated bool
}

// interp runs a script against the mock's model of a sandbox.
type interp struct {
	// reachable decides probe/curl; alive reports whether the sandbox still
	// runs (checked before every command).
	reachable func(host string) bool
	alive     func() bool
	// output receives what the script writes (after capping).
	output func(stderr bool, s string)
	// sig delivers SendSignal's signals (nil: none arrive).
	sig *signalBox

	stdout, stderr capped
	vars           map[string]string
	exported       map[string]bool
	cwd            string
	lastExit       int
	// traps maps "TERM" and "EXIT" to their action; "" ignores the signal,
	// an absent key is the default disposition.
	traps       map[string]string
	pendingTrap bool
	// cmdEnv is the temporary environment of "NAME=value command".
	cmdEnv map[string]string
	// redir maps fd 1 and 2 of the running command to their target.
	redir [3]int
	depth int
}

// newInterp prepares a shell with an exported environment and a working
// directory (relative ones are resolved against defaultWorkDir).
func newInterp(env map[string]string, cwd string) *interp {
	in := &interp{vars: map[string]string{}, exported: map[string]bool{}, traps: map[string]string{}}
	for k, v := range map[string]string{"HOME": defaultWorkDir, "PATH": defaultPath} {
		in.vars[k], in.exported[k] = v, true
	}
	for k, v := range env {
		in.vars[k], in.exported[k] = v, true
	}
	in.cwd = resolveDir(defaultWorkDir, cwd)
	in.vars["PWD"], in.exported["PWD"] = in.cwd, true
	in.redir = [3]int{0, toStdout, toStderr}
	return in
}

func resolveDir(base, dir string) string {
	if dir == "" {
		return base
	}
	if !strings.HasPrefix(dir, "/") {
		dir = base + "/" + dir
	}
	return path.Clean(dir)
}

// outcome is how a script ended.
type outcome struct {
	exit int
	// signal is set when a signal stopped the script (exit 128+n).
	signal string
}

// stopScript unwinds the interpreter: exit, a signal, or an error.
type stopScript struct {
	out     outcome
	err     error
	stopped bool
}

func (in *interp) write(fd int, s string) {
	if s == "" {
		return
	}
	switch in.redir[fd] {
	case toNull:
		return
	case toStdout:
		in.emit(false, s)
	case toStderr:
		in.emit(true, s)
	}
}

// full reports whether writing to fd is pointless: its target is discarded
// or already truncated.
func (in *interp) full(fd int) bool {
	switch in.redir[fd] {
	case toStdout:
		return in.stdout.truncated
	case toStderr:
		return in.stderr.truncated
	}
	return true
}

func (in *interp) emit(stderr bool, s string) {
	c := &in.stdout
	if stderr {
		c = &in.stderr
	}
	if room := MaxExecOutputBytes - c.n; len(s) > room {
		s, c.truncated = s[:max(room, 0)], true
	}
	if s == "" {
		return
	}
	c.n += len(s)
	if in.output != nil {
		in.output(stderr, s)
	}
}

func (in *interp) errorf(format string, args ...any) { in.write(2, fmt.Sprintf(format, args...)) }

// run executes the script, then its EXIT trap. It returns how it ended, or
// errExecTimeout when ctx's deadline passed, errVanished when the sandbox
// stopped running, or ctx's error when the caller went away.
func (in *interp) run(ctx context.Context, script string) (outcome, error) {
	defer in.finish()
	st := in.protected(ctx, script)
	if st.err != nil || st.out.signal != "" {
		return st.out, st.err
	}
	if action, ok := in.traps["EXIT"]; ok && action != "" {
		delete(in.traps, "EXIT")
		in.lastExit = st.out.exit
		trap := in.protected(ctx, action)
		// The trap keeps the script's status unless it exits, fails or is
		// signalled itself.
		if trap.stopped {
			return trap.out, trap.err
		}
	}
	return st.out, nil
}

// protected runs a script and turns the interpreter's unwinding into a
// result; stopped reports an "exit", a signal or an error.
func (in *interp) protected(ctx context.Context, script string) (st stopScript) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(stopScript)
			if !ok {
				panic(r)
			}
			s.stopped = true
			st = s
		}
	}()
	in.runScript(ctx, script)
	return stopScript{out: outcome{exit: in.lastExit}}
}

func (in *interp) finish() {
	if in.stdout.truncated || in.stderr.truncated {
		note := fmt.Sprintf("\n[prime-mock: output truncated at %d bytes]\n", MaxExecOutputBytes)
		if in.output != nil {
			in.output(true, note)
		}
	}
}

// runScript runs commands until the end, "exit", a signal or an error
// (the last three unwind with a stopScript panic).
func (in *interp) runScript(ctx context.Context, script string) {
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > 16 {
		in.errorf("bash: maximum trap nesting level exceeded\n")
		panic(stopScript{out: outcome{exit: 2}})
	}
	cmds, synErr := parseScript(script)
	for _, c := range cmds {
		if synErr != nil && c.logical >= synErr.logical {
			break
		}
		if (c.op == "&&" && in.lastExit != 0) || (c.op == "||" && in.lastExit == 0) {
			continue
		}
		in.checkpoint(ctx)
		in.lastExit = in.command(ctx, c)
		in.checkpoint(ctx)
	}
	if synErr != nil {
		in.redir = [3]int{0, toStdout, toStderr}
		in.errorf("%s\n", synErr.msg)
		panic(stopScript{out: outcome{exit: 2}})
	}
}

// checkpoint is where a script notices the world: a passed deadline, a gone
// sandbox or caller, and signals (at each step, as a shell does between
// commands).
func (in *interp) checkpoint(ctx context.Context) {
	if ctx.Err() != nil {
		panic(stopScript{err: ctxErr(ctx)})
	}
	if in.alive != nil && !in.alive() {
		panic(stopScript{err: errVanished})
	}
	for {
		sig := in.sig.take()
		if sig == "" {
			break
		}
		in.deliver(sig)
	}
	if in.pendingTrap {
		in.pendingTrap = false
		if action := in.traps["TERM"]; action != "" {
			saved := in.lastExit
			in.runScript(ctx, action)
			in.lastExit = saved
		}
	}
}

// deliver applies a signal: SIGKILL always stops the script with 137; SIGTERM
// stops it with 143 unless a trap ignores it ("trap ” TERM") or handles it
// (the handler runs at the next step, after the running command, as bash
// runs traps after the foreground command).
func (in *interp) deliver(sig string) {
	if sig == sigKILL {
		panic(stopScript{out: outcome{exit: 128 + 9, signal: sigKILL}})
	}
	action, trapped := in.traps["TERM"]
	switch {
	case !trapped:
		panic(stopScript{out: outcome{exit: 128 + 15, signal: sigTERM}})
	case action != "":
		in.pendingTrap = true
	}
}

func ctxErr(ctx context.Context) error {
	if c := context.Cause(ctx); errors.Is(c, errVanished) {
		return errVanished
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errExecTimeout
	}
	return ctx.Err()
}

// lookup is a variable's value ("$?" included); unset is empty.
func (in *interp) lookup(name string) string {
	if name == "?" {
		return strconv.Itoa(in.lastExit)
	}
	return in.vars[name]
}

// expand turns a word into fields: quoted parts stay whole, unquoted
// expansions are split on blanks, and a word made only of unquoted
// expansions that are empty disappears.
func (in *interp) expand(w word) []string {
	var (
		fields []string
		cur    strings.Builder
		have   bool
	)
	finish := func() {
		if have {
			fields = append(fields, cur.String())
		}
		cur.Reset()
		have = false
	}
	for _, p := range w {
		if p.varName == "" {
			cur.WriteString(p.text)
			have = have || p.quoted || p.text != ""
			continue
		}
		val := in.lookup(p.varName)
		if p.quoted {
			cur.WriteString(val)
			have = true
			continue
		}
		pieces := strings.Fields(val)
		if len(pieces) > 0 && strings.IndexAny(val[:1], " \t\n") == 0 {
			finish()
		}
		for i, piece := range pieces {
			if i > 0 {
				finish()
			}
			cur.WriteString(piece)
			have = true
		}
		if len(pieces) > 0 && strings.ContainsAny(val[len(val)-1:], " \t\n") {
			finish()
		}
	}
	finish()
	return fields
}

// expandOne expands a word without field splitting (assignment values,
// redirection targets).
func (in *interp) expandOne(w word) string {
	var b strings.Builder
	for _, p := range w {
		if p.varName != "" {
			b.WriteString(in.lookup(p.varName))
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// assignment splits "NAME=value" (an unquoted NAME= prefix).
func assignment(w word) (string, word, bool) {
	if len(w) == 0 || w[0].quoted || w[0].varName != "" {
		return "", nil, false
	}
	name, rest, found := strings.Cut(w[0].text, "=")
	if !found || !validName(name) {
		return "", nil, false
	}
	value := append(word{{text: rest}}, w[1:]...)
	return name, value, true
}

// command runs one simple command and returns its exit code.
func (in *interp) command(ctx context.Context, c command) int {
	in.redir = [3]int{0, toStdout, toStderr}
	for _, r := range c.redirs {
		target := 0
		switch {
		case r.fd < 0:
			continue
		case r.dup != 0:
			target = in.redir[r.dup]
		case r.file:
			switch in.expandOne(r.target) {
			case "/dev/stdout":
				target = toStdout
			case "/dev/stderr":
				target = toStderr
			default:
				target = toNull // no filesystem: what goes to a file is dropped
			}
		}
		if r.fd == 0 {
			in.redir[1], in.redir[2] = target, target
		} else {
			in.redir[r.fd] = target
		}
	}
	defer func() { in.redir = [3]int{0, toStdout, toStderr} }()

	words := c.words
	in.cmdEnv = nil
	var assigns [][2]string
	for len(words) > 0 {
		name, value, ok := assignment(words[0])
		if !ok {
			break
		}
		assigns = append(assigns, [2]string{name, in.expandOne(value)})
		words = words[1:]
	}
	var argv []string
	for _, w := range words {
		argv = append(argv, in.expand(w)...)
	}
	if len(argv) == 0 {
		for _, a := range assigns {
			in.vars[a[0]] = a[1]
		}
		return 0
	}
	if len(assigns) > 0 {
		in.cmdEnv = map[string]string{}
		for _, a := range assigns {
			in.cmdEnv[a[0]] = a[1]
		}
		defer func() { in.cmdEnv = nil }()
	}
	return in.builtin(ctx, c.line, argv)
}

// builtin runs a command by name.
func (in *interp) builtin(ctx context.Context, line int, argv []string) int {
	name, args := argv[0], argv[1:]
	switch name {
	case "true", ":":
		return 0
	case "false":
		return 1
	case "exit":
		code := in.lastExit
		if len(args) > 0 {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				in.errorf("bash: line %d: exit: %s: numeric argument required\n", line, args[0])
				code = 2
			} else {
				code = ((n % 256) + 256) % 256
			}
		}
		in.lastExit = code
		panic(stopScript{out: outcome{exit: code}})
	case "echo":
		newline := "\n"
		if len(args) > 0 && args[0] == "-n" {
			newline, args = "", args[1:]
		}
		in.write(1, strings.Join(args, " ")+newline)
		return 0
	case "sleep":
		return in.sleep(ctx, args)
	case "probe":
		if len(args) == 0 {
			in.errorf("probe: usage: probe HOST\n")
			return 2
		}
		return in.connect(args[0])
	case "curl":
		host, ok := curlHost(args)
		if !ok {
			in.errorf("curl: (2) no URL specified\n")
			return 2
		}
		if host == "" {
			in.errorf("curl: (3) URL rejected: No host part in the URL\n")
			return 3
		}
		return in.connect(host)
	case "repeat":
		if len(args) == 0 {
			in.errorf("repeat: usage: repeat N TEXT\n")
			return 2
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			in.errorf("repeat: invalid count %q\n", args[0])
			return 2
		}
		text := strings.Join(args[1:], " ") + "\n"
		// Written in batches of about 64 KiB, and bounded by the cap, not
		// by n: a huge n costs nothing extra.
		per := max(1, (64<<10)/len(text))
		for done := 0; done < n && !in.full(1); done += per {
			in.write(1, strings.Repeat(text, min(per, n-done)))
		}
		return 0
	case "pwd":
		in.write(1, in.cwd+"\n")
		return 0
	case "cd":
		if len(args) > 1 {
			in.errorf("bash: line %d: cd: too many arguments\n", line)
			return 1
		}
		dir := in.vars["HOME"]
		if len(args) == 1 {
			dir = args[0]
		}
		if dir == "" {
			return 0
		}
		// No filesystem: every directory exists.
		in.cwd = resolveDir(in.cwd, dir)
		in.vars["PWD"] = in.cwd
		return 0
	case "export":
		return in.export(line, args)
	case "printenv":
		return in.printenv(args)
	case "trap":
		return in.trap(line, args)
	}
	in.errorf("bash: line %d: %s: command not found\n", line, name)
	return 127
}

func (in *interp) sleep(ctx context.Context, args []string) int {
	if len(args) == 0 {
		in.errorf("sleep: missing operand\n")
		return 1
	}
	d, ok := parseSleep(args[0])
	if !ok {
		in.errorf("sleep: invalid time interval %q\n", args[0])
		return 1
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return 0
		case <-ctx.Done():
			panic(stopScript{err: ctxErr(ctx)})
		case <-in.sig.wakeC():
			for {
				sig := in.sig.take()
				if sig == "" {
					break
				}
				in.deliver(sig)
			}
		}
	}
}

func (in *interp) export(line int, args []string) int {
	if len(args) == 0 {
		for _, k := range in.exportedNames() {
			in.write(1, fmt.Sprintf("declare -x %s=%q\n", k, in.vars[k]))
		}
		return 0
	}
	code := 0
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		if !validName(name) {
			in.errorf("bash: line %d: export: `%s': not a valid identifier\n", line, a)
			code = 1
			continue
		}
		if hasValue {
			in.vars[name] = value
		}
		in.exported[name] = true
	}
	return code
}

func (in *interp) exportedNames() []string {
	var names []string
	for k := range in.exported {
		if _, set := in.vars[k]; set {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// environ is the environment a command sees: exported variables plus its
// temporary assignments.
func (in *interp) environ() map[string]string {
	env := map[string]string{}
	for _, k := range in.exportedNames() {
		env[k] = in.vars[k]
	}
	for k, v := range in.cmdEnv {
		env[k] = v
	}
	return env
}

func (in *interp) printenv(args []string) int {
	env := in.environ()
	if len(args) == 0 {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			in.write(1, k+"="+env[k]+"\n")
		}
		return 0
	}
	code := 0
	for _, a := range args {
		v, ok := env[a]
		if !ok {
			code = 1
			continue
		}
		in.write(1, v+"\n")
	}
	return code
}

// signalSpecs maps the specs trap accepts to a canonical name.
var signalSpecs = map[string]string{
	"0": "EXIT", "EXIT": "EXIT", "1": "HUP", "HUP": "HUP", "2": "INT", "INT": "INT",
	"3": "QUIT", "QUIT": "QUIT", "9": "KILL", "KILL": "KILL", "10": "USR1", "USR1": "USR1",
	"12": "USR2", "USR2": "USR2", "13": "PIPE", "PIPE": "PIPE", "14": "ALRM", "ALRM": "ALRM",
	"15": "TERM", "TERM": "TERM", "ERR": "ERR", "DEBUG": "DEBUG", "RETURN": "RETURN",
}

// trap sets "trap ACTION SIGSPEC...": ACTION "" ignores, "-" (or a lone
// SIGSPEC) restores the default, anything else is run when the signal
// arrives. Only TERM and EXIT ever fire in the mock.
func (in *interp) trap(line int, args []string) int {
	if len(args) == 0 {
		return 0
	}
	action, specs := args[0], args[1:]
	if len(args) == 1 {
		action, specs = "-", args
	}
	code := 0
	for _, s := range specs {
		name, ok := signalSpecs[strings.TrimPrefix(strings.ToUpper(s), "SIG")]
		if !ok {
			in.errorf("bash: line %d: trap: %s: invalid signal specification\n", line, s)
			code = 1
			continue
		}
		if action == "-" {
			delete(in.traps, name)
		} else {
			in.traps[name] = action
		}
	}
	return code
}

// connect is the outcome of opening a connection to host: exit 0, or curl's
// "couldn't connect" exit 7.
func (in *interp) connect(host string) int {
	if in.reachable != nil && in.reachable(host) {
		return 0
	}
	in.errorf("curl: (7) Failed to connect to %s port 443 after 0 ms: Couldn't connect to server\n", host)
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
