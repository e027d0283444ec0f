package tfcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Workspace is one Terraform working directory and how to run the CLI in
// it.
type Workspace struct {
	Dir       string
	Terraform string
	// Env is the whole environment of every command (and so of the
	// provider processes Terraform starts); nil means this process's.
	Env []string
	// Home is the HOME the commands run with when the caller gave the
	// workspace its own (see soak.NewWorkspace); "" otherwise.
	Home string
	// LogPath, when set, collects every command's output, for
	// post-mortems.
	LogPath string
	// Stream, when set, gets every command's output as it comes, besides
	// the Result (a demo shows it live).
	Stream io.Writer
	// Color leaves -no-color out (output for a terminal).
	Color bool
}

// New is a workspace in dir (which must exist) running terraform with env.
func New(dir, terraform string, env []string) *Workspace {
	return &Workspace{Dir: dir, Terraform: terraform, Env: env}
}

// WriteConfig replaces the workspace's configuration with main.tf = hcl.
func (w *Workspace) WriteConfig(hcl string) error { return w.WriteFile("main.tf", hcl) }

// WriteFile writes one file of the workspace, creating its directory.
func (w *Workspace) WriteFile(name, text string) error {
	p := filepath.Join(w.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o600)
}

// ReadFile reads one file of the workspace.
func (w *Workspace) ReadFile(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(w.Dir, name)) //nolint:gosec // G304: a file of the workspace, named by its caller
	return string(b), err
}

// Path is the path of a file of the workspace, from its path elements.
func (w *Workspace) Path(elem ...string) string {
	return filepath.Join(append([]string{w.Dir}, elem...)...)
}

// Run runs terraform with args and waits for it, or kills it (and its
// provider processes) when ctx ends. -no-color is added right after the
// command unless Color is set (see withNoColor).
func (w *Workspace) Run(ctx context.Context, args ...string) Result {
	r, err := w.Start(args...)
	if err != nil {
		return Result{Args: args, ExitCode: -1, Err: err}
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		r.KillAll()
		<-r.done
		r.res.Err = fmt.Errorf("killed: %w", context.Cause(ctx))
	}
	return r.res
}

// withNoColor inserts -no-color right after the command name: flags must
// come before positional arguments. It is left out when args already have
// it and for `state` (whose subcommand comes first) and `untaint`, which
// do not take it there.
func withNoColor(args []string) []string {
	if len(args) == 0 || slices.Contains(args, "-no-color") || args[0] == "state" || args[0] == "untaint" {
		return slices.Clone(args)
	}
	return append([]string{args[0], "-no-color"}, args[1:]...)
}

func (w *Workspace) appendLog(r Result) {
	if w.LogPath == "" {
		return
	}
	f, err := os.OpenFile(w.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "\n===== %s terraform %s (exit %d, %s)\n%s", r.Start.Format(time.RFC3339Nano),
		strings.Join(r.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond), r.Output)
}
