package tfcli

import (
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Running is a Terraform command started in its own process group.
type Running struct {
	Cmd   *exec.Cmd
	start time.Time
	out   *SyncBuffer
	done  chan struct{}
	res   Result
}

// Start starts terraform with args (-no-color added as Run does) in its
// own process group, so it and the provider processes it spawns can be
// signalled together, and returns at once.
func (w *Workspace) Start(args ...string) (*Running, error) {
	if !w.Color {
		args = withNoColor(args)
	}
	cmd := exec.Command(w.Terraform, args...) //nolint:gosec,noctx // the Terraform CLI the caller named; Run kills it when its context ends
	cmd.Dir = w.Dir
	cmd.Env = w.Env
	out := &SyncBuffer{}
	// One writer for both streams, so that exec gives them one pipe and
	// the output keeps Terraform's order of messages and warnings.
	var combined io.Writer = out
	if w.Stream != nil {
		combined = io.MultiWriter(out, w.Stream)
	}
	cmd.Stdout, cmd.Stderr = combined, combined
	ownProcessGroup(cmd)
	r := &Running{Cmd: cmd, out: out, done: make(chan struct{})}
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := cmd.Wait()
		r.res = Result{Args: args, Start: r.start, Duration: time.Since(r.start), ExitCode: -1, Output: out.String()}
		if cmd.ProcessState != nil {
			r.res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			r.res.ExitCode = 0
		case errors.As(err, &ee):
			r.res.ExitCode = ee.ExitCode()
		default:
			r.res.Err = err
		}
		w.appendLog(r.res)
		close(r.done)
	}()
	return r, nil
}

// Done is closed when the command has exited.
func (r *Running) Done() <-chan struct{} { return r.done }

// Wait waits for the command and returns its result.
func (r *Running) Wait() Result {
	<-r.done
	return r.res
}

// Output is what the command printed so far.
func (r *Running) Output() string { return r.out.String() }

// Signal sends sig to terraform only (SIGINT: a graceful interrupt, which
// Terraform forwards to its providers as a Stop).
func (r *Running) Signal(sig syscall.Signal) error { return r.Cmd.Process.Signal(sig) }

// KillAll SIGKILLs terraform and every descendant (the provider plugin
// processes): the descendants are found through /proc by parent pid before
// the kill, then the process group (terraform's pid, set at Start) and each
// descendant are killed by id. It returns the pids killed.
func (r *Running) KillAll() []int {
	root := r.Cmd.Process.Pid
	pids := append([]int{root}, Descendants(root)...)
	killAll(root, pids)
	return pids
}
