package primemock

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// TransportConnect labels the executions that arrive on the gateway's
// command session, the one command transport (TransportBackground labels a
// process a command started with "&", TransportStart a sandbox's start
// process).
const TransportConnect = "connect"

// TransportBackground labels the events of a process a command started
// with "&".
const TransportBackground = shell.TransportBackground

// dataChunkBytes bounds one data event: adjacent writes to one stream are
// merged up to this size.
const dataChunkBytes = 64 << 10

// execution is one running script.
type execution struct {
	sb         *sandbox
	transport  string
	pid        uint32
	script     string
	spec       *commandsessionpb.CommandSpec // Connect only, for List
	tag        *string
	appliedGen int64
	proc       *shell.Process
	cancel     context.CancelCauseFunc
	done       chan struct{}
	// Set before done is closed.
	out shell.Outcome
	err error

	// Output on its way to a Connect stream. Nothing is queued once the
	// stream has gone (the process keeps running, its output is lost).
	mu       sync.Mutex
	attached bool
	chunks   []chunk
	notify   chan struct{}
	timedOut bool
}

type chunk struct {
	stderr bool
	data   []byte
}

// write is the interpreter's output sink.
func (x *execution) write(stderr bool, s string) {
	x.mu.Lock()
	if x.attached {
		if n := len(x.chunks); n > 0 && x.chunks[n-1].stderr == stderr && len(x.chunks[n-1].data)+len(s) <= dataChunkBytes {
			x.chunks[n-1].data = append(x.chunks[n-1].data, s...)
		} else {
			x.chunks = append(x.chunks, chunk{stderr: stderr, data: []byte(s)})
		}
	}
	x.mu.Unlock()
	select {
	case x.notify <- struct{}{}:
	default:
	}
}

// take hands the queued output to the stream.
func (x *execution) take() []chunk {
	x.mu.Lock()
	defer x.mu.Unlock()
	c := x.chunks
	x.chunks = nil
	return c
}

// detach is the stream going away; timedOut records that its deadline did it.
func (x *execution) detach(timedOut bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.attached, x.chunks = false, nil
	x.timedOut = x.timedOut || timedOut
}

// environment is what a command starts with: the sandbox's environment_vars,
// then its secrets (real values), then the request's variables, each layer
// overriding the one before. [I: env-precedence: the precedence]
func environment(sb *sandbox, request map[string]string) map[string]string {
	env := maps.Clone(sb.req.EnvironmentVars)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, sb.req.Secrets)
	maps.Copy(env, request)
	return env
}

// launchLocked registers x on a RUNNING sandbox and starts its script as
// a new process (the leader of its own group [I: process-group]); the caller holds
// s.mu and has checked the sandbox. parent bounds the script; a Connect
// process gets a background context, so it outlives its stream. Every execution ends when the sandbox stops running,
// Reset forgets it or Close is called.
func (s *Server) launchLocked(parent context.Context, sb *sandbox, x *execution, env map[string]string, cwd string) {
	x.sb = sb
	x.appliedGen = sb.appliedGen
	x.done = make(chan struct{})
	x.notify = make(chan struct{}, 1)
	p := sb.m.NewProcess(x.transport, x.script)
	x.pid, x.proc = p.PID(), p
	ctx, cancel := context.WithCancelCause(parent)
	x.cancel = cancel
	if sb.execs == nil {
		sb.execs = map[*execution]bool{}
	}
	sb.execs[x] = true
	s.emit(Event{Type: EventCommandStarted, SandboxID: sb.id, Command: x.script, Transport: x.transport,
		PID: x.pid, AppliedGeneration: x.appliedGen})
	if x.transport == TransportConnect {
		s.touch(sb) // a command is activity, and pins the idle clock while it runs
	}

	env = environment(sb, env)
	go func() {
		out, err := sb.m.Run(ctx, p, x.script, env, cwd, x.write)
		s.finishExecution(x, out, err)
		cancel(nil)
	}()
}

// finishExecution records how an execution ended, then closes its done.
func (s *Server) finishExecution(x *execution, out shell.Outcome, err error) {
	sb := x.sb
	s.mu.Lock()
	delete(sb.execs, x)
	x.out, x.err = out, err
	x.mu.Lock()
	timedOut := x.timedOut || errors.Is(err, shell.ErrTimeout)
	x.mu.Unlock()
	if s.sandboxes[sb.id] == sb {
		exit := out.Exit
		if err != nil {
			exit = -1
		}
		s.emit(Event{
			Type: EventCommandExecuted, SandboxID: sb.id, Command: x.script, Transport: x.transport, PID: x.pid,
			ExitCode: exit, AppliedGeneration: x.appliedGen, TimedOut: timedOut,
			Signalled: out.Signal != "", Signal: out.Signal,
		})
		if x.transport == TransportConnect {
			s.touch(sb) // the idle clock restarts when the command ends
		}
	}
	s.mu.Unlock()
	close(x.done)
}

// newMachine gives a new sandbox its file system and process table, wired
// to the server: reachability, liveness, sleep_scale, background processes
// and their events.
func (s *Server) newMachine(sb *sandbox) *shell.Machine {
	// The file system keeps its own lock: it reads the clock the sandbox
	// was created with, not s.opts, which Configure may be replacing.
	clock := s.opts.Now
	now := func() time.Time {
		if clock != nil {
			return clock().UTC()
		}
		return time.Now().UTC()
	}
	return shell.NewMachine(sandboxfs.New(s.blobs, sb.id, now), shell.Hooks{
		Alive: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.sandboxes[sb.id] == sb && sb.status == prime.StatusRunning
		},
		Reachable: func(host string) bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.shellReach(sb, host)
		},
		SleepScale: func() float64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.opts.sleepScale()
		},
		Launch: func(p *shell.Process, run func(context.Context) (shell.Outcome, error)) {
			s.launchBackground(sb, p, run)
		},
		Signalled: func(p *shell.Process, sig string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.sandboxes[sb.id] == sb {
				s.emit(Event{Type: EventCommandSignalled, SandboxID: sb.id, Transport: p.Transport(), PID: p.PID(), Signal: sig, Command: p.Command()})
			}
		},
	})
}

// launchBackground runs a process started with "&" as an execution of its
// own (transport "background"): it is reported like a command, and it stops
// with the sandbox, not with the request that started it.
func (s *Server) launchBackground(sb *sandbox, p *shell.Process, run func(context.Context) (shell.Outcome, error)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	x := &execution{sb: sb, transport: shell.TransportBackground, pid: p.PID(), script: p.Command(), proc: p,
		cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	x.appliedGen = sb.appliedGen
	if s.sandboxes[sb.id] != sb || sb.status != prime.StatusRunning {
		cancel(shell.ErrVanished) // it starts as the sandbox goes: it ends at once
	}
	if sb.execs == nil {
		sb.execs = map[*execution]bool{}
	}
	sb.execs[x] = true
	if s.sandboxes[sb.id] == sb {
		s.emit(Event{Type: EventCommandStarted, SandboxID: sb.id, Command: x.script, Transport: x.transport,
			PID: x.pid, AppliedGeneration: x.appliedGen})
	}
	s.mu.Unlock()
	go func() {
		out, err := run(ctx)
		s.finishExecution(x, out, err)
		cancel(nil)
	}()
}

// stopExecutionsLocked ends every execution of a sandbox that stopped
// running (or was forgotten): at its next step, or at once when sleeping.
func stopExecutionsLocked(sb *sandbox) {
	for x := range sb.execs {
		x.cancel(shell.ErrVanished)
	}
}
