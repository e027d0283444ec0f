package shell

// Processes, as "&", "( list )", sh -c, nohup, setsid and kill need them.
// Every process of a sandbox has a pid from the sandbox's counter and a
// process group; each runs in its own goroutine, and nothing runs on the
// host.

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// TransportBackground labels the events of a process started with "&".
const TransportBackground = "background"

// Process is one entry of a sandbox's process table.
type Process struct {
	pid, pgid uint32
	sig       *signalBox
	// transport is how events name the process (TransportConnect,
	// TransportBackground, TransportStart); "" for the processes events
	// do not report: subshells and foreground programs.
	transport string
	// command is what events say it runs.
	command string
}

// Machine is what a sandbox's shells run on: its file system and its
// process table. Its lock is never held while the Server's is taken.
type Machine struct {
	fs    *sandboxfs.FS
	hooks Hooks

	mu      sync.Mutex
	nextPID uint32
	procs   map[uint32]*Process
}

// Hooks connect a machine to its sandbox. Every hook is optional:
// a machine without them (the language's unit tests) reaches no host,
// never stops, sleeps in real time and runs background processes with a
// background context.
type Hooks struct {
	// Alive reports whether the sandbox still runs (absent: always).
	Alive func() bool
	// Reachable reports whether a connection to host (a name or address,
	// with ":PORT" for a member address) would open (absent: never).
	Reachable func(host string) bool
	// SleepScale is the factor on the wall time of every sleep (absent: 1).
	SleepScale func() float64
	// Launch runs a background process's program in a goroutine, with a
	// context that ends when the sandbox stops running, and reports it.
	Launch func(p *Process, run func(ctx context.Context) (Outcome, error))
	// Signalled reports a signal sent to a reported process.
	Signalled func(p *Process, sig string)
}

// firstPID is the first pid a sandbox hands out; later ones count up.
// [I: pids] Real pids are whatever the VM's kernel assigns.
const firstPID = 1000

func NewMachine(fs *sandboxfs.FS, hooks Hooks) *Machine {
	return &Machine{fs: fs, hooks: hooks, nextPID: firstPID, procs: map[uint32]*Process{}}
}

// FS is the machine's file system.
func (m *Machine) FS() *sandboxfs.FS { return m.fs }

// NewProcess adds a process that leads a group of its own; transport and
// command are how events name it ("" transport: not reported).
func (m *Machine) NewProcess(transport, command string) *Process {
	p := m.spawn(0, true)
	p.transport, p.command = transport, command
	return p
}

// Run runs script as p's program in a new shell with an exported
// environment and a working directory (relative to /root), writing its
// output to output. It returns how the script ended, or ErrTimeout when
// ctx's deadline passed, ErrVanished when the sandbox stopped running, or
// ctx's error when the caller went away.
func (m *Machine) Run(ctx context.Context, p *Process, script string, env map[string]string, cwd string,
	output func(stderr bool, s string),
) (Outcome, error) {
	return m.shell(p, &sink{output: output}, standardFDs(), env, cwd).run(ctx, script)
}

// Signal sends sig (SIGTERM or SIGKILL) to p; its script takes it at its
// next step.
func (p *Process) Signal(sig string) { p.sig.send(sig) }

func (m *Machine) alive() bool             { return m.hooks.Alive == nil || m.hooks.Alive() }
func (m *Machine) reachable(h string) bool { return m.hooks.Reachable != nil && m.hooks.Reachable(h) }

// scaleSleep is how long a sleep of d takes on the wall clock.
func (m *Machine) scaleSleep(d time.Duration) time.Duration {
	if m.hooks.SleepScale == nil {
		return d
	}
	return time.Duration(float64(d) * m.hooks.SleepScale())
}

// spawn adds a process in group pgid, or leading a group of its own.
func (m *Machine) spawn(pgid uint32, leader bool) *Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &Process{pid: m.nextPID, pgid: pgid, sig: newSignalBox()}
	m.nextPID++
	if leader {
		p.pgid = p.pid
	}
	m.procs[p.pid] = p
	return p
}

// exit removes an ended process.
func (m *Machine) exit(p *Process) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.procs[p.pid] == p {
		delete(m.procs, p.pid)
	}
}

// setsid makes p the leader of a new process group.
func (m *Machine) setsid(p *Process) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.pgid = p.pid
}

// kill sends sig ("" only tests) to process id, or to every process of
// group id; it reports whether any matched. Parents (lower pids) get the
// signal first, so that a shell killed with its children never sees a
// child end before its own signal is pending.
func (m *Machine) kill(id uint32, group bool, sig string) bool {
	m.mu.Lock()
	var hit []*Process
	for _, p := range m.procs {
		if (group && p.pgid == id) || (!group && p.pid == id) {
			hit = append(hit, p)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(hit, func(a, b *Process) int { return int(a.pid) - int(b.pid) })
	if sig != "" {
		for _, p := range hit {
			p.sig.send(sig)
			if m.hooks.Signalled != nil && p.transport != "" {
				m.hooks.Signalled(p, sig)
			}
		}
	}
	return len(hit) > 0
}

// launch starts a background process's program.
func (m *Machine) launch(p *Process, run func(context.Context) (Outcome, error)) {
	if m.hooks.Launch != nil {
		m.hooks.Launch(p, run)
		return
	}
	go func() { _, _ = run(context.Background()) }()
}

// background starts an and-or list that ends in "&": a child process in
// the shell's group runs it, detached from the request, until its program
// ends, it is killed or the sandbox stops. [I: background-output] What it writes to the
// execution's streams is dropped: the request does not wait for it.
//
// A list holding a construct the mock does not interpret is refused here,
// in the foreground, where its message is read.
func (in *interp) background(ao andOr) int {
	if what, line := listUnsupported(ao); what != "" {
		in.line = line
		in.refuse(what)
	}
	child := in.m.spawn(in.proc.pgid, false)
	child.transport = TransportBackground
	child.command = in.asyncCommand(ao)
	c := in.fork(child)
	c.out = nil
	c.refused = new(atomic.Bool) // nobody reads a background process's status
	for i, e := range c.fds {
		if e.kind == fdStdout || e.kind == fdStderr {
			c.fds[i] = fdEntry{kind: fdNull}
		}
	}
	in.lastBg = child.pid
	// One command is exec'd by the child itself, as bash does: "sh -c" or
	// a subshell is then this process, not a grandchild.
	exec := len(ao.cmds) == 1
	in.m.launch(child, func(ctx context.Context) (Outcome, error) {
		return c.program(ctx, func() {
			if exec {
				c.checkpoint(ctx)
				c.lastExit = c.command(ctx, ao.cmds[0], true)
				return
			}
			c.runAndOr(ctx, ao)
		})
	})
	return 0
}

// asyncCommand is what events say a background list runs: the script of
// "[nohup] [setsid] sh -c SCRIPT", or the list's source text.
func (in *interp) asyncCommand(ao andOr) string {
	if len(ao.cmds) != 1 || ao.cmds[0].isSub {
		return ao.src
	}
	var argv []string
	for _, w := range ao.cmds[0].words {
		if _, _, ok := assignment(w); ok && len(argv) == 0 {
			continue
		}
		argv = append(argv, in.expand(w)...)
	}
	argv = stripWrappers(argv)
	if len(argv) >= 3 && isShell(argv[0]) && argv[1] == "-c" {
		return argv[2]
	}
	return ao.src
}

// stripWrappers drops the nohup and setsid in front of a program.
func stripWrappers(argv []string) []string {
	for len(argv) > 0 {
		switch argv[0] {
		case "nohup":
			argv = argv[1:]
		case "setsid":
			argv = argv[1:]
			for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
				argv = argv[1:]
			}
		default:
			return argv
		}
	}
	return argv
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash":
		return true
	}
	return false
}

// startsProgram reports the commands that run as a process of their own.
// Every other command is interpreted inside the shell's process.
func startsProgram(name string) bool { return isShell(name) || name == "nohup" || name == "setsid" }

// subshell runs "( list )" in a child process (exit leaves only the
// child), or in this process when exec is set.
func (in *interp) subshell(ctx context.Context, c command, exec bool) int {
	if exec {
		in.runList(ctx, c.sub, nil)
		return in.lastExit
	}
	child := in.fork(in.m.spawn(in.proc.pgid, false))
	return in.waitFor(ctx, func() (Outcome, error) {
		return child.program(ctx, func() { child.runList(ctx, c.sub, nil) })
	})
}

// external runs nohup, setsid, sh or bash in a child process, or makes
// this process that program when exec is set.
func (in *interp) external(ctx context.Context, line int, argv []string, exec bool) int {
	if exec {
		return in.execProgram(ctx, line, argv)
	}
	child := in.fork(in.m.spawn(in.proc.pgid, false))
	return in.waitFor(ctx, func() (Outcome, error) {
		return child.program(ctx, func() { child.lastExit = child.execProgram(ctx, line, argv) })
	})
}

// waitFor runs a child's program in a goroutine of its own and waits for
// it as a shell waits for a foreground child: a signal that kills this
// shell ends the wait (the child goes on running); a trapped one is handled
// after the child, at the next step.
func (in *interp) waitFor(ctx context.Context, run func() (Outcome, error)) int {
	done := make(chan struct{})
	var out Outcome
	go func() {
		out, _ = run()
		close(done)
	}()
	for {
		select {
		case <-done:
			// A child stopped by the deadline or the sandbox going away:
			// this shell notices the same at its next checkpoint.
			return out.Exit
		case <-ctx.Done():
			panic(stopScript{err: ctxErr(ctx)})
		case <-in.proc.sig.wakeC():
			in.takeSignals()
		}
	}
}

// execProgram makes this process argv's program: nohup runs the rest,
// setsid makes the process a group leader first, sh and bash run their
// script in a fresh shell of this process; anything else is a command this
// process interprets.
func (in *interp) execProgram(ctx context.Context, line int, argv []string) int {
	for {
		switch {
		case argv[0] == "nohup":
			argv = argv[1:]
			if len(argv) > 0 && argv[0] == "--" {
				argv = argv[1:]
			}
			if len(argv) == 0 {
				in.errorf("nohup: missing operand\n")
				return 125
			}
		case argv[0] == "setsid":
			argv = argv[1:]
			for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
				argv = argv[1:] // -f, -w, --fork, --wait: nothing to do here
			}
			if len(argv) == 0 {
				in.errorf("setsid: no command specified\n")
				return 1
			}
			in.m.setsid(in.proc)
		case isShell(argv[0]):
			return in.execShell(ctx, argv)
		default:
			return in.builtin(ctx, line, argv)
		}
	}
}

// execShell runs "sh -c SCRIPT", "sh FILE" or "sh < FILE" (bash alike; -l
// is accepted and means nothing here) as this process's program: a fresh
// shell whose "$$" is this pid, with the exported environment.
func (in *interp) execShell(ctx context.Context, argv []string) int {
	name, args := argv[0], argv[1:]
	var script string
	haveC := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		opt := args[0]
		args = args[1:]
		if opt == "--" {
			break
		}
		if opt == "--login" {
			continue
		}
		for _, f := range opt[1:] {
			switch f {
			case 'c':
				haveC = true
			case 'l':
			default:
				in.errorf("%s: -%c: the prime-mock shell does not support this option\n", name, f)
				return 2
			}
		}
	}
	switch {
	case haveC && len(args) == 0:
		in.errorf("%s: -c: option requires an argument\n", name)
		return 2
	case haveC:
		script = args[0]
	case len(args) > 0:
		b, err := in.m.fs.ReadFile(in.abs(args[0]))
		if err != nil {
			in.errorf("%s: %s: %v\n", name, args[0], err)
			return 127
		}
		script = string(b)
	default:
		script = string(in.stdin())
	}
	sh := in.m.shell(in.proc, in.out, in.fds.clone(), in.environ(), in.cwd)
	sh.depth, sh.refused = in.depth, in.refused
	out, err := sh.program(ctx, func() { sh.runScript(ctx, script) })
	switch {
	case err != nil:
		panic(stopScript{err: err})
	case out.Signal != "":
		panic(stopScript{out: out}) // the process was killed
	}
	return out.Exit
}

// kill is bash's kill builtin: kill [-s SIG | -SIG] [--] PID|-PGID...
// Signals: TERM (15, the default), KILL (9) and 0 (only tests that the
// process exists).
func (in *interp) kill(line int, args []string) int {
	usage := func() int {
		in.errorf("bash: line %d: kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n", line)
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	sig, spec := SigTERM, ""
	switch a := args[0]; {
	case a == "-s" || a == "-n":
		if len(args) < 2 {
			in.errorf("bash: line %d: kill: %s: option requires an argument\n", line, a)
			return 2
		}
		spec, args = args[1], args[2:]
	case a == "-l" || a == "-L":
		in.write(1, " 9) SIGKILL\t15) SIGTERM\n")
		return 0
	case strings.HasPrefix(a, "-") && a != "--" && len(a) > 1:
		spec, args = a[1:], args[1:]
	}
	if spec != "" {
		var ok bool
		if sig, ok = killSignal(spec); !ok {
			if _, known := signalSpecs[strings.TrimPrefix(strings.ToUpper(spec), "SIG")]; known {
				in.errorf("bash: line %d: kill: %s: prime-mock delivers only TERM, KILL and 0\n", line, spec)
			} else {
				in.errorf("bash: line %d: kill: %s: invalid signal specification\n", line, spec)
			}
			return 1
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return usage()
	}
	code := 0
	for _, t := range args {
		id, group := strings.CutPrefix(t, "-")
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil || n == 0 {
			in.errorf("bash: line %d: kill: %s: arguments must be process or job IDs\n", line, t)
			code = 1
			continue
		}
		if !in.m.kill(uint32(n), group, sig) {
			in.errorf("bash: line %d: kill: (%s) - No such process\n", line, t)
			code = 1
		}
	}
	return code
}

// killSignal reads a signal spec kill delivers ("" is signal 0).
func killSignal(spec string) (string, bool) {
	switch strings.TrimPrefix(strings.ToUpper(spec), "SIG") {
	case "0":
		return "", true
	case "15", "TERM":
		return SigTERM, true
	case "9", "KILL":
		return SigKILL, true
	}
	return "", false
}

// PID is the process's pid.
func (p *Process) PID() uint32 { return p.pid }

// Transport is how events name the process: what newProcess was
// given, TransportBackground for a process started with "&", "" for one
// events do not report (a subshell, a foreground program).
func (p *Process) Transport() string { return p.transport }

// Command is what events say the process runs.
func (p *Process) Command() string { return p.command }
