package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// APIKey is the key fleets send; the mock accepts any non-empty key unless
// it was started with -api-key.
const APIKey = "soak-key"

// Mock is a Prime mock spoken to over HTTP only (its /_mock introspection
// endpoints and /api/v1), so the same checks work for a prime-mock process
// and for an httptest server around primemock.New.
type Mock struct {
	URL string

	cmd    *exec.Cmd
	waited chan struct{}
	stderr *tfcli.SyncBuffer
	hc     *http.Client
}

// NewMock wraps a mock already listening at url.
func NewMock(url string) *Mock {
	return &Mock{URL: strings.TrimRight(url, "/"), hc: &http.Client{Timeout: 30 * time.Second}}
}

// StartMockProcess runs the prime-mock binary on a free loopback port and
// waits for its "listening on http://HOST:PORT" line. The mock is its own
// process, so the provider process is measured on its own.
func StartMockProcess(bin string, args ...string) (*Mock, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...) //nolint:gosec,noctx // the prime-mock binary the caller named; stopped by Close
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &tfcli.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	m := &Mock{cmd: cmd, waited: make(chan struct{}), stderr: stderr, hc: &http.Client{Timeout: 30 * time.Second}}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, br)
	}()
	go func() { _ = cmd.Wait(); close(m.waited) }()
	select {
	case line := <-lines:
		u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
		if !ok {
			m.Close()
			return nil, fmt.Errorf("prime-mock printed %q instead of \"listening on URL\" (stderr: %s)", line, stderr.String())
		}
		m.URL = u
	case <-time.After(30 * time.Second):
		m.Close()
		return nil, errors.New("prime-mock did not print its address within 30s")
	}
	return m, nil
}

// PID is the mock process's id (0 for an in-process mock).
func (m *Mock) PID() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Close stops a mock process (SIGTERM, then SIGKILL after 10 s). It does
// nothing for a mock given by URL.
func (m *Mock) Close() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.waited:
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.waited
	}
}

func (m *Mock) getJSON(ctx context.Context, path string, out any) error {
	return m.doJSON(ctx, http.MethodGet, path, nil, out)
}

func (m *Mock) doJSON(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Stats reads /_mock/stats.
func (m *Mock) Stats(ctx context.Context) (primemock.Stats, error) {
	var st primemock.Stats
	err := m.getJSON(ctx, "/_mock/stats", &st)
	return st, err
}

// Events reads /_mock/events after sequence number afterSeq (0: all).
func (m *Mock) Events(ctx context.Context, afterSeq int64) ([]primemock.Event, error) {
	var out struct {
		Events []primemock.Event `json:"events"`
	}
	err := m.getJSON(ctx, fmt.Sprintf("/_mock/events?since=%d", afterSeq), &out)
	return out.Events, err
}

// LastSeq is the sequence number of the newest event (0 when none).
func (m *Mock) LastSeq(ctx context.Context) (int64, error) {
	evs, err := m.Events(ctx, 0)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	return evs[len(evs)-1].Seq, nil
}

// Configure POSTs a knob patch to /_mock/config.
func (m *Mock) Configure(ctx context.Context, p primemock.ConfigPatch) error {
	return m.doJSON(ctx, http.MethodPost, "/_mock/config", p, nil)
}

// Reset forgets every sandbox, event and counter (knobs are kept).
func (m *Mock) Reset(ctx context.Context) error {
	return m.doJSON(ctx, http.MethodPost, "/_mock/reset", struct{}{}, nil)
}

// Reachability is /_mock/sandbox/{id}/reachable's answer.
type Reachability struct {
	Reachable         bool   `json:"reachable"`
	Status            string `json:"status"`
	AppliedGeneration int64  `json:"applied_generation"`
}

// Reachable asks whether sandbox id reaches host under its APPLIED policy
// (introspection: no latency, no faults).
func (m *Mock) Reachable(ctx context.Context, id, host string) (Reachability, error) {
	var r Reachability
	err := m.getJSON(ctx, "/_mock/sandbox/"+id+"/reachable?host="+host, &r)
	return r, err
}

// File reads a file of sandbox id through /_mock/sandbox/{id}/file
// (introspection: no latency, not counted in the stats).
func (m *Mock) File(ctx context.Context, id, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/_mock/sandbox/"+url.PathEscape(id)+"/file?path="+url.QueryEscape(path), nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /_mock/sandbox/%s/file?path=%s: %s", id, path, resp.Status)
	}
	return b, nil
}

// Client is an API client for verification: it retries injected faults
// (up to 20 times) so checks can run while faults stay switched on.
func (m *Mock) Client() (*prime.Client, error) {
	return prime.New(prime.Options{
		Config:     prime.Config{APIKey: APIKey, BaseURL: m.URL},
		Version:    "soak",
		MaxRetries: 20,
	})
}

// D converts a duration for a ConfigPatch.
func D(d time.Duration) *primemock.Duration { v := primemock.Duration(d); return &v }

// F64 and Bool are pointer helpers for a ConfigPatch.
func F64(v float64) *float64 { return &v }
func Bool(v bool) *bool      { return &v }
