package primemock

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestRequestsSleepTheJitterDraw: every request sleeps Latency plus its
// draw from the seeded source, API and gateway alike, so a request path
// that stops applying the jitter (or skips the draw) fails here, where
// TestLatencyJitterDraws alone would not notice. The delays are recorded,
// not timed.
func TestRequestsSleepTheJitterDraw(t *testing.T) {
	const lat, jitter = time.Microsecond, 2 * time.Millisecond
	s := New(Options{Seed: 7, Latency: lat, LatencyJitter: jitter})
	defer s.Close()
	var slept []time.Duration
	s.sleptHook = func(d time.Duration) { slept = append(slept, d) }
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/api/v1/sandbox", nil),
		httptest.NewRequest(http.MethodGet, "/api/v1/sandbox/nope", nil),
		httptest.NewRequest(http.MethodPost, "/gateway/ns/job/upload?path=/x", nil),
		httptest.NewRequest(http.MethodGet, "/gateway/ns/job/download?path=/x", nil),
		httptest.NewRequest(http.MethodGet, "/gateway/ns/job/read-file?path=/x", nil),
		httptest.NewRequest(http.MethodPost, "/gateway/ns/job/command_session.CommandSession/List", strings.NewReader("{}")),
		httptest.NewRequest(http.MethodPost, "/api/v1/sandbox/background-jobs/status:batchGet", strings.NewReader("{}")),
	} {
		r.Header.Set("Authorization", "Bearer k")
		s.ServeHTTP(httptest.NewRecorder(), r)
	}
	// The same seed's draws, in order: nothing else draws from the source
	// on these requests.
	replica := New(Options{Seed: 7, Latency: lat, LatencyJitter: jitter})
	defer replica.Close()
	if len(slept) != 7 {
		t.Fatalf("%d requests slept, want 7", len(slept))
	}
	jittered := false
	for i, d := range slept {
		if want := replica.drawDelay(); d != want {
			t.Errorf("request %d slept %s, want the draw %s", i, d, want)
		}
		jittered = jittered || d > lat
	}
	if !jittered {
		t.Error("no request slept more than Latency: the jitter never reached a request")
	}
}
