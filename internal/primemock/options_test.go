package primemock

import (
	"testing"
	"time"
)

// TestLatencyJitterDraws: each request's latency is Latency plus a uniform
// draw in [0, LatencyJitter), from the seeded source (so a seed replays
// it), and exactly Latency without jitter.
func TestLatencyJitterDraws(t *testing.T) {
	const lat, jitter = 40 * time.Millisecond, 30 * time.Millisecond
	draws := func(seed int64, j time.Duration) []time.Duration {
		s := New(Options{Seed: seed, Latency: lat, LatencyJitter: j})
		defer s.Close()
		out := make([]time.Duration, 200)
		for i := range out {
			out[i] = s.drawDelay()
		}
		return out
	}
	a := draws(1, jitter)
	lo, hi := a[0], a[0]
	for _, d := range a {
		if d < lat || d >= lat+jitter {
			t.Fatalf("draw %s outside [%s, %s)", d, lat, lat+jitter)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	// 200 uniform draws cover most of the range.
	if hi-lo < jitter/2 {
		t.Errorf("draws span only %s of a %s jitter", hi-lo, jitter)
	}
	b := draws(1, jitter)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d: %s then %s with the same seed", i, a[i], b[i])
		}
	}
	if c := draws(2, jitter); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Error("another seed gave the same draws")
	}
	for _, d := range draws(1, 0) {
		if d != lat {
			t.Fatalf("without jitter a draw is %s, want %s", d, lat)
		}
	}
}
