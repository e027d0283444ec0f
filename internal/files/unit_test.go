package files

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

func TestMaxSizeProblem(t *testing.T) {
	for n, want := range map[int64]string{
		1: "", 1 << 20: "", 10 << 20: "",
		0:           "at least 1 byte",
		10<<20 + 1:  "over 10485760 bytes (10 MiB)",
		16 << 20:    "prime_sandbox_artifact",
		-5:          "at least 1 byte",
		1<<62 + 123: "over 10485760 bytes",
	} {
		got := maxSizeProblem(n)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("maxSizeProblem(%d) = %q, want %q", n, got, want)
		}
	}
}

// The read rule both file data sources share: a file in a sandbox that is
// gone reads as missing and marked so (for the warning), with or without
// allow_missing, never as an error; a file missing from a sandbox that
// runs is still an error without allow_missing.
func TestReadSmallFileOfGoneSandbox(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mocktest.Client(t)
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "gone", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Timeout: 20 * time.Second, Gateway: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := readSmallFile(ctx, c, sb.ID, "/results/reward.json", 1024, false, ""); err == nil ||
		!strings.Contains(err.Error(), "set allow_missing = true") {
		t.Fatalf("a missing file of a running sandbox: %v, want the allow_missing error", err)
	}
	if err := c.DeleteSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	for _, allowMissing := range []bool{false, true} {
		f, err := readSmallFile(ctx, c, sb.ID, "/results/reward.json", 1024, allowMissing, "")
		if err != nil || f == nil || f.Exists || !f.SandboxGone {
			t.Fatalf("allow_missing %t, sandbox gone: %+v, %v; want a missing file marked SandboxGone", allowMissing, f, err)
		}
	}
}

// A reader given a run reads only what that run wrote: a run that clears
// /results leaves its stamp, a file written by it reads, one older than
// it (outside the cleared path) reads as stale, a run that never started
// in the sandbox reads as stale, a missing file as missing; and a sandbox
// that is gone as gone.
func TestRunCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mocktest.Client(t)
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "runs", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{Timeout: 20 * time.Second, Gateway: true}); err != nil {
		t.Fatal(err)
	}
	exec := func(cmd string) {
		t.Helper()
		if res, err := c.Exec(ctx, sb.ID, prime.ExecRequest{Command: cmd}); err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %+v, %v", cmd, res, err)
		}
	}
	exec("mkdir -p /old && echo 1 > /old/reward.json && mkdir -p /results && echo 0 > /results/reward.json")
	const run = "0123456789abcdef"
	exec(prime.StampedRunCommand([]string{"/results"}, run, "mkdir -p /results && echo 1 > /results/reward.json"))
	for _, c2 := range []struct {
		path, runID string
		want        runCheck
	}{
		{"/results/reward.json", run, runResultFresh},
		{"/old/reward.json", run, runResultStale},
		{"/results/missing.json", run, runResultMissing},
		{"/results/reward.json", "fedcba9876543210", runResultNoStamp},
	} {
		got, err := checkRunResult(ctx, c, sb.ID, c2.path, c2.runID)
		if err != nil || got != c2.want {
			t.Errorf("checkRunResult(%s, %s) = %v, %v; want %v", c2.path, c2.runID, got, err, c2.want)
		}
	}
	f, err := readSmallFile(ctx, c, sb.ID, "/old/reward.json", 1024, true, run)
	if err != nil || f.Exists || !f.Stale || !strings.Contains(f.StaleWhy, "older than run "+run+"'s start") {
		t.Errorf("an earlier run's file: %+v, %v; want it missing and stale", f, err)
	}
	if _, err := readSmallFile(ctx, c, sb.ID, "/old/reward.json", 1024, false, run); !errors.Is(err, errStaleResult) {
		t.Errorf("an earlier run's file without allow_missing: %v, want the stale error", err)
	}
	if f, err := readSmallFile(ctx, c, sb.ID, "/results/reward.json", 1024, false, run); err != nil || string(f.Data) != "1\n" {
		t.Errorf("the run's own file: %+v, %v", f, err)
	}
	if err := c.DeleteSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := checkRunResult(ctx, c, sb.ID, "/results/reward.json", run); err != nil || got != runResultGone {
		t.Errorf("a sandbox that is gone: %v, %v", got, err)
	}
}
