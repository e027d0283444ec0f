package prime_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func mockClient(t *testing.T) (*prime.Client, *primemock.Server) {
	t.Helper()
	m := primemock.New(primemock.Options{APIKey: "k"})
	srv := httptest.NewServer(m)
	t.Cleanup(func() { srv.Close(); m.Close() })
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

// The typed methods no resource uses yet still speak the contract: paging
// through everything, bulk delete in chunks of 100 with merged answers, logs.
func TestClientAgainstMock(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	var ids []string
	for i := range 130 {
		labels := []string{"fleet"}
		if i%2 == 0 {
			labels = append(labels, "even")
		}
		sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("s%d", i), DockerImage: "img", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sb.ID)
	}

	all, err := c.ListSandboxes(ctx, prime.ListSandboxesOptions{PerPage: 7})
	if err != nil || len(all) != 130 {
		t.Fatalf("listed %d sandboxes (err %v), want 130 across pages", len(all), err)
	}
	even, err := c.ListSandboxes(ctx, prime.ListSandboxesOptions{Labels: []string{"fleet", "even"}})
	if err != nil || len(even) != 65 {
		t.Fatalf("labels all-of matched %d, want 65", len(even))
	}

	logs, err := c.GetSandboxLogs(ctx, ids[0])
	if err != nil || !strings.Contains(logs, "created") {
		t.Fatalf("logs = %q, %v", logs, err)
	}

	before := m.Stats().Requests["DELETE /api/v1/sandbox"]
	res, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{SandboxIDs: append(ids[:120:120], "no-such-id")})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Stats().Requests["DELETE /api/v1/sandbox"] - before; got != 2 {
		t.Fatalf("%d bulk delete requests for 121 ids, want 2 chunks", got)
	}
	if len(res.Succeeded) != 120 || len(res.Failed) != 1 || res.Failed[0].SandboxID != "no-such-id" {
		t.Fatalf("merged answer: %d succeeded, failed %+v", len(res.Succeeded), res.Failed)
	}
	if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{Labels: []string{"fleet"}}); err != nil {
		t.Fatal(err)
	}
	if live := m.Stats().LiveSandboxes; live != 0 {
		t.Fatalf("%d sandboxes live after deleting by label", live)
	}
	if _, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{}); err == nil {
		t.Fatal("a bulk delete without ids, labels or all_users must be refused locally")
	}
}

// A sandbox's secret values are read inside it, for scrubbing; a sandbox
// without secrets costs no command.
func TestSandboxSecretValuesAgainstMock(t *testing.T) {
	ctx := context.Background()
	m := primemock.New(primemock.Options{APIKey: "k"})
	srv := httptest.NewServer(m)
	t.Cleanup(func() { srv.Close(); m.Close() })
	newClient := func() *prime.Client {
		c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := newClient()
	with, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "with", DockerImage: "img",
		Secrets: map[string]string{"API_TOKEN": "tok-secret-123", "MULTI": "line one\nline two"}})
	if err != nil {
		t.Fatal(err)
	}
	without, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "without", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{with.ID, without.ID} {
		if err := c.WaitForRunning(ctx, id, prime.WaitRunningOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh client learns the names from a GET, as a later apply does.
	for _, cl := range []*prime.Client{c, newClient()} {
		got, err := cl.SandboxSecretValues(ctx, with.ID)
		if err != nil || !slices.Equal(got, []string{"tok-secret-123", "line one\nline two"}) {
			t.Fatalf("values %q, %v", got, err)
		}
		before := len(m.Events())
		if got, err := cl.SandboxSecretValues(ctx, without.ID); err != nil || got != nil {
			t.Fatalf("values of a sandbox without secrets: %q, %v", got, err)
		}
		for _, e := range m.Events()[before:] {
			if e.Type == primemock.EventCommandStarted {
				t.Fatalf("a sandbox without secrets ran %q", e.Command)
			}
		}
	}
}
