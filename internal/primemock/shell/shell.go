package shell

// The interpreted shell both gateway transports run instead of anything on
// the host. See the package documentation ("Language") for what it
// understands; a construct it does not interpret is refused
// (ExitUnsupported), an unknown command is exit 127.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync/atomic"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// MaxExecOutputBytes caps each of stdout and stderr of one execution; the
// rest is dropped and a note is appended to stderr. It keeps a runaway
// "repeat" from exhausting memory while leaving room for output-size tests.
const MaxOutputBytes = 16 << 20

// defaultWorkDir is the working directory of a command that names none,
// and the base of a relative one. [I: default-cwd] It is root's home, where a process
// API on a VM typically starts commands; a container's image may differ.
const defaultWorkDir = "/root"

// defaultPath is the PATH every command starts with [I: default-path].
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Why a script stopped before finishing.
var (
	// ErrTimeout: the context's deadline passed.
	ErrTimeout = errors.New("command timed out")
	// ErrVanished: the sandbox stopped running (also the cause a caller
	// gives when it cancels a script because its sandbox went).
	ErrVanished = errors.New("sandbox vanished")
)

// interp is one shell process: it runs a script against the mock's model
// of a sandbox (its machine: file system and process table).
type interp struct {
	m    *Machine
	proc *Process
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
	// opts are the shell's "set" options.
	opts shellOptions
	// refused is set when a shell of this execution met a construct the
	// mock does not interpret: the execution then ends with
	// ExitUnsupported whatever follows. Shared with subshells and the
	// shells they start; a background process gets its own.
	refused *atomic.Bool
	// line is the script line of the command being run (for messages).
	line int
}

// newInterp prepares a shell process on a machine of its own (for tests of
// the language), with an exported environment and a working directory.
func newInterp(env map[string]string, cwd string) *interp {
	m := NewMachine(sandboxfs.New(sandboxfs.NewStore(), "prime-mock", nil), Hooks{})
	return m.shell(m.spawn(0, true), &sink{}, standardFDs(), env, cwd)
}

// shell prepares a shell process p with an exported environment and a
// working directory (relative ones are resolved against defaultWorkDir).
// It takes over fds.
func (m *Machine) shell(p *Process, out *sink, fds fdTable, env map[string]string, cwd string) *interp {
	in := &interp{m: m, proc: p, out: out, fds: fds, vars: map[string]string{}, exported: map[string]bool{},
		traps: map[string]string{}, shellPID: p.pid, refused: new(atomic.Bool)}
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
func (in *interp) fork(p *Process) *interp {
	c := &interp{
		m: in.m, proc: p, out: in.out, fds: in.fds.clone(),
		vars: maps.Clone(in.vars), exported: maps.Clone(in.exported), cwd: in.cwd,
		lastExit: in.lastExit, shellPID: in.shellPID, lastBg: in.lastBg, traps: map[string]string{},
		depth: in.depth, opts: in.opts, refused: in.refused, line: in.line,
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

// Outcome is how a script ended.
type Outcome struct {
	// Exit is the exit status.
	Exit int
	// Signal is set when a signal stopped the script (exit 128+n).
	Signal string
}

// stopScript unwinds the interpreter: exit, a signal, or an error.
type stopScript struct {
	out     Outcome
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
		_ = e.file.Write([]byte(s))
	case fdPipe:
		e.pipe.write([]byte(s))
	}
}

func (in *interp) writeBytes(fd int, b []byte) {
	if len(b) == 0 {
		return
	}
	if e := in.fds[fd]; e.kind == fdFile {
		_ = e.file.Write(b)
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
		return e.file.Full()
	case fdPipe:
		return e.pipe.full()
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
func (in *interp) run(ctx context.Context, script string) (Outcome, error) {
	defer in.out.close()
	out, err := in.program(ctx, func() { in.runScript(ctx, script) })
	if err == nil && out.Signal == "" && in.refused.Load() {
		out.Exit = ExitUnsupported
	}
	return out, err
}

// program runs body as this process's program, then its EXIT trap; the
// process then ends (its descriptors are closed, it leaves the table).
func (in *interp) program(ctx context.Context, body func()) (Outcome, error) {
	defer func() {
		in.fds.closeAll()
		in.m.exit(in.proc)
	}()
	st := in.protected(body)
	if st.err != nil || st.out.Signal != "" {
		return st.out, st.err
	}
	if action, ok := in.traps["EXIT"]; ok && action != "" {
		delete(in.traps, "EXIT")
		in.lastExit = st.out.Exit
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
	return stopScript{out: Outcome{Exit: in.lastExit}}
}

// runScript parses and runs a script until the end, "exit", a signal or an
// error (the last three unwind with a stopScript panic).
func (in *interp) runScript(ctx context.Context, script string) {
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > 16 {
		in.errorf("bash: maximum trap nesting level exceeded\n")
		panic(stopScript{out: Outcome{Exit: 2}})
	}
	list, synErr, warnings := parseWithWarnings(script)
	for _, w := range warnings {
		in.errorf("%s\n", w)
	}
	in.runList(ctx, list, synErr)
	if synErr != nil {
		in.errorf("%s\n", synErr.msg)
		panic(stopScript{out: Outcome{Exit: 2}})
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

// runAndOr runs an and-or list. With errexit ("set -e"), a failure of its
// last command stops the shell, unless that command is negated; failures
// of the commands before it do not, as in bash.
func (in *interp) runAndOr(ctx context.Context, ao andOr) {
	for i, c := range ao.cmds {
		if (c.op == "&&" && in.lastExit != 0) || (c.op == "||" && in.lastExit == 0) {
			continue
		}
		in.checkpoint(ctx)
		in.lastExit = in.command(ctx, c, false)
		in.checkpoint(ctx)
		if in.opts.errexit && in.lastExit != 0 && i == len(ao.cmds)-1 && !c.negate {
			panic(stopScript{out: Outcome{Exit: in.lastExit}})
		}
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
		panic(stopScript{err: ErrVanished})
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
	if sig == SigKILL {
		panic(stopScript{out: Outcome{Exit: 128 + 9, Signal: SigKILL}})
	}
	action, trapped := in.traps["TERM"]
	switch {
	case !trapped:
		panic(stopScript{out: Outcome{Exit: 128 + 15, Signal: SigTERM}})
	case action != "":
		in.pendingTrap = true
	}
}

func ctxErr(ctx context.Context) error {
	if c := context.Cause(ctx); errors.Is(c, ErrVanished) {
		return ErrVanished
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return ctx.Err()
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
// command, a pipeline's stage): an external command or a subshell then
// runs in this process instead of a child, as bash execs it. A command
// that holds a construct the mock does not interpret is refused.
func (in *interp) command(ctx context.Context, c command, exec bool) int {
	in.line = c.line
	if c.negate {
		c.negate = false
		if in.command(ctx, c, exec) == 0 {
			return 1
		}
		return 0
	}
	if len(c.stages) > 0 {
		return in.pipeline(ctx, c)
	}
	if what := c.unsupportedConstruct(); what != "" {
		in.refuse(what)
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
		in.trace(assigns, nil)
		return 0
	}
	if len(assigns) > 0 {
		in.cmdEnv = map[string]string{}
		for _, a := range assigns {
			in.cmdEnv[a[0]] = a[1]
		}
		defer func() { in.cmdEnv = nil }()
	}
	in.trace(assigns, argv)
	return in.simple(ctx, c.line, argv, exec)
}

// simple runs a simple command: a builtin in this process, or one of the
// commands that start a program (sh, bash, nohup, setsid) in a child
// process, or in this one when exec is set.
func (in *interp) simple(ctx context.Context, line int, argv []string, exec bool) int {
	argv[0] = commandName(argv[0])
	if startsProgram(argv[0]) {
		return in.external(ctx, line, argv, exec)
	}
	return in.builtin(ctx, line, argv)
}

// systemBinDirs are where an image's standard commands live; the mock's
// commands answer to those paths too, so a start command such as
// ["/bin/sleep", "infinity"] runs as it does on a real image.
var systemBinDirs = []string{"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}

// commandName is the name the mock knows a command by: a path in one of
// the system bin directories is its base name; anything else is unchanged
// (a script path, or an unknown command, which then fails by its own name).
func commandName(name string) string {
	for _, dir := range systemBinDirs {
		if base, ok := strings.CutPrefix(name, dir); ok && base != "" && !strings.Contains(base, "/") {
			return base
		}
	}
	return name
}
