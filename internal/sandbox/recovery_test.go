package sandbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// A create's label is what another machine derives again for the same
// create, and differs for anything that makes it another create: the
// scope, the kind, the request. Secret values, the idempotency key and
// the order of labels do not count (a label is readable by anyone who can
// list the account's sandboxes).
func TestCreateLabel(t *testing.T) {
	scope := journal.ExplicitScope("a")
	base := prime.CreateSandboxRequest{Name: "eval-0", DockerImage: "python:3.12", Labels: []string{"x", "y"},
		Secrets: map[string]string{"TOKEN": "one"}, IdempotencyKey: "k1"}
	label := createLabel(scope, createKindFleet, base)
	if !strings.HasPrefix(label, createLabelPrefix) || len(label) != len(createLabelPrefix)+16 {
		t.Fatalf("label %q", label)
	}
	same := base
	same.Labels = []string{"y", "x", scopeLabelPrefix + "0123456789abcdef"}
	same.Secrets = map[string]string{"TOKEN": "rotated"}
	same.IdempotencyKey = "k2"
	if got := createLabel(scope, createKindFleet, same); got != label {
		t.Errorf("the same create labelled %q and %q", label, got)
	}
	other := func(name string, mutate func(*prime.CreateSandboxRequest) (journal.Scope, string)) {
		r := base
		r.Labels = slices.Clone(base.Labels)
		s, kind := mutate(&r)
		if createLabel(s, kind, r) == label {
			t.Errorf("%s: labelled as the original create", name)
		}
	}
	other("another scope", func(*prime.CreateSandboxRequest) (journal.Scope, string) {
		return journal.ExplicitScope("b"), createKindFleet
	})
	other("another kind", func(*prime.CreateSandboxRequest) (journal.Scope, string) { return scope, createKindSandbox })
	other("another name", func(r *prime.CreateSandboxRequest) (journal.Scope, string) {
		r.Name = "eval-1"
		return scope, createKindFleet
	})
	other("another image", func(r *prime.CreateSandboxRequest) (journal.Scope, string) {
		r.DockerImage = "python:3.13"
		return scope, createKindFleet
	})
	other("another secret name", func(r *prime.CreateSandboxRequest) (journal.Scope, string) {
		r.Secrets = map[string]string{"OTHER": "one"}
		return scope, createKindFleet
	})

	rc := NewRecovery(nil, scope, nil)
	req := base
	id := rc.label(createKindFleet, &req)
	if id != label || !slices.Equal(req.Labels, []string{"x", "y", rc.ScopeLabel(), label}) {
		t.Errorf("labelled request: %v (create label %q)", req.Labels, id)
	}
	if slices.Contains(base.Labels, label) {
		t.Error("labelling changed the caller's labels")
	}
	var off *Recovery
	req = base
	if off.label(createKindFleet, &req) != "" || len(req.Labels) != 2 {
		t.Errorf("recovery off still labels: %v", req.Labels)
	}
}

// take hands out each live sandbox of the scope with the create's label
// once, never one a plan saw held or the caller holds, never one of
// another scope or one that ended; the list is made once per team.
func TestRecoveryTake(t *testing.T) {
	ctx := context.Background()
	mock := primemock.New(primemock.Options{APIKey: "k"})
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == prime.APIPrefix+"/sandbox" {
			lists.Add(1)
		}
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); mock.Close() })
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := journal.ExplicitScope("ours"), journal.ExplicitScope("theirs")
	req := prime.CreateSandboxRequest{Name: "w", DockerImage: "img"}
	create := func(scope journal.Scope) string {
		r := req
		NewRecovery(nil, scope, nil).label(createKindSandbox, &r)
		sb, err := c.CreateSandbox(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return sb.ID
	}
	a, b, held, ended := create(ours), create(ours), create(ours), create(ours)
	create(theirs)
	if err := c.DeleteSandbox(ctx, ended); err != nil {
		t.Fatal(err)
	}

	rc := NewRecovery(c, ours, func(id string) bool { return id == held })
	r := req
	label := rc.label(createKindSandbox, &r)
	var got []string
	for range 4 {
		sb, err := rc.take(ctx, r, label, map[string]bool{b: true})
		if err != nil {
			t.Fatal(err)
		}
		if sb != nil {
			got = append(got, sb.ID)
		}
	}
	if !slices.Equal(got, []string{a}) {
		t.Errorf("taken %v, want only %s (not %s, which the caller holds; not %s, held; not %s, ended; not the other scope's)",
			got, a, b, held, ended)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("%d list requests for four takes of one team, want 1", n)
	}
}
