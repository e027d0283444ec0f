package prime

import (
	"context"
	"strings"
	"sync"
	"testing"

	pb "github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
)

// outputLog collects OnOutput's calls.
type outputLog struct {
	mu     sync.Mutex
	calls  []string // "out:chunk" / "err:chunk"
	stdout strings.Builder
}

func (o *outputLog) on(stderr bool, chunk []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tag := "out:"
	if stderr {
		tag = "err:"
	} else {
		o.stdout.Write(chunk)
	}
	o.calls = append(o.calls, tag+string(chunk))
}

func TestOutputScrubberHoldsBackOnlyAPossibleSecret(t *testing.T) {
	const secret = "hunter2-secret"
	for _, tt := range []struct {
		name   string
		chunks []string
		want   []string // calls, flushed at the end
	}{
		{name: "no secret: passed on at once", chunks: []string{"step 1\n", "step 2\n"}, want: []string{"out:step 1\n", "out:step 2\n"}},
		{name: "a whole secret", chunks: []string{"key=hunter2-secret\n"}, want: []string{"out:key=***\n"}},
		{name: "split across chunks", chunks: []string{"key=hunt", "er2-sec", "ret done\n"}, want: []string{"out:key=", "out:*** done\n"}},
		{name: "a false start is released", chunks: []string{"hunt", "ing season\n"}, want: []string{"out:hunting season\n"}},
		{name: "a held end is flushed", chunks: []string{"tail hunter"}, want: []string{"out:tail ", "out:hunter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o outputLog
			s := newOutputScrubber(o.on, []string{secret})
			for _, c := range tt.chunks {
				s.write(false, []byte(c))
			}
			s.flush()
			if strings.Join(o.calls, "|") != strings.Join(tt.want, "|") {
				t.Errorf("calls %q, want %q", o.calls, tt.want)
			}
			if strings.Contains(o.stdout.String(), secret) {
				t.Errorf("the secret was passed on: %q", o.stdout.String())
			}
		})
	}
}

// Over Connect, OnOutput sees each data event as it arrives (scrubbed);
// the result still holds everything.
func TestExecOnOutputConnect(t *testing.T) {
	const secret = "s3cret-value-123"
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.onStart = func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
		return sendAll(send, evStart(9), evStdout("building\n"), evStderr("warn\n"), evStdout("token s3cret-"), evStdout("value-123 ok\n"), evEnd(0))
	}
	c, _ := g.client(nil)
	var o outputLog
	res, err := c.Exec(context.Background(), "vm-1", ExecRequest{Command: "make", SensitiveEnv: map[string]string{"T": secret}, OnOutput: o.on})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"out:building\n", "err:warn\n", "out:token ", "out:*** ok\n"}
	if strings.Join(o.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", o.calls, want)
	}
	if res.Stdout != "building\ntoken s3cret-value-123 ok\n" {
		t.Errorf("stdout %q: the result is the command's own output", res.Stdout)
	}
}

func TestKnownSandboxTimeoutMinutes(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	if _, ok := c.Known("sb-1"); ok {
		t.Fatal("known before any answer")
	}
	if _, err := c.GetSandbox(context.Background(), "sb-1"); err != nil {
		t.Fatal(err)
	}
	k, ok := c.Known("sb-1")
	if !ok || k.TimeoutMinutes != 60 {
		t.Fatalf("Known = %+v, %v; want the sandbox object's timeoutMinutes (60)", k, ok)
	}
}
