package prime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// A run claimed by one job refuses every other start, naming the job (so
// that an apply on another machine attaches to it instead of running the
// command again); the job's own ID may start again, Force overrides, and a
// retired claim lets the run start afresh. Against the mock's shell, which
// runs the same command text a sandbox does.
func TestRunClaimsAgainstMock(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	sb := runningVM(t, c, m)
	const run = "0123456789abcdef0123456789abcdef"
	started := time.Unix(1_700_000_000, 0).UTC()
	start := func(id string, force bool) error {
		return c.StartJob(ctx, prime.Job{SandboxID: sb, ID: id}, prime.JobRequest{
			Command: "echo ran-" + id, Claim: &prime.RunClaim{Run: run, Force: force, Started: started},
		})
	}
	if err := start("aaaaaaaa", false); err != nil {
		t.Fatalf("the first start of a run: %v", err)
	}
	err := start("bbbbbbbb", false)
	var claimed *prime.ClaimedError
	if !errors.As(err, &claimed) || len(claimed.Claims) != 1 || claimed.Claims[0].JobID != "aaaaaaaa" ||
		!claimed.Claims[0].Started.Equal(started) {
		t.Fatalf("a second job of a claimed run: err = %v (%+v), want it refused naming aaaaaaaa", err, claimed)
	}
	if exists, err := c.JobExists(ctx, prime.Job{SandboxID: sb, ID: "bbbbbbbb"}); err != nil || exists {
		t.Fatalf("the refused job has files (exists %v, err %v): it must not have started", exists, err)
	}
	if err := start("aaaaaaaa", false); err != nil {
		t.Errorf("starting a job again with its own ID (its start never happened): %v", err)
	}
	if err := start("cccccccc", true); err != nil {
		t.Errorf("a forced start: %v", err)
	}
	err = start("dddddddd", false)
	if !errors.As(err, &claimed) || len(claimed.Claims) != 2 {
		t.Errorf("after a forced start both claims are listed: err = %v", err)
	}
	if err := c.RetireRunClaims(ctx, sb, run+"/aaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	err = start("dddddddd", false)
	if !errors.As(err, &claimed) || len(claimed.Claims) != 1 || claimed.Claims[0].JobID != "cccccccc" {
		t.Errorf("one job's claim retired: err = %v, want only cccccccc left", err)
	}
	if err := c.RetireRunClaims(ctx, sb, run); err != nil {
		t.Fatal(err)
	}
	if err := start("dddddddd", false); err != nil {
		t.Errorf("a run whose claims were retired starts afresh: %v", err)
	}
	if err := c.RetireRunClaims(ctx, sb, "not-a-run"); !errors.Is(err, prime.ErrInvalidRequest) {
		t.Errorf("a bad run name: err = %v", err)
	}
}

// The gateway refuses a command in a paused sandbox before anything runs:
// the error says so (ErrSandboxNotRunning, naming PAUSED), so that callers
// which ask a sandbox that may be paused (checkpoint markers, run claims)
// know that nothing ran and that the sandbox is not gone.
func TestExecInPausedSandboxIsNotRunning(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	sb := runningVM(t, c, m)
	if err := c.PauseAndWait(ctx, sb); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, sb, prime.ExecRequest{Command: "true"})
	var failed *prime.SandboxFailedError
	if !errors.Is(err, prime.ErrSandboxNotRunning) || !errors.As(err, &failed) || failed.Status != prime.StatusPaused {
		t.Fatalf("exec in a paused sandbox: err = %v, want ErrSandboxNotRunning naming PAUSED", err)
	}
}
