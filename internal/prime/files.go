package prime

// Files through the sandbox gateway, as prime-sandboxes 0.2.39 moves them
// (upload_file, download_file, read_file): REST routes below the sandbox's
// gateway base for both VM and container sandboxes (files never go over
// Connect), under the shared gateway rules (gateway_call.go). All three
// are idempotent: writing the same bytes to the same path twice, or reading
// twice, changes nothing.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"
)

// File errors, matched with errors.Is. The error text names the sandbox
// and the path, and for ErrFileTooLarge the gateway's reason.
var (
	// ErrFileNotFound: the gateway answered 404 for the path.
	ErrFileNotFound = errors.New("file not found")
	// ErrFileTooLarge: the gateway refused to read the file (413): over its
	// read limit.
	ErrFileTooLarge = errors.New("file too large to read")
)

const (
	// transferBaseTimeout is the SDK's per-attempt timeout of an upload
	// or a download.
	transferBaseTimeout = 300 * time.Second
	// transferMinRate is the slowest link a transfer's timeout allows for,
	// on top of transferBaseTimeout [I: no rate is documented; a fixed
	// 300 s cannot carry a 1 GiB file on a link below 3.5 MB/s, and a
	// stalled transfer still ends, just later].
	transferMinRate = 1 << 20 // bytes per second
	// DefaultReadFileTimeout is the SDK's read-file timeout.
	DefaultReadFileTimeout = 30 * time.Second
)

// transferTimeout is one attempt's budget for moving size bytes (-1:
// unknown, the SDK's 300 s).
func transferTimeout(size int64) time.Duration {
	if size <= 0 {
		return transferBaseTimeout
	}
	return transferBaseTimeout + time.Duration(size/transferMinRate)*time.Second
}

// MaxUploadBytes is the platform's limit per uploaded file (16 MiB, the
// 2026 files guide). UploadFile never sends more in one request; PutFile
// sends a larger file in parts and joins them in the sandbox.
const MaxUploadBytes = 16 << 20

// UploadSource is the bytes of one upload; Open is called once per attempt
// and its reader closed by the client.
type UploadSource struct {
	Name string // multipart file name (the SDK sends the local file's base name)
	Size int64  // bytes Open yields; checked against the gateway's answer
	Open func() (io.ReadCloser, error)
	// SHA256 is the hex sha256 of the bytes, when the caller knows it
	// (PutFile checks a file joined from parts against it; it reads the
	// source once to compute it otherwise).
	SHA256 string
}

// UploadResult is the gateway's answer to an upload.
type UploadResult struct {
	Path string
	Size int64
}

// uploadAnswer is the upload route's answer.
type uploadAnswer struct {
	Success *bool  `json:"success"`
	Path    string `json:"path"`
	Size    *int64 `json:"size"`
}

// UploadFile is POST {base}/upload?path=&sandbox_id= with one multipart
// field "file", streamed: the body is the form's head, the source's bytes
// and the form's tail, read in turn (nothing is held in memory, and the
// request carries an exact Content-Length). Each attempt's timeout is the
// SDK's 300 s plus the time the size needs at 1 MiB/s (transferTimeout).
// The gateway's upload creates missing parent directories and replaces
// an existing file (the 2026 files guide). A source over MaxUploadBytes is
// refused without a request (PutFile splits it). A source that yields
// other than Size bytes, or a gateway that reports another size, is an
// error.
func (c *Client) UploadFile(ctx context.Context, sandboxID, remotePath string, src UploadSource) (*UploadResult, error) {
	what := fmt.Sprintf("uploading %s to sandbox %s", remotePath, sandboxID)
	if err := checkRemotePath(sandboxID, remotePath); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if src.Open == nil || src.Size < 0 {
		return nil, fmt.Errorf("%s: %w: the upload source needs Open and a size", what, ErrInvalidRequest)
	}
	if src.Size > MaxUploadBytes {
		return nil, fmt.Errorf("%s: %w: %d bytes is over the platform's limit of %d bytes per uploaded file (PutFile uploads it in parts)",
			what, ErrInvalidRequest, src.Size, MaxUploadBytes)
	}
	name := src.Name
	if name == "" {
		name = path.Base(remotePath)
	}
	head, tail, boundary, err := multipartFrame(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var out uploadAnswer
	err = c.gatewayDo(ctx, gatewayCall{
		sandboxID: sandboxID, method: http.MethodPost, route: "/upload", idempotent: true, what: what,
		query:       url.Values{"path": {remotePath}, "sandbox_id": {sandboxID}},
		contentType: "multipart/form-data; boundary=" + boundary,
		open: func() (io.ReadCloser, int64, error) {
			rc, err := src.Open()
			if err != nil {
				return nil, 0, fmt.Errorf("opening the upload source: %w", err)
			}
			body := io.MultiReader(bytes.NewReader(head), &exactReader{r: rc, left: src.Size}, bytes.NewReader(tail))
			return readCloser{Reader: body, Closer: rc}, int64(len(head)) + src.Size + int64(len(tail)), nil
		},
		timeout: transferTimeout(src.Size),
		out:     &out,
		fail: func(err error) error {
			if StatusCodeOf(err) == http.StatusRequestEntityTooLarge {
				return fmt.Errorf("%s: the gateway refused the upload of %d bytes as too large (the platform's documented "+
					"limit is %d bytes per uploaded file): %w", what, src.Size, MaxUploadBytes, err)
			}
			return fileError(what, err)
		},
	})
	if err != nil {
		return nil, err
	}
	switch {
	case out.Success != nil && !*out.Success:
		return nil, fmt.Errorf("%s: the gateway answered success false", what)
	case out.Size == nil:
		return nil, fmt.Errorf("%s: the gateway's answer lacks the stored size", what)
	case *out.Size != src.Size:
		return nil, fmt.Errorf("%s: the gateway stored %d bytes, %d were sent", what, *out.Size, src.Size)
	}
	res := &UploadResult{Path: out.Path, Size: *out.Size}
	if res.Path == "" {
		res.Path = remotePath
	}
	return res, nil
}

// multipartFrame is the multipart form around one "file" field: the bytes
// before the file's content, those after it, and the boundary.
func multipartFrame(fileName string) (head, tail []byte, boundary string, err error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if _, err := mw.CreateFormFile("file", fileName); err != nil {
		return nil, nil, "", err
	}
	n := buf.Len()
	if err := mw.Close(); err != nil {
		return nil, nil, "", err
	}
	b := buf.Bytes()
	return b[:n:n], b[n:], mw.Boundary(), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// exactReader yields exactly left bytes of r, or fails: a source that is
// shorter or longer than it claimed must not pass for a whole file.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		// One more byte would make the source longer than its size.
		var one [1]byte
		if n, _ := e.r.Read(one[:]); n > 0 {
			return 0, errors.New("the upload source yields more bytes than its size")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) && e.left > 0 {
		return n, fmt.Errorf("the upload source ended %d bytes before its size", e.left)
	}
	if errors.Is(err, io.EOF) {
		err = nil // the extra-byte check above has the last word
	}
	return n, err
}

// DownloadFile is GET {base}/download?path=&sandbox_id=; sink is called
// once per attempt with that attempt's body and must discard what an
// earlier attempt gave it (a retried download starts over). An error sink
// returns is not retried unless it came from reading the body. The attempt
// gets the SDK's 300 s for the answer to begin, then the time its
// Content-Length needs at 1 MiB/s. A missing file wraps ErrFileNotFound
// [I: the gateway's status for it is taken to be 404, as for read-file;
// the SDK only shows that it is an HTTP error].
func (c *Client) DownloadFile(ctx context.Context, sandboxID, remotePath string, sink func(body io.Reader) error) error {
	what := fmt.Sprintf("downloading %s from sandbox %s", remotePath, sandboxID)
	if err := checkRemotePath(sandboxID, remotePath); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return c.gatewayDo(ctx, gatewayCall{
		sandboxID: sandboxID, method: http.MethodGet, route: "/download", idempotent: true, what: what,
		query:         url.Values{"path": {remotePath}, "sandbox_id": {sandboxID}},
		timeout:       transferBaseTimeout,
		answerTimeout: transferTimeout,
		stream:        sink,
		fail:          func(err error) error { return fileError(what, err) },
	})
}

// ReadFileRequest is one read-file call. Offset (negative: from the end)
// and Length select a window; VM sandboxes ignore both and answer the
// whole file, or 413 over their read limit.
type ReadFileRequest struct {
	Path           string
	Offset, Length *int64
	// Timeout bounds one attempt; zero means DefaultReadFileTimeout.
	Timeout time.Duration
}

// ReadFileResult is the read-file answer. TotalSize and Offset are nil
// when the gateway did not window the read (VM sandboxes).
type ReadFileResult struct {
	Content   string
	Size      int64
	TotalSize *int64
	Offset    *int64
	Truncated bool
}

type readFileAnswer struct {
	Content   *string `json:"content"`
	Size      int64   `json:"size"`
	TotalSize *int64  `json:"total_size"`
	Offset    *int64  `json:"offset"`
	Truncated *bool   `json:"truncated"`
}

// ReadFile is GET {base}/read-file?path=[&offset=&length=]: a text file's
// content (binary files come back through DownloadFile). A missing file
// wraps ErrFileNotFound, one over the read limit ErrFileTooLarge.
func (c *Client) ReadFile(ctx context.Context, sandboxID string, req ReadFileRequest) (*ReadFileResult, error) {
	what := fmt.Sprintf("reading %s in sandbox %s", req.Path, sandboxID)
	if err := checkRemotePath(sandboxID, req.Path); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	q := url.Values{"path": {req.Path}}
	if req.Offset != nil {
		q.Set("offset", strconv.FormatInt(*req.Offset, 10))
	}
	if req.Length != nil {
		q.Set("length", strconv.FormatInt(*req.Length, 10))
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultReadFileTimeout
	}
	var out readFileAnswer
	err := c.gatewayDo(ctx, gatewayCall{
		sandboxID: sandboxID, method: http.MethodGet, route: "/read-file", idempotent: true, what: what,
		query: q, timeout: timeout, out: &out,
		// File contents are the user's: kept out of debug records.
		withholdAnswer: true,
		fail:           func(err error) error { return fileError(what, err) },
	})
	if err != nil {
		return nil, err
	}
	if out.Content == nil {
		return nil, fmt.Errorf("%s: the gateway's answer lacks content", what)
	}
	res := &ReadFileResult{Content: *out.Content, Size: out.Size, TotalSize: out.TotalSize, Offset: out.Offset}
	if out.Truncated != nil {
		res.Truncated = *out.Truncated
	}
	return res, nil
}

// fileError maps a file route's final refusal: 404 and 413 to their
// sentinels (what names the sandbox and the path; 413 adds the gateway's
// reason).
func fileError(what string, err error) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch apiErr.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w: %w", what, ErrFileNotFound, err)
		case http.StatusRequestEntityTooLarge:
			reason := apiErr.Detail
			if reason == "" {
				reason = "the gateway gave no reason"
			}
			return fmt.Errorf("%s: %w (%s): %w", what, ErrFileTooLarge, reason, err)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}
