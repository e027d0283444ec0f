package prime_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// Another API key's sandbox is not gone: a read or a delete of it is a
// *ForeignError (ErrForeign, not ErrNotFound), and the sandbox keeps
// running; an unknown id stays ErrNotFound.
func TestForeignSandboxIsNotGone(t *testing.T) {
	ctx := context.Background()
	m := primemock.New(primemock.Options{})
	srv := httptest.NewServer(m)
	t.Cleanup(func() { srv.Close(); m.Close() })
	client := func(key string) *prime.Client {
		c, err := prime.New(prime.Options{Config: prime.Config{APIKey: key, BaseURL: srv.URL}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := client("key-a"), client("key-b")
	sb, err := a.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "mine", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"read":   func() error { _, err := b.GetSandbox(ctx, sb.ID); return err }(),
		"delete": b.DeleteSandbox(ctx, sb.ID),
	} {
		if !errors.Is(err, prime.ErrForeign) || errors.Is(err, prime.ErrNotFound) {
			t.Errorf("another key's %s: %v, want ErrForeign and not ErrNotFound", what, err)
		}
	}
	if got, err := a.GetSandbox(ctx, sb.ID); err != nil || prime.IsTerminalStatus(got.Status) {
		t.Fatalf("the owner's sandbox after another key's delete: %v %v", got, err)
	}
	if _, err := b.GetSandbox(ctx, "cnosuchsandbox000000000000"); !errors.Is(err, prime.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
}
