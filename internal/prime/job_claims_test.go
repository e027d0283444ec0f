package prime

import (
	"testing"
	"time"
)

// A claim names its job, its start and, when the starter gave one, the
// provider's run ID, so that an apply on another machine that attaches to
// the job records the run the job's results are stamped with; claims of
// older builds (no run ID) still read.
func TestParseClaims(t *testing.T) {
	out := "0000000b.1700000100.00112233445566ff\nnot-a-claim\n0000000a.1700000000\n0000000c.17.XYZ\n"
	got := parseClaims(out)
	want := []JobClaim{
		{JobID: "0000000a", Started: time.Unix(1700000000, 0).UTC()},
		{JobID: "0000000b", Started: time.Unix(1700000100, 0).UTC(), RunID: "00112233445566ff"},
	}
	if len(got) != len(want) {
		t.Fatalf("parseClaims = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("claim %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestClaimPrefixNamesTheRunID(t *testing.T) {
	job := Job{SandboxID: "sb", ID: "0000000a"}
	started := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		runID, want string
	}{
		{"", "touch /tmp/prime-runs/00112233445566778899/0000000a.1700000000 || exit 1; "},
		{"00112233445566ff", "touch /tmp/prime-runs/00112233445566778899/0000000a.1700000000.00112233445566ff || exit 1; "},
	} {
		got := claimPrefix(job, RunClaim{Run: "00112233445566778899", Started: started, Force: true, RunID: tc.runID})
		if got != "mkdir -p /tmp/prime-runs/00112233445566778899 || exit 1; "+tc.want {
			t.Errorf("claimPrefix with run ID %q = %q", tc.runID, got)
		}
	}
	if err := (&RunClaim{Run: "00112233445566778899", RunID: "NOT HEX"}).check(); err == nil {
		t.Error("a run ID that is not lowercase hex was accepted")
	}
}
