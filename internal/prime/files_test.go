package prime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func bytesSource(name string, data []byte) UploadSource {
	return UploadSource{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// fastConflicts makes the 409/transient backoff quick for a test.
func fastConflicts(t *testing.T) {
	saved := gatewayBackoff
	gatewayBackoff = Backoff{Initial: time.Millisecond}
	t.Cleanup(func() { gatewayBackoff = saved })
}

func TestUploadFileWireShape(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	res, err := c.UploadFile(context.Background(), "sb-1", "/work/a b.txt", bytesSource("a b.txt", []byte("hello")))
	if err != nil {
		t.Fatal(err)
	}
	if *res != (UploadResult{Path: "/work/a b.txt", Size: 5}) {
		t.Errorf("result = %+v", res)
	}
	reqs := g.fileRequests()
	if len(reqs) != 1 || reqs[0].path != "/work/a b.txt" || reqs[0].sandboxID != "sb-1" || reqs[0].name != "a b.txt" {
		t.Fatalf("requests = %+v", reqs)
	}
	if f := g.file("sb-1", "/work/a b.txt"); f == nil || string(f.data) != "hello" {
		t.Fatalf("stored %+v", f)
	}
	if g.count("Start")+g.count("exec") != 0 {
		t.Error("an upload ran a command")
	}
}

// The shared gateway rules, applied to an upload (idempotent).
func TestUploadRetryRules(t *testing.T) {
	fastConflicts(t)
	notFound := map[string]any{"error": "sandbox_not_found", "message": "The sandbox was not found"}
	tests := []struct {
		name      string
		status    string  // control plane (error-context)
		answers   []int   // upload statuses by attempt (the last repeats); 200 lets the fake store it
		body      any     // the refusal's body
		uploads   int     // upload requests expected
		ok        bool    // the upload succeeds
		is        []error // the failure wraps these
		errCtx    int     // error-context reads expected
		wantInMsg string
	}{
		{name: "503 then success", status: StatusRunning, answers: []int{503, 200}, body: map[string]any{"error": "unavailable"}, uploads: 2, ok: true},
		{name: "524 then success", status: StatusRunning, answers: []int{524, 524, 200}, body: "<html>timeout</html>", uploads: 3, ok: true},
		{name: "500 and 408 are retried too", status: StatusRunning, answers: []int{500, 408, 504, 200}, body: map[string]any{"error": "x"}, uploads: 4, ok: true},
		{name: "503 gives up after 4 attempts", status: StatusRunning, answers: []int{503}, body: map[string]any{"error": "unavailable"}, uploads: 4,
			is: []error{ErrServer}, wantInMsg: "after 4 attempts"},
		{name: "502 sandbox_not_found is never retried", status: StatusTerminated, answers: []int{502}, body: notFound, uploads: 1,
			is: []error{ErrSandboxNotRunning}, errCtx: 1, wantInMsg: "TERMINATED"},
		{name: "409 while RUNNING, then success", status: StatusRunning, answers: []int{409, 200}, body: map[string]any{"error": "conflict"}, uploads: 2, ok: true, errCtx: 1},
		{name: "409 on a TERMINATED sandbox fails", status: StatusTerminated, answers: []int{409}, body: map[string]any{"error": "conflict"}, uploads: 1,
			is: []error{ErrSandboxNotRunning}, errCtx: 1, wantInMsg: "is TERMINATED"},
		{name: "400 is final", status: StatusRunning, answers: []int{400}, body: map[string]any{"error": "bad", "message": "Operation not permitted"}, uploads: 1,
			is: []error{ErrValidation}, wantInMsg: "Operation not permitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sb-1", &fakeSandbox{status: tt.status})
			g.onFile = func(n int, _ string, w http.ResponseWriter, _ *http.Request) bool {
				st := tt.answers[min(n, len(tt.answers)-1)]
				if st == 200 {
					return false
				}
				if s, ok := tt.body.(string); ok {
					w.WriteHeader(st)
					_, _ = w.Write([]byte(s))
					return true
				}
				writeJSON(w, st, tt.body)
				return true
			}
			c, _ := g.client(nil)
			_, err := c.UploadFile(context.Background(), "sb-1", "/f", bytesSource("f", []byte("data")))
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want success %v", err, tt.ok)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("err = %v; want it to wrap %v", err, target)
				}
			}
			if err != nil && (!strings.Contains(err.Error(), "uploading /f to sandbox sb-1") || !strings.Contains(err.Error(), tt.wantInMsg)) {
				t.Errorf("err = %q; want it to say what was attempted and %q", err, tt.wantInMsg)
			}
			if n := g.count("upload"); n != tt.uploads {
				t.Errorf("%d upload requests, want %d", n, tt.uploads)
			}
			if n := g.count("error-context"); n != tt.errCtx {
				t.Errorf("%d error-context reads, want %d", n, tt.errCtx)
			}
			if tt.ok {
				if f := g.file("sb-1", "/f"); f == nil || string(f.data) != "data" {
					t.Errorf("stored %+v: a retried upload must send the whole body again", f)
				}
			}
		})
	}
}

// A refused token is replaced once; the retry sends the whole body again.
func TestUploadFreshTokenAfter401(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	if _, err := c.UploadFile(context.Background(), "sb-1", "/a", bytesSource("a", []byte("one"))); err != nil {
		t.Fatal(err)
	}
	g.revoke(g.tokens[0])
	if _, err := c.UploadFile(context.Background(), "sb-1", "/b", bytesSource("b", []byte("two"))); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	used, tokens := append([]string(nil), g.used...), append([]string(nil), g.tokens...)
	g.mu.Unlock()
	if len(tokens) != 2 || len(used) != 3 || used[1] != tokens[0] || used[2] != tokens[1] {
		t.Fatalf("tokens %v, presented %v; want one retry with a fresh token", tokens, used)
	}
	if f := g.file("sb-1", "/b"); f == nil || string(f.data) != "two" {
		t.Fatalf("stored %+v", f)
	}
}

// A source that yields other than its size must not pass for a whole file,
// and a gateway that stored another size is an error.
func TestUploadSizeChecks(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	short := UploadSource{Size: 10, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("abc")), nil }}
	if _, err := c.UploadFile(context.Background(), "sb-1", "/s", short); err == nil || !strings.Contains(err.Error(), "ended 7 bytes before its size") {
		t.Errorf("short source: err = %v", err)
	}
	long := UploadSource{Size: 2, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("abc")), nil }}
	if _, err := c.UploadFile(context.Background(), "sb-1", "/l", long); err == nil || !strings.Contains(err.Error(), "more bytes than its size") {
		t.Errorf("long source: err = %v", err)
	}
	if n := g.count("upload"); n > 2 {
		t.Errorf("%d upload requests: a source's fault must not be retried", n)
	}
	g.onFile = func(_ int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		writeJSON(w, 200, map[string]any{"success": true, "path": "/x", "size": 3})
		return true
	}
	if _, err := c.UploadFile(context.Background(), "sb-1", "/x", bytesSource("x", []byte("four"))); err == nil || !strings.Contains(err.Error(), "stored 3 bytes, 4 were sent") {
		t.Errorf("size mismatch: err = %v", err)
	}
	if _, err := c.UploadFile(context.Background(), "sb-1", "relative/x", bytesSource("x", nil)); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("relative path: err = %v", err)
	}
}

// generated is size bytes of a repeated 16-byte pattern, made as they
// are read (byte i is pattern[i%16], so a part read after a Seek is the
// same bytes as in one pass).
type generated struct {
	size, pos int64
	peak      *atomic.Uint64 // the largest HeapInuse seen while reading
}

const generatedPattern = "0123456789abcdef"

// generatedBlock is the pattern repeated, one period longer than a copy
// needs, so that a copy can start at any phase.
var generatedBlock = bytes.Repeat([]byte(generatedPattern), 2049)

func (g *generated) Read(p []byte) (int, error) {
	if g.pos >= g.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), g.size-g.pos))
	for i := 0; i < n; {
		phase := int((g.pos + int64(i)) % 16)
		i += copy(p[i:n], generatedBlock[phase:len(generatedBlock)-16+phase])
	}
	before := g.pos
	g.pos += int64(n)
	if before/(32<<20) != g.pos/(32<<20) { // every 32 MiB
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		for {
			old := g.peak.Load()
			if ms.HeapInuse <= old || g.peak.CompareAndSwap(old, ms.HeapInuse) {
				break
			}
		}
	}
	return n, nil
}

func (g *generated) Seek(off int64, whence int) (int64, error) {
	if whence != io.SeekStart || off < 0 {
		return 0, errors.New("generated: only absolute seeks")
	}
	g.pos = off
	return off, nil
}

func (g *generated) Close() error { return nil }

// A 1 GiB file streams up in parts of at most 16 MiB (the platform's limit
// per upload): the heap in use never comes near its size (the fake gateway,
// in this process too, keeps only a digest), no upload request is over the
// limit, and one command joins the parts, checks the sha256 and moves the
// file into place.
func TestPutFileStreamsLargeFilesInParts(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1 GiB through loopback")
	}
	const size = 1 << 30
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{}) // REST exec: the fake records the commands
	c, _ := g.client(nil)
	var peak atomic.Uint64
	src := UploadSource{Name: "big", Size: size, Open: func() (io.ReadCloser, error) {
		return &generated{size: size, peak: &peak}, nil
	}}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := c.PutFile(context.Background(), "sb-1", PutFileRequest{Path: "/big", Source: src}); err != nil {
		t.Fatal(err)
	}
	reqs := g.fileRequests()
	if len(reqs) != size/MaxUploadBytes {
		t.Fatalf("%d uploads, want %d parts", len(reqs), size/MaxUploadBytes)
	}
	for i, r := range reqs {
		f := g.file("sb-1", r.path)
		if f == nil || f.size != MaxUploadBytes || !strings.HasSuffix(r.path, fmt.Sprintf(".part%d", i)) {
			t.Fatalf("upload %d to %s stored %+v", i, r.path, f)
		}
	}
	cmds := commandsSent(g)
	if len(cmds) != 1 || !strings.Contains(cmds[0], "sha256sum -- /.prime-upload-RAND | grep -q ") ||
		!strings.Contains(cmds[0], "mv -f -- /.prime-upload-RAND /big") {
		t.Errorf("commands: %q", cmds)
	}
	const bound = 64 << 20
	if p := peak.Load(); p == 0 || p > before.HeapInuse+bound {
		t.Fatalf("heap in use peaked at %d MiB (%d MiB before) while uploading 1 GiB; want under %d MiB more",
			p>>20, before.HeapInuse>>20, bound>>20)
	}
}

// UploadFile never sends more than the platform's limit in one request.
func TestUploadFileRefusesOversizedSources(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	src := UploadSource{Name: "big", Size: MaxUploadBytes + 1, Open: func() (io.ReadCloser, error) {
		return &generated{size: MaxUploadBytes + 1, peak: new(atomic.Uint64)}, nil
	}}
	if _, err := c.UploadFile(context.Background(), "sb-1", "/big", src); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("err = %v", err)
	}
	if n := len(g.fileRequests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestDownloadRetriedStartsOver(t *testing.T) {
	fastConflicts(t)
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	content := bytes.Repeat([]byte("abcdefgh"), 64<<10) // 512 KiB
	g.putFile("sb-1", "/out.bin", content)
	g.onFile = func(n int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		if n > 0 {
			return false
		}
		// The first answer breaks off halfway: the connection is cut.
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		_, _ = w.Write(content[:len(content)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	c, _ := g.client(nil)
	var got bytes.Buffer
	calls := 0
	err := c.DownloadFile(context.Background(), "sb-1", "/out.bin", func(body io.Reader) error {
		calls++
		got.Reset() // a retried download starts over
		_, err := io.Copy(&got, body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || !bytes.Equal(got.Bytes(), content) {
		t.Fatalf("sink called %d times, got %d bytes; want 2 calls and the whole file", calls, got.Len())
	}
}

// A sink's own error is final; a missing file wraps ErrFileNotFound.
func TestDownloadErrors(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.putFile("sb-1", "/f", []byte("x"))
	c, _ := g.client(nil)
	refused := errors.New("disk full")
	err := c.DownloadFile(context.Background(), "sb-1", "/f", func(io.Reader) error { return refused })
	if !errors.Is(err, refused) || g.count("download") != 1 {
		t.Fatalf("err = %v after %d downloads; want the sink's error, not retried", err, g.count("download"))
	}
	err = c.DownloadFile(context.Background(), "sb-1", "/nope", func(io.Reader) error { return nil })
	if !errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), "downloading /nope from sandbox sb-1") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadFile(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.putFile("sb-1", "/tmp/job_0badcafe.exit", []byte("3\n"))
	c, _ := g.client(nil)
	res, err := c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/tmp/job_0badcafe.exit"})
	if err != nil || res.Content != "3\n" || res.Size != 2 || res.Offset != nil || res.TotalSize != nil {
		t.Fatalf("res %+v, err %v", res, err)
	}
	off, length := int64(-10), int64(10)
	if _, err := c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/tmp/job_0badcafe.exit", Offset: &off, Length: &length}); err != nil {
		t.Fatal(err)
	}
	if q := g.fileRequests()[1].query; q.Get("offset") != "-10" || q.Get("length") != "10" || q.Has("sandbox_id") {
		t.Errorf("query = %v; want offset and length, and no sandbox_id (the SDK sends none)", q)
	}

	_, err = c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/missing"})
	if !errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), "/missing") || !strings.Contains(err.Error(), "sb-1") {
		t.Errorf("404: err = %v", err)
	}
	g.onFile = func(_ int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "file_too_large", "message": "File exceeds the 10 MiB read limit"})
		return true
	}
	_, err = c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/big.log"})
	if !errors.Is(err, ErrFileTooLarge) || !strings.Contains(err.Error(), "10 MiB read limit") || !strings.Contains(err.Error(), "/big.log") {
		t.Errorf("413: err = %v", err)
	}
	if n := g.count("read-file"); n != 4 {
		t.Errorf("%d read-file requests; 404 and 413 are final", n)
	}
}

// Tokens and the API key never reach the debug log or errors of a file
// call, even when the gateway echoes the token.
func TestFileCallsKeepTokensOut(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.onFile = func(_ int, _ string, w http.ResponseWriter, r *http.Request) bool {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "bad", "message": "refused " + r.Header.Get("Authorization")})
		return true
	}
	c, rec := g.client(nil)
	_, err := c.ReadFile(context.Background(), "sb-1", ReadFileRequest{Path: "/x"})
	if err == nil {
		t.Fatal("no error")
	}
	g.mu.Lock()
	leaks := append([]string{"sk-test-secret-key"}, g.tokens...)
	g.mu.Unlock()
	for _, leak := range leaks {
		if strings.Contains(err.Error(), leak) || strings.Contains(rec.all(), leak) {
			t.Errorf("%q leaked: err %q\nlog:\n%s", leak, err, rec.all())
		}
	}
	if !strings.Contains(rec.all(), "Prime gateway request") {
		t.Errorf("no debug record of the gateway request:\n%s", rec.all())
	}
}

func TestTransferTimeoutGrowsWithSize(t *testing.T) {
	for _, tt := range []struct {
		size int64
		want time.Duration
	}{
		{-1, 300 * time.Second},
		{0, 300 * time.Second},
		{1 << 20, 301 * time.Second},
		{1 << 30, 300*time.Second + 1024*time.Second},
	} {
		if got := transferTimeout(tt.size); got != tt.want {
			t.Errorf("transferTimeout(%d) = %s, want %s", tt.size, got, tt.want)
		}
	}
}
