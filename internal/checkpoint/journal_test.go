package checkpoint

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// What the next create does with the checkpoint a killed apply of the
// same configuration left: adopt one still usable instead of requesting
// another, delete a FAILED one, forget one already gone, and take a new
// checkpoint in the last two cases.
func TestRequestCheckpointAdoptsOnlyUsableLeftovers(t *testing.T) {
	for _, c := range []struct {
		name string
		// sandboxName fails every checkpoint of the sandbox (the mock's
		// magic name) or not.
		sandboxName string
		// leftover turns the killed apply's checkpoint into what the next
		// apply finds.
		leftover  func(t *testing.T, c *prime.Client, id string)
		wantAdopt bool
		// wantGone: the leftover no longer exists afterwards.
		wantGone bool
	}{
		{name: "uploading", sandboxName: "tpl", leftover: func(*testing.T, *prime.Client, string) {}, wantAdopt: true},
		{name: "durable", sandboxName: "tpl", leftover: waitUntilDurable, wantAdopt: true},
		{name: "deleted", sandboxName: "tpl", leftover: deleteIt, wantGone: true},
		{name: "failed", sandboxName: "tpl-" + primemock.MagicCheckpointFailName, leftover: waitUntilFailed, wantGone: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			mock := primemock.New(primemock.Options{APIKey: "k", BootDelay: 10 * time.Millisecond})
			srv := httptest.NewServer(mock)
			t.Cleanup(func() { srv.Close(); mock.Close() })
			client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := client.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: c.sandboxName, DockerImage: "python:3.12-slim"})
			if err != nil {
				t.Fatal(err)
			}
			if err := client.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()

			// The killed apply: requested and recorded, never returned.
			killed, entry, err := requestCheckpoint(ctx, client, journal.CheckpointsOf(journal.NewCreates(dir)), "cfg", sb.ID, prime.CreateCheckpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			entry.Release() // its process dies: the lock goes, the entry stays
			c.leftover(t, client, killed.ID)

			next := journal.CheckpointsOf(journal.NewCreates(dir))
			got, entry, err := requestCheckpoint(ctx, client, next, "cfg", sb.ID, prime.CreateCheckpointOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if adopted := got.ID == killed.ID; adopted != c.wantAdopt {
				t.Fatalf("got checkpoint %s, killed apply's %s: adopted %t, want %t", got.ID, killed.ID, adopted, c.wantAdopt)
			}
			if entry.CheckpointID() != got.ID {
				t.Fatalf("the entry records %q, want %s", entry.CheckpointID(), got.ID)
			}
			_, gerr := client.GetCheckpoint(ctx, killed.ID)
			if gone := errors.Is(gerr, prime.ErrNotFound); gone != c.wantGone {
				t.Fatalf("the killed apply's checkpoint gone: %t (%v), want %t", gone, gerr, c.wantGone)
			}
			n := 0
			for _, e := range mock.Events() {
				if e.Type == primemock.EventCheckpointCreated {
					n++
				}
			}
			if c.wantAdopt && n != 1 || !c.wantAdopt && n != 2 {
				t.Fatalf("the mock made %d checkpoints", n)
			}
			entry.Finish()
		})
	}
}

func waitUntilDurable(t *testing.T, c *prime.Client, id string) {
	t.Helper()
	if _, err := c.WaitForCheckpoint(context.Background(), id, prime.WaitCheckpointOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitUntilFailed(t *testing.T, c *prime.Client, id string) {
	t.Helper()
	var failed *prime.CheckpointFailedError
	if _, err := c.WaitForCheckpoint(context.Background(), id, prime.WaitCheckpointOptions{}); !errors.As(err, &failed) || failed.Gone {
		t.Fatalf("the checkpoint did not fail: %v", err)
	}
}

func deleteIt(t *testing.T, c *prime.Client, id string) {
	t.Helper()
	waitUntilDurable(t, c, id) // the platform keeps a checkpoint that uploads
	if err := c.DeleteCheckpoint(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// Ctrl-C while the checkpoint request is in flight: the platform has made
// the checkpoint, and its answer arrives after the interruption. The
// answer must still be read (the request has no idempotency key, so it is
// the only record of the ID), and the checkpoint recorded in the journal,
// not left untracked.
func TestRequestCheckpointKeepsTheAnswerAfterAnInterrupt(t *testing.T) {
	mock := primemock.New(primemock.Options{APIKey: "k", BootDelay: 10 * time.Millisecond})
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/checkpoints") {
			mock.ServeHTTP(w, r)
			return
		}
		// The platform makes the checkpoint; the user presses Ctrl-C
		// before its answer leaves.
		rec := httptest.NewRecorder()
		mock.ServeHTTP(rec, r)
		interrupt()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(func() { srv.Close(); mock.Close() })
	client, err := prime.New(prime.Options{Config: prime.Config{APIKey: "k", BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := client.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "tpl", DockerImage: "python:3.12-slim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.WaitForReady(ctx, sb.ID, prime.WaitReadyOptions{}); err != nil {
		t.Fatal(err)
	}
	ck, entry, err := requestCheckpoint(ctx, client, journal.CheckpointsOf(journal.NewCreates(t.TempDir())), "cfg", sb.ID, prime.CreateCheckpointOptions{})
	if err != nil {
		t.Fatalf("the answer of a checkpoint request interrupted in flight was dropped: %v", err)
	}
	if entry.CheckpointID() != ck.ID {
		t.Fatalf("the journal records %q, want %s", entry.CheckpointID(), ck.ID)
	}
	entry.Finish()
}
