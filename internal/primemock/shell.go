package primemock

// The interpreted shell both gateway transports run instead of anything on
// the host. See the package documentation ("Shell language") for what it
// understands; everything else is an unknown command (exit 127).

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

// sink is an execution's two output streams, shared by every process of
// its foreground tree. Writes after close (an orphaned child still running
// after its execution was reported) are dropped.
type sink struct {
	mu             sync.Mutex
	output         func(stderr bool, s string)
	stdout, stderr capped
	closed         bool
}

func (o *sink) emit(stderr bool, s string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := &o.stdout
	if stderr {
		c = &o.stderr
	}
	if room := MaxExecOutputBytes - c.n; len(s) > room {
		s, c.truncated = s[:max(room, 0)], true
	}
	if s == "" || o.closed {
		return
	}
	c.n += len(s)
	if o.output != nil {
		o.output(stderr, s)
	}
}

func (o *sink) truncated(stderr bool) bool {
	if o == nil {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if stderr {
		return o.stderr.truncated
	}
	return o.stdout.truncated
}

// close ends the streams, with a note on stderr when output was dropped.
func (o *sink) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if (o.stdout.truncated || o.stderr.truncated) && o.output != nil {
		o.output(true, fmt.Sprintf("\n[prime-mock: output truncated at %d bytes]\n", MaxExecOutputBytes))
	}
	o.closed = true
}

// What a file descriptor refers to.
type fdKind uint8

const (
	fdClosed fdKind = iota
	fdStdout        // the execution's stdout stream
	fdStderr        // the execution's stderr stream
	fdNull          // /dev/null
	fdFile          // a file open for writing
	fdInput         // a file open for reading: its content when opened
)

type fdEntry struct {
	kind fdKind
	file *openFile
	data []byte
}

// maxFD bounds the descriptors a script can name (0-9, as bash's
// redirections write them).
const maxFD = 10

type fdTable [maxFD]fdEntry

// clone is a copy that holds its own references to open files.
func (t *fdTable) clone() fdTable {
	c := *t
	for _, e := range c {
		if e.kind == fdFile {
			e.file.dup()
		}
	}
	return c
}

func (t *fdTable) closeAll() {
	for i, e := range t {
		if e.kind == fdFile {
			e.file.close()
		}
		t[i] = fdEntry{}
	}
}

// set stores e (whose file reference it takes over) in fd, closing what
// was there.
func (t *fdTable) set(fd int, e fdEntry) {
	old := t[fd]
	t[fd] = e
	if old.kind == fdFile {
		old.file.close()
	}
}

func (t *fdTable) dupOf(fd int) fdEntry {
	e := t[fd]
	if e.kind == fdFile {
		e.file.dup()
	}
	return e
}

func standardFDs() fdTable {
	var t fdTable
	t[0], t[1], t[2] = fdEntry{kind: fdInput}, fdEntry{kind: fdStdout}, fdEntry{kind: fdStderr}
	return t
}

// interp is one shell process: it runs a script against the mock's model
// of a sandbox (its machine: file system and process table).
type interp struct {
	m    *machine
	proc *process
	out  *sink
	fds  fdTable

	vars     map[string]string
	exported map[string]bool
	cwd      string
	lastExit int
	// shellPID is "$$": the pid of the shell (a subshell keeps its
	// parent's, as in bash); lastBg is "$!".
	shellPID, lastBg uint32
	// traps maps "TERM" and "EXIT" to their action; "" ignores the signal,
	// an absent key is the default disposition.
	traps       map[string]string
	pendingTrap bool
	// cmdEnv is the temporary environment of "NAME=value command".
	cmdEnv map[string]string
	depth  int
}

// newInterp prepares a shell process on a machine of its own (for tests of
// the language), with an exported environment and a working directory.
func newInterp(env map[string]string, cwd string) *interp {
	m := newMachine(newFileSystem(newBlobStore(), "prime-mock", nil))
	return m.shell(m.spawn(0, true), &sink{}, standardFDs(), env, cwd)
}

// shell prepares a shell process p with an exported environment and a
// working directory (relative ones are resolved against defaultWorkDir).
// It takes over fds.
func (m *machine) shell(p *process, out *sink, fds fdTable, env map[string]string, cwd string) *interp {
	in := &interp{m: m, proc: p, out: out, fds: fds, vars: map[string]string{}, exported: map[string]bool{},
		traps: map[string]string{}, shellPID: p.pid}
	for k, v := range map[string]string{"HOME": defaultWorkDir, "PATH": defaultPath} {
		in.vars[k], in.exported[k] = v, true
	}
	for k, v := range env {
		in.vars[k], in.exported[k] = v, true
	}
	in.cwd = resolveDir(defaultWorkDir, cwd)
	in.vars["PWD"], in.exported["PWD"] = in.cwd, true
	return in
}

// fork is a copy of the shell for a child process p (a subshell, or the
// process an external command runs in): variables, working directory,
// descriptors; traps that ignore a signal are kept, others reset (bash).
func (in *interp) fork(p *process) *interp {
	c := &interp{
		m: in.m, proc: p, out: in.out, fds: in.fds.clone(),
		vars: maps.Clone(in.vars), exported: maps.Clone(in.exported), cwd: in.cwd,
		lastExit: in.lastExit, shellPID: in.shellPID, lastBg: in.lastBg, traps: map[string]string{},
		depth: in.depth,
	}
	for k, v := range in.traps {
		if v == "" && k != "EXIT" {
			c.traps[k] = v
		}
	}
	for k, v := range in.cmdEnv {
		c.vars[k], c.exported[k] = v, true
	}
	return c
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

// abs resolves a path the script names against its working directory.
func (in *interp) abs(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Clean(in.cwd + "/" + p)
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
	if s == "" || fd < 0 || fd >= maxFD {
		return
	}
	switch e := in.fds[fd]; e.kind {
	case fdStdout:
		in.out.emit(false, s)
	case fdStderr:
		in.out.emit(true, s)
	case fdFile:
		_ = e.file.write([]byte(s))
	}
}

func (in *interp) writeBytes(fd int, b []byte) {
	if len(b) == 0 {
		return
	}
	if e := in.fds[fd]; e.kind == fdFile {
		_ = e.file.write(b)
		return
	}
	in.write(fd, string(b))
}

// full reports whether writing to fd is pointless: its target is discarded,
// already truncated or a file at its size limit.
func (in *interp) full(fd int) bool {
	switch e := in.fds[fd]; e.kind {
	case fdStdout:
		return in.out.truncated(false)
	case fdStderr:
		return in.out.truncated(true)
	case fdFile:
		return e.file.full()
	}
	return true
}

// stdin is what the command reads: the file redirected to fd 0, or nothing.
func (in *interp) stdin() []byte {
	if e := in.fds[0]; e.kind == fdInput {
		return e.data
	}
	return nil
}

func (in *interp) errorf(format string, args ...any) { in.write(2, fmt.Sprintf(format, args...)) }

// run executes the script, then its EXIT trap, and closes the streams. It
// returns how it ended, or errExecTimeout when ctx's deadline passed,
// errVanished when the sandbox stopped running, or ctx's error when the
// caller went away.
func (in *interp) run(ctx context.Context, script string) (outcome, error) {
	defer in.out.close()
	return in.program(ctx, func() { in.runScript(ctx, script) })
}

// program runs body as this process's program, then its EXIT trap; the
// process then ends (its descriptors are closed, it leaves the table).
func (in *interp) program(ctx context.Context, body func()) (outcome, error) {
	defer func() {
		in.fds.closeAll()
		in.m.exit(in.proc)
	}()
	st := in.protected(body)
	if st.err != nil || st.out.signal != "" {
		return st.out, st.err
	}
	if action, ok := in.traps["EXIT"]; ok && action != "" {
		delete(in.traps, "EXIT")
		in.lastExit = st.out.exit
		trap := in.protected(func() { in.runScript(ctx, action) })
		// The trap keeps the script's status unless it exits, fails or is
		// signalled itself.
		if trap.stopped {
			return trap.out, trap.err
		}
	}
	return st.out, nil
}

// protected runs body and turns the interpreter's unwinding into a result;
// stopped reports an "exit", a signal or an error.
func (in *interp) protected(body func()) (st stopScript) {
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
	body()
	return stopScript{out: outcome{exit: in.lastExit}}
}

// runScript parses and runs a script until the end, "exit", a signal or an
// error (the last three unwind with a stopScript panic).
func (in *interp) runScript(ctx context.Context, script string) {
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > 16 {
		in.errorf("bash: maximum trap nesting level exceeded\n")
		panic(stopScript{out: outcome{exit: 2}})
	}
	list, synErr := parseScript(script)
	in.runList(ctx, list, synErr)
	if synErr != nil {
		in.errorf("%s\n", synErr.msg)
		panic(stopScript{out: outcome{exit: 2}})
	}
}

// runList runs and-or lists, up to the line of a syntax error.
func (in *interp) runList(ctx context.Context, list []andOr, synErr *syntaxError) {
	for _, ao := range list {
		if synErr != nil && ao.logical >= synErr.logical {
			break
		}
		if ao.async {
			in.checkpoint(ctx)
			in.lastExit = in.background(ao)
			in.checkpoint(ctx)
			continue
		}
		in.runAndOr(ctx, ao)
	}
}

func (in *interp) runAndOr(ctx context.Context, ao andOr) {
	for _, c := range ao.cmds {
		if (c.op == "&&" && in.lastExit != 0) || (c.op == "||" && in.lastExit == 0) {
			continue
		}
		in.checkpoint(ctx)
		in.lastExit = in.command(ctx, c, false)
		in.checkpoint(ctx)
	}
}

// checkpoint is where a script notices the world: a passed deadline, a gone
// sandbox or caller, and signals (at each step, as a shell does between
// commands).
func (in *interp) checkpoint(ctx context.Context) {
	if ctx.Err() != nil {
		panic(stopScript{err: ctxErr(ctx)})
	}
	if !in.m.alive() {
		panic(stopScript{err: errVanished})
	}
	in.takeSignals()
	if in.pendingTrap {
		in.pendingTrap = false
		if action := in.traps["TERM"]; action != "" {
			saved := in.lastExit
			in.runScript(ctx, action)
			in.lastExit = saved
		}
	}
}

func (in *interp) takeSignals() {
	for {
		sig := in.proc.sig.take()
		if sig == "" {
			return
		}
		in.deliver(sig)
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

// lookup is a parameter's value ("$?", "$$" and "$!" included); unset is
// empty.
func (in *interp) lookup(name string) string {
	switch name {
	case "?":
		return strconv.Itoa(in.lastExit)
	case "$":
		return strconv.FormatUint(uint64(in.shellPID), 10)
	case "!":
		if in.lastBg == 0 {
			return ""
		}
		return strconv.FormatUint(uint64(in.lastBg), 10)
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

// command runs one command and returns its exit code. With exec set, the
// command is the last thing its process does (an asynchronous list's only
// command): an external command or a subshell then runs in this process
// instead of a child, as bash execs it.
func (in *interp) command(ctx context.Context, c command, exec bool) int {
	if c.negate {
		c.negate = false
		if in.command(ctx, c, exec) == 0 {
			return 1
		}
		return 0
	}
	if len(c.redirs) > 0 {
		saved := in.fds
		in.fds = saved.clone()
		defer func() {
			in.fds.closeAll()
			in.fds = saved
		}()
		for _, r := range c.redirs {
			if !in.redirect(c.line, r) {
				return 1
			}
		}
	}
	if c.isSub {
		return in.subshell(ctx, c, exec)
	}

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
	return in.simple(ctx, c.line, argv, exec)
}

// simple runs a simple command: a builtin in this process, or one of the
// commands that start a program (sh, bash, nohup, setsid) in a child
// process, or in this one when exec is set.
func (in *interp) simple(ctx context.Context, line int, argv []string, exec bool) int {
	if startsProgram(argv[0]) {
		return in.external(ctx, line, argv, exec)
	}
	return in.builtin(ctx, line, argv)
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
		target := resolveDir(in.cwd, dir)
		if fi, err := in.m.fs.stat(target, true); err != nil || !fi.IsDir() {
			if err == nil {
				err = errNotDir
			}
			in.errorf("bash: line %d: cd: %s: %v\n", line, dir, err)
			return 1
		}
		in.cwd = target
		in.vars["PWD"] = in.cwd
		return 0
	case "export":
		return in.export(line, args)
	case "printenv":
		return in.printenv(args)
	case "trap":
		return in.trap(line, args)
	case "kill":
		return in.kill(line, args)
	}
	if run := fileCommand(name); run != nil {
		return run(in, line, args)
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
	t := time.NewTimer(in.m.scaleSleep(d))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return 0
		case <-ctx.Done():
			panic(stopScript{err: ctxErr(ctx)})
		case <-in.proc.sig.wakeC():
			in.takeSignals()
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
	if in.m.reachable(host) {
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
		return curlTarget(u), true
	}
	return "", false
}
