package primemock_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSDKCompat builds the real cmd/prime-mock binary, starts it on a free
// port and runs tests/sdkcompat/sdk_blackbox.py against it: an independent,
// stdlib-only Python client that speaks to the mock exactly as the Python
// SDK prime-sandboxes 0.2.39 does and validates every answer the way the
// SDK's pydantic models would. A failure prints the script's output, whose
// FAIL line names the check, the endpoint, the key, what the SDK expects and
// what the mock sent.
func TestSDKCompat(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not on PATH; under CI the SDK black-box check (tests/sdkcompat) must run")
		}
		t.Skip("python3 is not on PATH; the SDK black-box check (tests/sdkcompat) needs it")
	}
	root := moduleRoot(t)
	script := filepath.Join(root, "tests", "sdkcompat", "sdk_blackbox.py")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The validators first, offline: they must reject what the SDK rejects.
	if out, err := runPython(ctx, python, script, "--self-test"); err != nil {
		t.Fatalf("sdk_blackbox.py --self-test: %v\n%s", err, out)
	}

	bin := filepath.Join(t.TempDir(), "prime-mock")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/prime-mock")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/prime-mock: %v\n%s", err, out)
	}

	url, mockStderr := startMock(ctx, t, bin,
		"-addr", "127.0.0.1:0",
		// Long enough that the SDK-style waiters see PENDING and
		// PROVISIONING, short enough to keep the test at a few seconds.
		"-boot-delay", "300ms",
		"-apply-delay", "150ms",
		// The default lag, which the reachability check retries as the SDK does.
		"-gateway-lag", "300ms",
	)

	out, err := runPython(ctx, python, script, "--base-url", url, "--keep-going")
	if err != nil {
		t.Fatalf("prime-mock disagrees with prime-sandboxes 0.2.39 (%v). Script output:\n%s\nprime-mock stderr:\n%s",
			err, out, mockStderr())
	}
	t.Logf("sdk_blackbox.py output:\n%s", out)
	// Every check ran: a step that stopped early would pass fewer.
	if !strings.Contains(out, fmt.Sprintf("# %d checks passed, 0 mismatch(es)", sdkCompatChecks)) {
		t.Errorf("want %d passed checks; output:\n%s", sdkCompatChecks, out)
	}
}

// sdkCompatChecks is how many checks sdk_blackbox.py runs against the mock
// (62 since the VM-only platform: the container checks became a 410 check
// and checks on a second, SDK-default VM, plus the create rules).
const sdkCompatChecks = 62

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// runPython runs the script without writing bytecode into the source tree.
func runPython(ctx context.Context, python, script string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, python, append([]string{"-B", script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lockedBuffer collects the mock's stderr while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startMock starts the binary, waits for its "listening on URL" line and
// stops it (SIGINT, then kill) when the test ends.
func startMock(ctx context.Context, t *testing.T, bin string, args ...string) (string, func() string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prime-mock: %v", err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})

	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			line = "error: " + err.Error()
		}
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, r) // keep the pipe drained
		done <- cmd.Wait()
	}()

	select {
	case line := <-lines:
		url, found := strings.CutPrefix(line, "listening on ")
		if !found || !strings.HasPrefix(url, "http://") {
			t.Fatalf("prime-mock's first stdout line is %q, want \"listening on http://HOST:PORT\"\nstderr:\n%s", line, stderr)
		}
		return url, stderr.String
	case <-time.After(15 * time.Second):
		t.Fatalf("prime-mock printed nothing within 15s\nstderr:\n%s", stderr)
	case <-ctx.Done():
		t.Fatalf("prime-mock did not start: %v", errors.Join(ctx.Err(), fmt.Errorf("stderr: %s", stderr)))
	}
	return "", nil
}
