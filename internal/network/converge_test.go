package network

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// convergeFixture is a mock with a network and running sandboxes, and a
// switch that answers one path's requests with 403 (not retried).
type convergeFixture struct {
	client  *prime.Client
	network string
	ids     []string
	refuse  atomic.Value // "METHOD path suffix", "" for none
	mock    *primemock.Server
}

func newConvergeFixture(t *testing.T, n int) *convergeFixture {
	t.Helper()
	f := &convergeFixture{mock: primemock.New(primemock.Options{BootDelay: 10 * time.Millisecond, APIKey: "k"})}
	f.refuse.Store("")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rule := f.refuse.Load().(string); rule != "" {
			method, suffix, _ := strings.Cut(rule, " ")
			if r.Method == method && strings.HasSuffix(r.URL.Path, suffix) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"detail":"injected"}`))
				return
			}
		}
		f.mock.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.Close(); f.mock.Close() })
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	ctx := context.Background()
	net, err := c.CreateNetwork(ctx, prime.CreateNetworkRequest{Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	f.network = net.ID
	for range n {
		sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "m", DockerImage: "img"})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitForRunning(ctx, sb.ID, prime.WaitRunningOptions{}); err != nil {
			t.Fatal(err)
		}
		f.ids = append(f.ids, sb.ID)
	}
	return f
}

func (f *convergeFixture) members(t *testing.T) map[string][]string {
	n, err := f.client.GetNetwork(context.Background(), f.network)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range n.Members {
		out[m.SandboxID] = m.Tags
	}
	return out
}

// Joins, tag replacements and leaves; a sandbox that cannot leave keeps
// every member where it was (nothing else moves); a failed tag replacement
// keeps the member's old record, so the next plan shows it again.
func TestConverge(t *testing.T) {
	ctx := context.Background()
	f := newConvergeFixture(t, 3)
	a, b, c := f.ids[0], f.ids[1], f.ids[2]

	got, problems, tried := converge(ctx, f.client, f.network, map[string]string{"0": a, "1": b}, []string{"x"}, nil)
	if problems.Len() != 0 || tried != 2 || len(got) != 2 || got["1"].SandboxID.ValueString() != b {
		t.Fatalf("join: %v, %s, tried %d", got, problems, tried)
	}
	if m := f.members(t); len(m) != 2 || m[a][0] != "x" {
		t.Fatalf("after join the network holds %v", m)
	}

	// Key 1 moves from b to c, but b cannot leave: nothing else moves.
	f.refuse.Store("DELETE /members/" + b)
	moved, problems, _ := converge(ctx, f.client, f.network, map[string]string{"0": a, "1": c}, []string{"x"}, got)
	if problems.Len() != 1 || !problems.Has("1") || moved["1"].SandboxID.ValueString() != b || len(moved) != 2 {
		t.Fatalf("failed leave: %v, %s", moved, problems)
	}
	if m := f.members(t); len(m) != 2 || m[c] != nil {
		t.Fatalf("after a failed leave the network holds %v; c must not have joined", m)
	}

	// A tag replacement refused on a: a keeps its old record; b moves to c.
	f.refuse.Store("PUT /members/" + a)
	after, problems, _ := converge(ctx, f.client, f.network, map[string]string{"0": a, "1": c}, []string{"y"}, moved)
	if problems.Len() != 1 || !problems.Has("0") || !after["0"].heldWith(a, []string{"x"}) || !after["1"].heldWith(c, []string{"y"}) {
		t.Fatalf("failed retag: %v, %s", after, problems)
	}
	if m := f.members(t); m[b] != nil || m[c][0] != "y" || m[a][0] != "x" {
		t.Fatalf("the network holds %v", m)
	}

	// Everyone leaves; a member already gone is success.
	f.refuse.Store("")
	if err := f.client.RemoveNetworkMember(ctx, f.network, c); err != nil {
		t.Fatal(err)
	}
	left, problems, _ := converge(ctx, f.client, f.network, nil, nil, after)
	if problems.Len() != 0 || len(left) != 0 || len(f.members(t)) != 0 {
		t.Fatalf("leave: %v, %s, network %v", left, problems, f.members(t))
	}
}

// A sandbox that is not running cannot join, and the error says why.
func TestConvergeNotRunning(t *testing.T) {
	ctx := context.Background()
	f := newConvergeFixture(t, 1)
	if err := f.client.PauseAndWait(ctx, f.ids[0]); err != nil {
		t.Fatal(err)
	}
	got, problems, _ := converge(ctx, f.client, f.network, map[string]string{"0": f.ids[0]}, nil, nil)
	if len(got) != 0 || !strings.Contains(problems.String(), "only a running VM sandbox can join a private network") {
		t.Fatalf("got %v, %s", got, problems)
	}
}
