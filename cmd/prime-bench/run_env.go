package main

// One run's environment: a prime-mock process, a workspace, and the Terraform commands measured in it.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// startMock runs prime-mock with the benchmark's settings (extra flags
// after them).
func startMock(c benchConfig, extra ...string) (*soak.Mock, error) {
	return soak.StartMockProcess(filepath.Join(c.bin, "prime-mock"), append([]string{
		"-boot-delay", c.boot.String(), "-apply-delay", c.apply.String(),
		"-latency", c.latency.String(), "-latency-jitter", c.jitter.String(),
		"-gateway-lag", c.gatewayLag.String(), "-seed", strconv.FormatInt(c.seed, 10),
		"-rate-limits=" + strconv.FormatBool(c.rateLimits)}, extra...)...)
}

// runEnv is one Terraform run's surroundings: its own prime-mock process,
// a workspace whose provider is started through the RSS-recording wrapper
// (wrap.go), and the run's directory.
type runEnv struct {
	mock   *soak.Mock
	ws     *tfcli.Workspace
	dir    string
	rssLog string
	// profileDir, when set, is where the provider writes its CPU profiles
	// (cpuProfileEnv); each phase files its own (fileProfiles).
	profileDir string
}

// newRunEnv makes the run's directory and workspace (prepareRun) under
// c.workdir/name and starts its mock (extra flags after the benchmark's).
// Close stops the mock.
func newRunEnv(c benchConfig, name string, mockFlags ...string) (*runEnv, error) {
	e, err := prepareRun(c, name)
	if err != nil {
		return nil, err
	}
	if e.mock, err = startMock(c, mockFlags...); err != nil {
		return nil, err
	}
	fmt.Printf("prime-mock (pid %d) at %s\n", e.mock.PID(), e.mock.URL)
	return e, nil
}

// prepareRun makes a run's directory, c.workdir/name (or name-2, … when
// that is taken: see dirClaims), with its provider wrapper and workspace.
func prepareRun(c benchConfig, name string) (*runEnv, error) {
	e := &runEnv{dir: runDirs.claim(filepath.Join(c.workdir, name))}
	if err := e.init(c); err != nil {
		return nil, err
	}
	return e, nil
}

// runDirs are the run directories handed out in this process.
var runDirs = &dirClaims{claimed: map[string]bool{}}

// dirClaims hands out run directories: every run gets one of its own, so
// two runs never share one whatever their names (the file run and the
// big-file run at the same N both took files-n200-base, and the second
// one's provider symlink failed with "file exists", which stopped the
// whole benchmark before it wrote its report).
type dirClaims struct {
	mu      sync.Mutex
	claimed map[string]bool
}

// claim returns dir, or dir-2, dir-3, … when dir is taken: by an earlier
// claim, or by a directory already on disk (a -workdir reused).
func (d *dirClaims) claim(dir string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := dir
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); !d.claimed[name] && errors.Is(err, fs.ErrNotExist) {
			d.claimed[name] = true
			return name
		}
		name = fmt.Sprintf("%s-%d", dir, i)
	}
}

func (e *runEnv) init(c benchConfig) error {
	// The provider is started through a symlink to this binary that records
	// its peak RSS (wrap.go).
	wrapDir := filepath.Join(e.dir, "provider")
	if err := os.MkdirAll(wrapDir, 0o750); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.Symlink(self, filepath.Join(wrapDir, "terraform-provider-prime")); err != nil {
		return err
	}
	providerPath := c.providerBin
	if providerPath == "" {
		providerPath = filepath.Join(c.bin, "terraform-provider-prime")
	}
	provider, err := filepath.Abs(providerPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(provider); err != nil {
		return fmt.Errorf("provider binary: %w (run make build)", err)
	}
	e.rssLog = filepath.Join(e.dir, "rss.jsonl")
	e.ws, err = soak.NewWorkspace(filepath.Join(e.dir, "tf"), c.terraform, wrapDir,
		append([]string{wrapTargetEnv + "=" + provider, wrapLogEnv + "=" + e.rssLog}, c.providerEnv...)...)
	return err
}

func (e *runEnv) Close() { e.mock.Close() }

// run runs one terraform command and takes the mock's counters and events
// around it.
func (e *runEnv) run(ctx context.Context, label string, args ...string) (phase, error) {
	mock := e.mock
	before, err := mock.Stats(ctx)
	if err != nil {
		return phase{}, err
	}
	seq, err := mock.LastSeq(ctx)
	if err != nil {
		return phase{}, err
	}
	fmt.Printf("%-8s terraform %s ... ", label, strings.Join(args, " "))
	mockBefore := processCPU(mock.PID())
	res := e.ws.Run(ctx, args...)
	mockCPU := processCPU(mock.PID()) - mockBefore
	fmt.Printf("exit %d in %s (CPU %s)\n", res.ExitCode, secs(res.Duration), secs(res.CPU))
	after, err := mock.Stats(ctx)
	if err != nil {
		return phase{}, err
	}
	evs, err := mock.Events(ctx, seq)
	if err != nil {
		return phase{}, err
	}
	ph := phase{res: res, requests: map[string]int{}, events: evs, rss: readRSS(e.rssLog, res.Start), stats: after, mockCPU: mockCPU,
		profiles: fileProfiles(e.profileDir, label), before429: before.RateLimited429}
	for k, v := range after.Requests {
		if d := v - before.Requests[k]; d > 0 {
			ph.requests[k] = d
		}
	}
	return ph, nil
}

// warmUp runs an unmeasured `terraform validate`: it starts Terraform and
// the provider once (no API call), so the first run of an invocation does
// not pay for reading freshly built binaries from disk, which the others
// do not (the first fleet apply's plan took 0.3 s longer).
func (e *runEnv) warmUp(ctx context.Context) error {
	if res := e.ws.Run(ctx, "validate", "-no-color"); !res.OK() {
		return fmt.Errorf("warm-up validate failed: %s", res.Describe())
	}
	return nil
}
