package files

// The rules every file upload shares — prime_sandbox_file and each member
// of prime_fleet_file: which source an upload has, its plan-time
// fingerprint (so a changed local file or directory is a planned
// replacement, not a surprise at apply), how its bytes are opened for the
// upload, and the checks of remote paths and modes.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// sourceKind is where an upload's bytes come from.
type sourceKind int

const (
	sourceNone sourceKind = iota
	sourceContent
	sourceBase64
	sourceContentWO
	sourceFile
	sourceDir
)

// sourceAttributes are the source arguments, in the order messages name
// them.
var sourceAttributes = []string{"content", "content_base64", "content_wo", "source", "source_dir"}

// fileSource is one upload's source, as configured.
type fileSource struct {
	kind sourceKind
	// value is the content (text, base64 or write-only) or the local path.
	value string
}

// sourceArgs are the source arguments of a configuration: nil for unset.
type sourceArgs struct {
	Content, ContentBase64, ContentWO, Source, SourceDir *string
}

// sourceOf picks the one source that is set; it reports an error naming
// the attributes when none or several are.
func sourceOf(a sourceArgs) (fileSource, error) {
	var set []string
	var src fileSource
	for _, c := range []struct {
		name string
		v    *string
		kind sourceKind
	}{
		{"content", a.Content, sourceContent}, {"content_base64", a.ContentBase64, sourceBase64},
		{"content_wo", a.ContentWO, sourceContentWO}, {"source", a.Source, sourceFile}, {"source_dir", a.SourceDir, sourceDir},
	} {
		if c.v != nil {
			set = append(set, c.name)
			src = fileSource{kind: c.kind, value: *c.v}
		}
	}
	switch len(set) {
	case 1:
		return src, nil
	case 0:
		return fileSource{}, fmt.Errorf("set exactly one of %s", strings.Join(sourceAttributes, ", "))
	}
	return fileSource{}, fmt.Errorf("%s are all set; set exactly one of %s", strings.Join(set, " and "), strings.Join(sourceAttributes, ", "))
}

// attribute is the argument the source came from.
func (s fileSource) attribute() string {
	if s.kind == sourceNone {
		return ""
	}
	return sourceAttributes[s.kind-1]
}

// isDir reports a directory upload (a tar archive unpacked in the sandbox).
func (s fileSource) isDir() bool { return s.kind == sourceDir }

// check validates what can be checked without reading the bytes: base64
// that decodes, a local file that is a regular file, a local directory
// that is a directory. Errors name the attribute and the value.
func (s fileSource) check() error {
	switch s.kind {
	case sourceBase64:
		if _, err := base64.StdEncoding.DecodeString(s.value); err != nil {
			return fmt.Errorf("content_base64: not valid base64 (standard alphabet, padded): %w", err)
		}
	case sourceFile:
		fi, err := os.Stat(s.value)
		switch {
		case err != nil:
			return fmt.Errorf("source: local file %q: %w", s.value, errNotExistPlain(err))
		case !fi.Mode().IsRegular():
			return fmt.Errorf("source: %q is not a regular file (for a directory, use source_dir)", s.value)
		}
	case sourceDir:
		fi, err := os.Stat(s.value)
		switch {
		case err != nil:
			return fmt.Errorf("source_dir: local directory %q: %w", s.value, errNotExistPlain(err))
		case !fi.IsDir():
			return fmt.Errorf("source_dir: %q is not a directory (for a file, use source)", s.value)
		}
	}
	return nil
}

// errNotExistPlain says "does not exist" without the Go operation prefix.
func errNotExistPlain(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("does not exist")
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// bytesOf is the in-memory content of a content, content_base64 or
// content_wo source.
func (s fileSource) bytesOf() ([]byte, error) {
	switch s.kind {
	case sourceContent, sourceContentWO:
		return []byte(s.value), nil
	case sourceBase64:
		return base64.StdEncoding.DecodeString(s.value)
	}
	return nil, fmt.Errorf("%s has no in-memory content", s.attribute())
}

// fingerprint is an upload's sha256 and size, known at plan time: of the
// bytes for a file, of the deterministic tar archive for a directory. It
// streams: a large local file is read once, never held.
type fingerprint struct {
	SHA256 string
	Size   int64
}

func (s fileSource) fingerprint() (fingerprint, error) {
	if err := s.check(); err != nil {
		return fingerprint{}, err
	}
	h := sha256.New()
	var n int64
	switch s.kind {
	case sourceFile:
		f, err := os.Open(s.value)
		if err != nil {
			return fingerprint{}, fmt.Errorf("source: reading %q: %w", s.value, err)
		}
		defer f.Close()
		if n, err = io.Copy(h, f); err != nil {
			return fingerprint{}, fmt.Errorf("source: reading %q: %w", s.value, err)
		}
	case sourceDir:
		var err error
		if n, err = prime.WriteDirTar(h, s.value); err != nil {
			return fingerprint{}, fmt.Errorf("source_dir: archiving %q: %w", s.value, err)
		}
	default:
		b, err := s.bytesOf()
		if err != nil {
			return fingerprint{}, err
		}
		h.Write(b)
		n = int64(len(b))
	}
	return fingerprint{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// openedSource is a source ready to upload, as many times as members need
// it: Upload gives each upload its own reader. Close removes what opening
// made (a spooled archive).
type openedSource struct {
	Upload prime.UploadSource
	Print  fingerprint
	close  func()
}

func (o *openedSource) Close() {
	if o != nil && o.close != nil {
		o.close()
	}
}

// errSourceChanged: a local source whose bytes are not what the plan
// fingerprinted.
var errSourceChanged = errors.New("changed since the plan")

// open prepares the upload and checks it against the planned fingerprint
// (empty: not checked). A directory is archived once into a temporary file
// (removed by Close), so every member's upload reads the same bytes and
// memory holds none of them; a local file is streamed from disk by each
// upload.
func (s fileSource) open(planned string) (*openedSource, error) {
	switch s.kind {
	case sourceFile:
		fp, err := s.fingerprint()
		if err != nil {
			return nil, err
		}
		if planned != "" && fp.SHA256 != planned {
			return nil, fmt.Errorf("source: %q %w (sha256 %s, planned %s): run terraform apply again to plan the new content",
				s.value, errSourceChanged, fp.SHA256, planned)
		}
		name := filepath.Base(s.value)
		return &openedSource{Print: fp, Upload: prime.UploadSource{Name: name, Size: fp.Size, SHA256: fp.SHA256,
			Open: func() (io.ReadCloser, error) { return os.Open(s.value) }}}, nil
	case sourceDir:
		return spoolDirArchive(s.value, planned)
	}
	b, err := s.bytesOf()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	fp := fingerprint{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}
	return &openedSource{Print: fp, Upload: prime.UploadSource{Name: "content", Size: fp.Size, SHA256: fp.SHA256,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}}, nil
}

// spoolDirArchive writes the directory's archive once to a temporary file,
// hashing it on the way.
func spoolDirArchive(dir, planned string) (*openedSource, error) {
	f, err := os.CreateTemp("", "prime-source-dir-*.tar")
	if err != nil {
		return nil, fmt.Errorf("source_dir: spooling the archive of %q: %w", dir, err)
	}
	name := f.Name()
	cleanup := func() { _ = os.Remove(name) }
	h := sha256.New()
	n, werr := prime.WriteDirTar(io.MultiWriter(f, h), dir)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		cleanup()
		return nil, fmt.Errorf("source_dir: archiving %q: %w", dir, werr)
	}
	fp := fingerprint{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}
	if planned != "" && fp.SHA256 != planned {
		cleanup()
		return nil, fmt.Errorf("source_dir: %q %w (archive sha256 %s, planned %s): run terraform apply again to plan the new content",
			dir, errSourceChanged, fp.SHA256, planned)
	}
	return &openedSource{Print: fp, close: cleanup, Upload: prime.UploadSource{
		Name: filepath.Base(dir) + ".tar", Size: n, SHA256: fp.SHA256,
		Open: func() (io.ReadCloser, error) { return os.Open(name) }}}, nil //nolint:gosec // G304: the spool file this function made
}

// parseMode reads an octal permission mode such as "0644" or "755".
func parseMode(s string) (uint32, error) {
	if len(s) < 3 || len(s) > 4 {
		return 0, fmt.Errorf("%q is not an octal mode such as \"0644\" (3 or 4 octal digits)", s)
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not an octal mode such as \"0644\" (digits 0-7 only)", s)
	}
	if v > 0o7777 {
		return 0, fmt.Errorf("%q is out of range (at most 7777)", s)
	}
	return uint32(v), nil
}

// remotePathValidator applies prime.CheckRemotePath at plan time.
type remotePathValidator struct{}

func (remotePathValidator) Description(context.Context) string {
	return "must be an absolute, clean path in the sandbox other than \"/\""
}
func (v remotePathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (remotePathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := prime.CheckRemotePath(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid path", fmt.Sprintf("%s: %v", req.Path, err))
	}
}

// modeValidator applies parseMode at plan time.
type modeValidator struct{}

func (modeValidator) Description(context.Context) string {
	return "must be an octal permission mode such as \"0644\""
}
func (v modeValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (modeValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := parseMode(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid mode", fmt.Sprintf("%s: %v", req.Path, err))
	}
}
