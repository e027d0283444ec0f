package acctest

import "testing"

// FirstCLIOnly skips only where the Makefile marks a run on an extra CLI.
func TestFirstCLIOnly(t *testing.T) {
	for _, tc := range []struct {
		env      string
		wantSkip bool
	}{{"", false}, {"1", true}} {
		t.Setenv(extraCLIEnv, tc.env)
		skipped := false
		ft := &skipRecorder{TB: t, skipped: &skipped}
		func() {
			defer func() { _ = recover() }()
			FirstCLIOnly(ft, "it counts requests")
		}()
		if skipped != tc.wantSkip {
			t.Errorf("%s=%q: skipped %v, want %v", extraCLIEnv, tc.env, skipped, tc.wantSkip)
		}
	}
}

// skipRecorder records a skip instead of ending the test.
type skipRecorder struct {
	testing.TB
	skipped *bool
}

func (r *skipRecorder) Skipf(string, ...any) { *r.skipped = true; panic("skipped") }
func (r *skipRecorder) Helper()              {}
