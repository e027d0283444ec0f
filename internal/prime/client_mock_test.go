package prime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

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
	// One more id than a request may carry: 120 live ones and unknown ones
	// up to MaxBulkDeleteIDs+1, so the client must send two chunks and merge
	// their answers.
	batch := append([]string(nil), ids[:120]...)
	for i := len(batch); i <= prime.MaxBulkDeleteIDs; i++ {
		batch = append(batch, fmt.Sprintf("no-such-id-%d", i))
	}
	res, err := c.BulkDeleteSandboxes(ctx, prime.BulkDeleteRequest{SandboxIDs: batch})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Stats().Requests["DELETE /api/v1/sandbox"] - before; got != 2 {
		t.Fatalf("%d bulk delete requests for %d ids, want 2 chunks", got, len(batch))
	}
	if len(res.Succeeded) != 120 || len(res.Failed) != len(batch)-120 || res.Failed[0].SandboxID != "no-such-id-120" {
		t.Fatalf("merged answer: %d succeeded, %d failed (first %+v)", len(res.Succeeded), len(res.Failed), res.Failed[0])
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

// A policy written to a PAUSED sandbox is accepted (202) and applied only
// on resume: the wait ends at once with Paused, never as enforced; after
// the resume the same generation is enforced.
func TestEgressOnPausedSandboxAppliesOnResume(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "p", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForRunning(ctx, sb.ID, prime.WaitRunningOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Pause(sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	put, err := c.PutEgressPolicy(ctx, sb.ID, prime.EgressPolicy{Allowlist: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	// The wait must end on its own, seeing the pause, not at its deadline
	// (which no load on the machine reaches).
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	_, err = c.WaitForEgressApplied(wctx, sb.ID, put.Generation, put)
	var na *prime.EgressNotAppliedError
	if !errors.As(err, &na) || !na.Paused || !strings.Contains(err.Error(), "applies the policy when it resumes") {
		t.Fatalf("err = %v, want a paused not-applied error", err)
	}
	if wctx.Err() != nil {
		t.Error("the paused wait ran to its deadline instead of ending on the pause")
	}
	if err := m.Resume(sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSandbox(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if st, err := c.WaitForEgressApplied(wctx, sb.ID, put.Generation, nil); err != nil || !st.Enforces(put.Generation) {
		t.Fatalf("after the resume: %+v %v", st, err)
	}
}

// runningVM creates a sandbox on the mock and waits until the gateway
// serves it.
func runningVM(t *testing.T, c *prime.Client, m *primemock.Server) string {
	t.Helper()
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: "files", DockerImage: "img"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := m.WaitForEvent(wctx, func(e primemock.Event) bool {
		return e.Type == primemock.EventGatewayReady && e.SandboxID == sb.ID
	}); err != nil {
		t.Fatal(err)
	}
	return sb.ID
}

func bytesUpload(name string, data []byte) prime.UploadSource {
	return prime.UploadSource{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// Files over the platform's 16 MiB upload limit go up in parts that are
// joined and checked in the sandbox: the bytes arrive whole, no request is
// over the limit, and nothing temporary stays; a joined file whose sha256
// is not the source's is never put in place.
func TestPutFileInPartsAgainstMock(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	id := runningVM(t, c, m)
	data := make([]byte, 40<<20+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	res, err := c.PutFile(ctx, id, prime.PutFileRequest{Path: "/data/in/big.bin", Source: bytesUpload("big.bin", data)})
	if err != nil {
		t.Fatal(err)
	}
	got, found := m.ReadFile(id, "/data/in/big.bin")
	if !found || !bytes.Equal(got, data) || res.Size != int64(len(data)) {
		t.Fatalf("stored %d bytes (found %t), result %+v; want the %d bytes", len(got), found, res, len(data))
	}
	uploads := 0
	for _, e := range m.Events() {
		if e.Type == primemock.EventFileUploaded && e.SandboxID == id {
			uploads++
			if e.Size > prime.MaxUploadBytes {
				t.Errorf("an upload of %d bytes to %s", e.Size, e.Path)
			}
		}
	}
	if uploads != 3 {
		t.Errorf("%d uploads, want 3 parts", uploads)
	}
	if files, _ := m.ListFiles(id, "/data/in"); len(files) != 1 {
		t.Errorf("/data/in holds %v, want only big.bin", files)
	}

	bad := bytesUpload("bad.bin", data)
	bad.SHA256 = strings.Repeat("0", 64)
	_, err = c.PutFile(ctx, id, prime.PutFileRequest{Path: "/data/in/bad.bin", Source: bad})
	if err == nil || !strings.Contains(err.Error(), "does not have the sha256 of the source") {
		t.Fatalf("err = %v", err)
	}
	if files, _ := m.ListFiles(id, "/data/in"); len(files) != 1 {
		t.Errorf("after a failed check /data/in holds %v", files)
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
	// Ready as the provider waits before any command: RUNNING, then the
	// gateway (it trails RUNNING by the mock's lag).
	for _, id := range []string{with.ID, without.ID} {
		if err := c.WaitForReady(ctx, id, prime.WaitReadyOptions{Gateway: true}); err != nil {
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
