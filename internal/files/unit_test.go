package files

import (
	"context"
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
	if _, err := readSmallFile(ctx, c, sb.ID, "/results/reward.json", 1024, false); err == nil ||
		!strings.Contains(err.Error(), "set allow_missing = true") {
		t.Fatalf("a missing file of a running sandbox: %v, want the allow_missing error", err)
	}
	if err := c.DeleteSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	for _, allowMissing := range []bool{false, true} {
		f, err := readSmallFile(ctx, c, sb.ID, "/results/reward.json", 1024, allowMissing)
		if err != nil || f == nil || f.Exists || !f.SandboxGone {
			t.Fatalf("allow_missing %t, sandbox gone: %+v, %v; want a missing file marked SandboxGone", allowMissing, f, err)
		}
	}
}
