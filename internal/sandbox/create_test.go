package sandbox

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// An apply interrupted while the create request is in flight must still
// learn the sandbox the platform created, so its ID reaches state; the
// replay uses the same idempotency key, so nothing is created twice.
func TestCreateSandboxTrackedSurvivesInterrupt(t *testing.T) {
	mock := primemock.New(primemock.Options{Latency: 300 * time.Millisecond, APIKey: "k"})
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // Ctrl-C while the POST is in flight
	sb, err := createSandboxTracked(ctx, client, prime.CreateSandboxRequest{Name: "n", DockerImage: "img"})
	if sb == nil || sb.ID == "" {
		t.Fatalf("the created sandbox was lost after the interrupt (err %v)", err)
	}
	if err == nil {
		t.Fatal("an interrupted create must still report the interrupt")
	}
	if st := mock.Stats(); st.SandboxesCreated != 1 {
		t.Fatalf("sandboxes created = %d, want 1", st.SandboxesCreated)
	}
}

// An interrupted wait says so; only the create budget reads as a timeout.
func TestAwaitSandboxTellsInterruptFromTimeout(t *testing.T) {
	mock := primemock.New(primemock.Options{BootDelay: time.Hour, APIKey: "k"})
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := client.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "n", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err = awaitSandbox(ctx, client, sb.ID, time.Minute, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "was interrupted (last status") {
		t.Fatalf("interrupt: %v", err)
	}
	err = awaitSandbox(context.Background(), client, sb.ID, 50*time.Millisecond, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "did not reach RUNNING within 50ms") || !strings.Contains(err.Error(), "Raise timeouts.create") {
		t.Fatalf("budget: %v", err)
	}
}

// A replayed key only counts when its sandbox is the one asked for and
// still runs.
func TestAdoptable(t *testing.T) {
	want := prime.CreateSandboxRequest{Name: "eval-0", DockerImage: "img", Labels: []string{}}
	for _, tc := range []struct {
		sb   prime.Sandbox
		want bool
	}{
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusRunning}, true},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusPending}, true},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusTerminated}, false},
		{prime.Sandbox{Name: "eval-0", DockerImage: "img", Status: prime.StatusError}, false},
		{prime.Sandbox{Name: "eval-1", DockerImage: "img", Status: prime.StatusRunning}, false},
		{prime.Sandbox{Name: "eval-0", DockerImage: "other", Status: prime.StatusRunning}, false},
	} {
		if got := adoptable(&tc.sb, want); got != tc.want {
			b, _ := json.Marshal(tc.sb)
			t.Errorf("adoptable(%s) = %t, want %t", b, got, tc.want)
		}
	}
}

// A sandbox restored without its lists (a restore [I]) is locked as soon as
// it is RUNNING, while its gateway registers: the write is not queued
// behind the gateway's lag, and the wait still returns only once both the
// lock is enforced and the gateway answers.
func TestAwaitSandboxLockedWritesAtRunning(t *testing.T) {
	mock := primemock.New(primemock.Options{GatewayLag: 2 * time.Second, APIKey: "k"})
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := client.CreateSandbox(context.Background(), prime.CreateSandboxRequest{Name: "n", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	lock := bornLock{Policy: prime.EgressPolicy{Allowlist: []string{"example.com"}}, Timeout: time.Minute}
	gen, waitErr, lockErr := awaitSandboxLocked(context.Background(), client, sb.ID, time.Minute, time.Minute, lock)
	if waitErr != nil || lockErr != nil || gen == nil {
		t.Fatalf("awaitSandboxLocked = %v, %v, %v", gen, waitErr, lockErr)
	}
	seen := map[string]int64{}
	for _, e := range mock.Events() {
		if _, ok := seen[e.Type]; !ok && e.SandboxID == sb.ID {
			seen[e.Type] = e.Seq
		}
	}
	put, applied, gateway := seen[primemock.EventPolicyPut], seen[primemock.EventPolicyApplied], seen[primemock.EventGatewayReady]
	if put == 0 || applied == 0 || gateway == 0 {
		t.Fatalf("events missing: put %d, applied %d, gateway ready %d", put, applied, gateway)
	}
	if put > gateway {
		t.Errorf("the lock was written after the gateway was ready (put #%d, gateway #%d): it waited on the gateway's lag", put, gateway)
	}
	if st, err := client.GetEgressPolicy(context.Background(), sb.ID); err != nil || !st.Enforces(*gen) {
		t.Errorf("returned before the lock was enforced: %+v, %v", st, err)
	}
}
