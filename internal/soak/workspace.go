package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Workspace is one Terraform working directory that uses the provider
// binary in ProviderDir through a dev_overrides CLI configuration. No
// `terraform init` is run: with dev_overrides it would ask the registry and
// fail offline, and plan/apply/destroy do not need it.
type Workspace struct {
	Dir       string
	Terraform string
	Env       []string
	// Home is the HOME (and, under it, the XDG_CACHE_HOME) of every
	// command and of the provider processes Terraform starts; see
	// IsolatedEnv.
	Home string
	// LogPath collects every command's output, for post-mortems.
	LogPath string
}

// NewWorkspace creates dir (if needed) with its CLI configuration and its
// own home directory, dir/.home, which goes when dir is removed. Terraform
// runs with IsolatedEnv(dir/.home) plus the CLI configuration; extraEnv is
// appended to the environment Terraform (and so the provider) gets, and is
// the only way a PRIME_* variable reaches them.
func NewWorkspace(dir, terraform, providerDir string, extraEnv ...string) (*Workspace, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(providerDir)
	if err != nil {
		return nil, err
	}
	home, err := filepath.Abs(filepath.Join(dir, ".home"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		return nil, err
	}
	rc := filepath.Join(dir, "cli.tfrc")
	cfg := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "primeintellect/prime" = %q
  }
  direct {}
}
`, abs)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	env := append(IsolatedEnv(home), "TF_CLI_CONFIG_FILE="+rc)
	env = append(env, extraEnv...)
	return &Workspace{Dir: dir, Terraform: terraform, Env: env, Home: home, LogPath: filepath.Join(dir, "terraform.log")}, nil
}

// IsolatedEnv is the environment for a Terraform command (and the provider
// processes it starts, which inherit it): this process's environment
// without what would make the run depend on the developer's machine or
// account, with HOME = home and XDG_CACHE_HOME = home/.cache.
//
// Dropped: HOME and the XDG base directories (the provider reads
// ~/.prime/config.json, an API key and team, and writes its create journal
// into the user cache directory, which the kill scenarios rely on being
// this workspace's own); every PRIME_* variable (credentials, base URL,
// team); the TF_* variables that change what Terraform does (logging, CLI
// arguments and configuration, data dir, workspace, plugin cache, TF_ACC,
// reattached providers, registry tokens). home is an absolute directory
// the caller made (and removes).
func IsolatedEnv(home string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", strings.HasPrefix(k, "XDG_") && k != "XDG_RUNTIME_DIR",
			strings.HasPrefix(k, "PRIME_"),
			strings.HasPrefix(k, "TF_LOG"), strings.HasPrefix(k, "TF_CLI_ARGS"), strings.HasPrefix(k, "TF_TOKEN_"),
			k == "TF_CLI_CONFIG_FILE", k == "TF_DATA_DIR", k == "TF_WORKSPACE", k == "TF_PLUGIN_CACHE_DIR",
			k == "TF_ACC", k == "TF_REATTACH_PROVIDERS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
}

// WriteConfig replaces the workspace's configuration with main.tf = hcl.
func (w *Workspace) WriteConfig(hcl string) error {
	return os.WriteFile(filepath.Join(w.Dir, "main.tf"), []byte(hcl), 0o600)
}

// Result is one finished Terraform command.
type Result struct {
	Args     []string
	Start    time.Time
	Duration time.Duration
	// ExitCode is -1 when the command did not start or was killed.
	ExitCode int
	Output   string
	Err      error
	// CPU is the user+system time of terraform and of the children it
	// waited for (its provider processes), from wait4(2).
	CPU time.Duration
}

// OK reports exit status 0.
func (r Result) OK() bool { return r.Err == nil && r.ExitCode == 0 }

// Tail is the end of the output, for error messages.
func (r Result) Tail(n int) string {
	if len(r.Output) <= n {
		return r.Output
	}
	return "…" + r.Output[len(r.Output)-n:]
}

// Describe is "terraform ARGS: exit N after D".
func (r Result) Describe() string {
	s := fmt.Sprintf("terraform %s: exit %d after %s", strings.Join(r.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond))
	if r.Err != nil {
		s += " (" + r.Err.Error() + ")"
	}
	return s
}

// Running is a Terraform command started in its own process group.
type Running struct {
	Cmd   *exec.Cmd
	args  []string
	start time.Time
	out   *syncBuffer
	done  chan struct{}
	res   Result
	w     *Workspace
}

// Start starts terraform with args (plus -no-color) in its own process
// group, so it and the provider processes it spawns can be signalled
// together.
func (w *Workspace) Start(args ...string) (*Running, error) {
	args = append(slicesClone(args), "-no-color")
	cmd := exec.Command(w.Terraform, args...) //nolint:gosec,noctx // the Terraform CLI the caller named; Run kills it when its context ends
	cmd.Dir = w.Dir
	cmd.Env = w.Env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &Running{Cmd: cmd, args: args, out: out, done: make(chan struct{}), w: w}
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
	_ = syscall.Kill(-root, syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}

// Run runs terraform with args (plus -no-color) and waits for it, or kills
// it when ctx ends.
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

func (w *Workspace) appendLog(r Result) {
	f, err := os.OpenFile(w.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "\n===== %s terraform %s (exit %d, %s)\n%s", r.Start.Format(time.RFC3339Nano),
		strings.Join(r.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond), r.Output)
}

// StateResource is one resource instance of `terraform show -json`.
type StateResource struct {
	Address string         `json:"address"`
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

// ID is the instance's id attribute.
func (s StateResource) ID() string { v, _ := s.Values["id"].(string); return v }

// State reads the current state with `terraform show -json` (empty when
// there is none).
func (w *Workspace) State(ctx context.Context) ([]StateResource, error) {
	res := w.Run(ctx, "show", "-json")
	if !res.OK() {
		return nil, fmt.Errorf("%s\n%s", res.Describe(), res.Tail(2000))
	}
	// -no-color is harmless; the JSON is the first line that starts with {.
	out := res.Output
	if i := strings.Index(out, "{"); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Values *struct {
			RootModule struct {
				Resources []StateResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parsing terraform show -json: %w", err)
	}
	if doc.Values == nil {
		return nil, nil
	}
	return doc.Values.RootModule.Resources, nil
}

// IDsOfType returns the ids of the state's resources of type typ.
func IDsOfType(rs []StateResource, typ string) []string {
	var out []string
	for _, r := range rs {
		if r.Type == typ {
			out = append(out, r.ID())
		}
	}
	return out
}

// Descendants lists the pids of every live descendant of pid (from
// /proc/*/stat parent links).
func Descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentPID(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentPID reads the ppid field of /proc/PID/stat. The command name in
// parentheses may contain spaces, so parsing starts after the last ')'.
func parentPID(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
