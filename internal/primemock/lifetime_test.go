package primemock_test

import (
	"context"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// TimeOut ends a live sandbox as its lifetime deadline would: TIMEOUT,
// no longer live, and only once.
func TestTimeOutEndsALiveSandbox(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	id := h.running(map[string]any{})
	if !h.srv.TimeOut(id) {
		t.Fatal("TimeOut of a running sandbox reported false")
	}
	if got := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body["status"]; got != "TIMEOUT" {
		t.Fatalf("status %v, want TIMEOUT", got)
	}
	if live := h.srv.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d live sandboxes after the timeout, want 0", live)
	}
	if h.srv.TimeOut(id) || h.srv.TimeOut("no-such-sandbox") {
		t.Fatal("TimeOut of an ended or unknown sandbox reported true")
	}
}

// The idle clock restarts on a command, an upload, a download and a file
// read, each of which would otherwise have let it run out; status reads do
// not (TestProbeIdleTimeoutIgnoresStatusReads).
func TestIdleClockRestartsOnActivity(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{"idle_timeout_minutes": 1})
	g := h.gateway(id)
	h.advance(50 * time.Second)
	for _, a := range []struct {
		what string
		act  func()
	}{
		{"a command", func() { g.exec("true") }},
		{"an upload", func() { g.upload(id, "/tmp/f", []byte("x")).must(t, 200) }},
		{"a download", func() { g.download(id, "/tmp/f").must(t, 200) }},
		{"a file read", func() { g.readFile("/tmp/f", "", "").must(t, 200) }},
	} {
		// 50 s after the previous activity; 50 s later the sandbox has been
		// idle for 100 s unless this one restarted the clock.
		a.act()
		h.advance(50 * time.Second)
		if got := h.status(id); got != "RUNNING" {
			t.Fatalf("50 s after %s: %s, want RUNNING", a.what, got)
		}
	}
	h.advance(11 * time.Second)
	if got := h.status(id); got != "TIMEOUT" {
		t.Fatalf("61 s after the last activity: %s, want TIMEOUT", got)
	}
}

// A running command keeps the idle clock pinned however long it runs; its
// end starts the clock again.
func TestRunningCommandPinsIdleClock(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1})
	id := h.ready(map[string]any{"idle_timeout_minutes": 1})
	s := h.session(id)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- s.start(ctx, startRequest("sleep 3600", nil, nil)) }()
	started := h.waitFor("the command", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandStarted && e.SandboxID == id && e.Transport == primemock.TransportConnect
	})
	// (Less than the gateway token's 10 minutes, which run on the mock
	// clock too.)
	h.advance(5 * time.Minute)
	if got := h.status(id); got != "RUNNING" {
		t.Fatalf("5 idle minutes while a command runs: %s, want RUNNING", got)
	}
	if err := s.signal(started.PID, commandsessionpb.Signal_SIGNAL_SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	h.advance(59 * time.Second)
	if got := h.status(id); got != "RUNNING" {
		t.Fatalf("59 s after the command ended: %s, want RUNNING", got)
	}
	h.advance(2 * time.Second)
	if got := h.status(id); got != "TIMEOUT" {
		t.Fatalf("61 s after the command ended: %s, want TIMEOUT", got)
	}
}

// Paused time counts toward the lifetime (a sandbox times out while
// paused); a paused sandbox does not idle out.
func TestPausedTimeCountsTowardLifetime(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond})
	short := h.running(map[string]any{"timeout_minutes": 2})
	idle := h.running(map[string]any{"timeout_minutes": 60, "idle_timeout_minutes": 1})
	for _, id := range []string{short, idle} {
		if err := h.srv.Pause(id); err != nil {
			t.Fatal(err)
		}
	}
	h.advance(121 * time.Second)
	if got := h.status(short); got != "TIMEOUT" {
		t.Errorf("a 2-minute lifetime, paused for 121 s: %s, want TIMEOUT", got)
	}
	if got := h.status(idle); got != "PAUSED" {
		t.Errorf("an idle timeout of 1 minute, paused for 121 s: %s, want PAUSED", got)
	}
	// Resumed, its idle clock starts again.
	if err := h.srv.Resume(idle); err != nil {
		t.Fatal(err)
	}
	h.advance(61 * time.Second)
	if got := h.status(idle); got != "TIMEOUT" {
		t.Errorf("idle 61 s after the resume: %s, want TIMEOUT", got)
	}
}

// The mock clock reports what it is asked to and refuses to go back.
func TestMockClockRoute(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	before := h.srv.Now()
	a := h.req("POST", "/_mock/clock", map[string]any{"advance": "1h", "rate": 60}).must(t, 200).body
	if a["rate"] != 60.0 || a["ahead"] == "0s" {
		t.Errorf("clock after advancing an hour at rate 60: %v", a)
	}
	if d := h.srv.Now().Sub(before); d < time.Hour {
		t.Errorf("the mock clock moved %s, want at least an hour", d)
	}
	h.req("POST", "/_mock/clock", map[string]any{"advance": "-1s"}).must(t, 422)
	h.req("POST", "/_mock/clock", map[string]any{"rate": 0}).must(t, 422)
	if cfg := h.req("GET", "/_mock/config", nil).must(t, 200).body; cfg["clock_rate"] != 60.0 {
		t.Errorf("config clock_rate = %v, want 60", cfg["clock_rate"])
	}
}
