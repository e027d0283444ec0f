package primemock

// The gateway's file routes (upload, download, read-file; files never go
// over Connect), and the Go and HTTP introspection of a sandbox's files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// Route templates of the file routes (and their stats keys).
const (
	uploadRoute   = "POST " + gatewayPrefix + "/{user_ns}/{job_id}/upload"
	downloadRoute = "GET " + gatewayPrefix + "/{user_ns}/{job_id}/download"
	readFileRoute = "GET " + gatewayPrefix + "/{user_ns}/{job_id}/read-file"
)

// uploadResponse is the SDK's FileUploadResponse.
type uploadResponse struct {
	Success   bool   `json:"success"`
	Path      string `json:"path"`
	Size      int    `json:"size"`
	Timestamp string `json:"timestamp"`
}

// readFileResponse is the SDK's ReadFileResponse as VMs answer it: without
// the window keys (total_size, offset, truncated) only containers sent.
type readFileResponse struct {
	Content string `json:"content"`
	Size    int    `json:"size"`
}

// fileTarget authenticates a file request and finds its sandbox and path:
// the sandbox's gateway token, a sandbox_id query parameter that must match it
// when present, a sandbox the gateway serves, and an absolute path
// ([I: file-path-400] 400 otherwise: the SDK documents no answer).
func (s *Server) fileTarget(w http.ResponseWriter, r *http.Request, route string) (*sandbox, string, bool) {
	if !s.gatewayBegin(w, r, route) {
		return nil, "", false
	}
	tok, authed := s.gatewayToken(w, r)
	if !authed {
		return nil, "", false
	}
	q := r.URL.Query()
	if id := q.Get("sandbox_id"); id != "" && id != tok.sandboxID {
		gatewayError(w, http.StatusBadRequest, "invalid_request", "sandbox_id does not match the token", tok.sandboxID)
		return nil, "", false
	}
	sb, served := s.servedSandbox(w, tok)
	if !served {
		return nil, "", false
	}
	// An upload, download or file read is activity [G]: the idle clock
	// starts again ([I: file-activity] whatever the request's outcome).
	s.touchID(sb.id)
	raw := q.Get("path")
	if raw == "" {
		gatewayError(w, http.StatusBadRequest, "invalid_request", "the path query parameter is required", sb.id)
		return nil, "", false
	}
	p, abs := sandboxfs.CleanAbs(raw)
	if !abs {
		// [C] The upload is done by a sidecar, not in a command's working
		// directory: there is nothing to resolve a relative path against.
		gatewayError(w, http.StatusBadRequest, "invalid_path", fmt.Sprintf("the path %q is not absolute", raw), sb.id)
		return nil, "", false
	}
	return sb, p, true
}

// gatewayFault draws an injected 503 for a file route (p is its rate);
// postAction allows half of them to come after the action.
func (s *Server) gatewayFault(p func(Options) float64, postAction bool) fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rate := p(s.opts); rate > 0 && s.rng.Float64() < rate {
		s.stats.InjectedGateway503++
		if postAction && s.rng.IntN(2) == 0 {
			return failAfter
		}
		return failBefore
	}
	return noFault
}

func injected503(w http.ResponseWriter, after bool, sandboxID string) {
	msg := "Service Unavailable (injected by prime-mock)"
	if after {
		msg = "Service Unavailable (injected by prime-mock after the file was written)"
	}
	gatewayError(w, http.StatusServiceUnavailable, "service_unavailable", msg, sandboxID)
}

// fileError answers for a file-system error on path p.
func fileError(w http.ResponseWriter, err error, p, sandboxID string) {
	switch {
	case errors.Is(err, sandboxfs.ErrGone):
		gatewayError(w, http.StatusBadGateway, "sandbox_not_found", "The sandbox was not found", sandboxID)
	case errors.Is(err, sandboxfs.ErrNoEnt), errors.Is(err, sandboxfs.ErrNotDir):
		gatewayError(w, http.StatusNotFound, "file_not_found", "File not found: "+p, sandboxID)
	case errors.Is(err, sandboxfs.ErrIsDir):
		// [I: file-directory-400] A directory is not a file to transfer.
		gatewayError(w, http.StatusBadRequest, "is_a_directory", p+" is a directory", sandboxID)
	default:
		gatewayError(w, http.StatusBadRequest, "file_error", p+": "+err.Error(), sandboxID)
	}
}

// MaxUploadBytes is the platform's limit per uploaded file [G: "uploads ≤
// 16 MiB per file"]; a larger one is refused with 413 [I: upload-413: the status;
// the guide states the limit only].
const MaxUploadBytes = 16 << 20

// handleUpload stores the multipart field "file" at path, creating or
// replacing a regular file ([I: upload-modes] 0644 when new; an existing file keeps
// its mode) and the missing parent directories ([G] uploads create
// parents; [I: upload-modes] 0755). The body is read as a stream: only the file's
// bytes are held.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	sb, p, ok := s.fileTarget(w, r, uploadRoute)
	if !ok {
		return
	}
	f := s.gatewayFault(func(o Options) float64 { return o.UploadFailRate }, true)
	if f == failBefore {
		injected503(w, false, sb.id)
		return
	}
	data, status, err := readUploadPart(r)
	if err != nil {
		gatewayError(w, status, "invalid_upload", err.Error(), sb.id)
		return
	}
	err = sb.m.FS().Mkdir(path.Dir(p), 0o755, true)
	if err == nil {
		err = sb.m.FS().WriteFile(p, data, 0o644)
	}
	switch {
	case errors.Is(err, sandboxfs.ErrGone):
		fileError(w, err, p, sb.id)
		return
	case errors.Is(err, sandboxfs.ErrNoEnt), errors.Is(err, sandboxfs.ErrNotDir), errors.Is(err, sandboxfs.ErrExist):
		// A parent that is not a directory. [I: upload-parent-400] 400, a status clients
		// do not retry.
		gatewayError(w, http.StatusBadRequest, "upload_failed",
			fmt.Sprintf("cannot write %s: Not a directory (a parent of it is a file)", p), sb.id)
		return
	case errors.Is(err, sandboxfs.ErrFBig):
		gatewayError(w, http.StatusRequestEntityTooLarge, "file_too_large",
			fmt.Sprintf("the upload exceeds the limit of %d bytes per file", MaxUploadBytes), sb.id)
		return
	case err != nil:
		fileError(w, err, p, sb.id)
		return
	}
	s.mu.Lock()
	if s.sandboxes[sb.id] == sb {
		s.emit(Event{Type: EventFileUploaded, SandboxID: sb.id, Path: p, Size: int64(len(data))})
	}
	now := s.now()
	s.mu.Unlock()
	if f == failAfter {
		// The file is written; the client just never hears about it.
		injected503(w, true, sb.id)
		return
	}
	writeJSON(w, http.StatusOK, uploadResponse{
		Success: true, Path: r.URL.Query().Get("path"), Size: len(data),
		Timestamp: ts(now).Format(time.RFC3339Nano),
	})
}

// readUploadPart streams the multipart body and returns the "file" field's
// bytes (other fields are skipped), or the status and reason to refuse it.
func readUploadPart(r *http.Request) ([]byte, int, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("the body must be multipart/form-data with a field \"file\": %w", err)
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, http.StatusBadRequest, errors.New("the multipart body has no field \"file\"")
		}
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("reading the multipart body: %w", err)
		}
		if part.FormName() != "file" {
			_, _ = io.Copy(io.Discard, part)
			continue
		}
		var buf bytes.Buffer
		if n := r.ContentLength; n > 0 {
			buf.Grow(int(min(n, MaxUploadBytes+1))) // one allocation, not a doubling series
		}
		_, err = buf.ReadFrom(io.LimitReader(part, MaxUploadBytes+1))
		data := buf.Bytes()
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("reading the field \"file\": %w", err)
		}
		if len(data) > MaxUploadBytes {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the upload exceeds the limit of %d bytes (16 MiB) per file; upload a larger file in parts", MaxUploadBytes)
		}
		return data, 0, nil
	}
}

// handleDownload answers a file's raw bytes.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	sb, p, ok := s.fileTarget(w, r, downloadRoute)
	if !ok {
		return
	}
	if s.gatewayFault(func(o Options) float64 { return o.DownloadFailRate }, false) != noFault {
		injected503(w, false, sb.id)
		return
	}
	data, err := sb.m.FS().ReadFile(p)
	if err != nil {
		// [I: download-404] A missing file is 404 (the SDK's test only asserts an error).
		fileError(w, err, p, sb.id)
		return
	}
	s.mu.Lock()
	if s.sandboxes[sb.id] == sb {
		s.emit(Event{Type: EventFileDownloaded, SandboxID: sb.id, Path: p, Size: int64(len(data))})
	}
	s.mu.Unlock()
	writeBytes(w, data)
}

// writeBytes answers raw file bytes, never to be sniffed as a page.
func writeBytes(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data) //nolint:gosec // G705: raw bytes as application/octet-stream with nosniff, not a page
}

// handleReadFile answers a file as text. Every sandbox is a VM, and VMs
// ignore offset and length: the answer is the whole file, without
// total_size, offset or truncated. Beyond the read limit it is 413 with the
// reason.
func (s *Server) handleReadFile(w http.ResponseWriter, r *http.Request) {
	sb, p, ok := s.fileTarget(w, r, readFileRoute)
	if !ok {
		return
	}
	if s.gatewayFault(func(o Options) float64 { return o.DownloadFailRate }, false) != noFault {
		injected503(w, false, sb.id)
		return
	}
	data, err := sb.m.FS().ReadFile(p)
	if err != nil {
		fileError(w, err, p, sb.id)
		return
	}
	s.mu.Lock()
	limit := s.opts.readFileLimit()
	s.mu.Unlock()
	if total := len(data); int64(total) > limit {
		gatewayError(w, http.StatusRequestEntityTooLarge, "file_too_large",
			fmt.Sprintf("File too large to read: %s is %d bytes, the read limit is %d bytes; download it instead", p, total, limit), sb.id)
		return
	}
	resp := readFileResponse{Content: textOf(data), Size: len(data)}
	s.mu.Lock()
	if s.sandboxes[sb.id] == sb {
		s.emit(Event{Type: EventFileRead, SandboxID: sb.id, Path: p, Size: int64(len(data))})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

// textOf is content as text: [I: read-file-utf8] each byte that is not valid UTF-8
// becomes U+FFFD (binary files belong to download).
func textOf(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

// machineOf finds a sandbox's machine for introspection.
func (s *Server) machineOf(id string) (*shell.Machine, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxes[id]
	if sb == nil {
		return nil, false
	}
	return sb.m, true
}

// ReadFile returns a copy of a file of sandbox id (following symlinks); ok
// is false when the sandbox or the file does not exist (a deleted
// sandbox's files are gone) or the path is a directory.
func (s *Server) ReadFile(id, name string) ([]byte, bool) {
	m, found := s.machineOf(id)
	p, abs := sandboxfs.CleanAbs(name)
	if !found || !abs {
		return nil, false
	}
	data, err := m.FS().ReadFile(p)
	if err != nil {
		return nil, false
	}
	return slices.Clone(data), true
}

// WriteFile writes a file into sandbox id, creating its missing parent
// directories (0755); an existing file keeps its mode unless mode is set.
func (s *Server) WriteFile(id, name string, data []byte, mode fs.FileMode) error {
	m, found := s.machineOf(id)
	if !found {
		return fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	p, abs := sandboxfs.CleanAbs(name)
	if !abs {
		return fmt.Errorf("prime-mock: the path %q is not absolute", name)
	}
	if err := m.FS().Mkdir(path.Dir(p), 0o755, true); err != nil {
		return fmt.Errorf("prime-mock: creating %s: %w", path.Dir(p), err)
	}
	if mode == 0 {
		mode = 0o644
	}
	if err := m.FS().WriteFile(p, slices.Clone(data), mode); err != nil {
		return fmt.Errorf("prime-mock: writing %s: %w", p, err)
	}
	if mode != 0o644 {
		return m.FS().Chmod(p, func(fs.FileMode) fs.FileMode { return mode })
	}
	return nil
}

// WaitForFile waits until match accepts the content of a file of sandbox
// id (data nil and exists false while it does not exist), checking after
// every change to the sandbox's files: a test waits for a job's exit file
// without sleeping. It fails when the sandbox's files are gone or ctx ends.
func (s *Server) WaitForFile(ctx context.Context, id, name string, match func(data []byte, exists bool) bool) ([]byte, error) {
	m, found := s.machineOf(id)
	if !found {
		return nil, fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	p, abs := sandboxfs.CleanAbs(name)
	if !abs {
		return nil, fmt.Errorf("prime-mock: the path %q is not absolute", name)
	}
	data, err := m.FS().WaitFor(ctx, p, match)
	if err != nil {
		return nil, fmt.Errorf("prime-mock: waiting for %s: %w", p, err)
	}
	return slices.Clone(data), nil
}

// ListFiles lists a directory of sandbox id, sorted by name.
func (s *Server) ListFiles(id, dir string) ([]sandboxfs.FileInfo, error) {
	m, found := s.machineOf(id)
	if !found {
		return nil, fmt.Errorf("prime-mock: no sandbox %q", id)
	}
	p, abs := sandboxfs.CleanAbs(dir)
	if !abs {
		return nil, fmt.Errorf("prime-mock: the path %q is not absolute", dir)
	}
	out, err := m.FS().ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("prime-mock: listing %s: %w", p, err)
	}
	return out, nil
}

// handleMockFile serves GET /_mock/sandbox/{id}/file?path=P: the raw bytes,
// 404 when the sandbox or file does not exist.
func (s *Server) handleMockFile(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("path")
	if name == "" {
		writeJSON(w, http.StatusUnprocessableEntity, detail("the path query parameter is required"))
		return
	}
	data, found := s.ReadFile(r.PathValue("id"), name)
	if !found {
		writeJSON(w, http.StatusNotFound, detail("File not found"))
		return
	}
	writeBytes(w, data)
}

// handleMockFiles serves GET /_mock/sandbox/{id}/files?path=DIR: the
// directory's entries.
func (s *Server) handleMockFiles(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("path")
	if dir == "" {
		dir = "/"
	}
	entries, err := s.ListFiles(r.PathValue("id"), dir)
	if err != nil {
		writeJSON(w, http.StatusNotFound, detail(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": dir, "files": entries})
}
