package files

// Artifacts to local disk: what prime_sandbox_artifact and each member of
// prime_fleet_artifact do. The bytes never pass through state (it records
// each file's sha256 and size), a partial file is never left under its
// final name (downloads land under a temporary name and are renamed), and
// because results come from the agent — the untrusted party the egress lock
// exists for — an archive never writes outside its destination and a size
// cap stops a result from filling the disk.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Artifact kinds: what the remote path is.
const (
	ArtifactFile      = "file"      // one file, written to local_path
	artifactDirectory = "directory" // a directory, archived in the sandbox and unpacked into local_path
	artifactArchive   = "archive"   // a tar archive the agent wrote, unpacked into local_path
)

var artifactKinds = []string{ArtifactFile, artifactDirectory, artifactArchive}

// Size and count caps of one artifact.
const (
	DefaultArtifactMaxSize int64 = 1 << 30
	maxArtifactEntries           = 100000
)

// ArtifactRequest is one download.
type ArtifactRequest struct {
	SandboxID, Remote, Local string
	Kind                     string
	MaxBytes                 int64
	AllowMissing             bool
	// Scrub lists secret values replaced by *** on the way to disk (a
	// file only: a job's full output, which may echo env_wo values).
	Scrub []string
	// RunID, when set, is the run whose result it must be (checkRunResult):
	// one that is not is not downloaded, and reads as missing and Stale.
	RunID string
}

// ArtifactFileRecord is one file written to disk.
type ArtifactFileRecord struct {
	Path   string // local path
	Size   int64
	SHA256 string
}

// ArtifactResult is what a download wrote.
type ArtifactResult struct {
	Exists  bool
	Files   []ArtifactFileRecord
	Refused []prime.RefusedEntry
	// Stale: a result was there but not RunID's (see checkRunResult);
	// StaleWhy says why, for the warning.
	Stale    bool
	StaleWhy string
}

// errArtifactTooLarge: a result over the cap; nothing is kept.
var errArtifactTooLarge = errors.New("larger than max_size")

// DownloadArtifact downloads one artifact. A missing remote path is an
// error naming sandbox and path, unless AllowMissing.
func DownloadArtifact(ctx context.Context, c *prime.Client, req ArtifactRequest) (*ArtifactResult, error) {
	var res *ArtifactResult
	var err error
	if req.RunID != "" {
		check, err := checkRunResult(ctx, c, req.SandboxID, req.Remote, req.RunID)
		switch {
		case err != nil:
			return nil, err
		case check == runResultGone:
			return nil, fmt.Errorf("sandbox %s is gone, and %s with it", req.SandboxID, req.Remote)
		case check == runResultMissing && req.AllowMissing:
			return &ArtifactResult{}, nil
		case check == runResultMissing:
			return nil, fmt.Errorf("run %s wrote no %s %s in sandbox %s (set allow_missing = true if that can be normal)",
				req.RunID, kindNoun(req.Kind), req.Remote, req.SandboxID)
		case check.stale() && req.AllowMissing:
			return &ArtifactResult{Stale: true, StaleWhy: check.why(req.Remote, req.SandboxID, req.RunID)}, nil
		case check.stale():
			return nil, fmt.Errorf("%s: %w; nothing was downloaded (set allow_missing = true to record it as missing instead)",
				check.why(req.Remote, req.SandboxID, req.RunID), errStaleResult)
		}
	}
	switch req.Kind {
	case artifactDirectory, artifactArchive:
		res, err = downloadTree(ctx, c, req)
	default:
		res, err = DownloadOneFile(ctx, c, req)
	}
	switch {
	case errors.Is(err, prime.ErrFileNotFound) && req.AllowMissing:
		return &ArtifactResult{}, nil
	case errors.Is(err, prime.ErrFileNotFound):
		return nil, fmt.Errorf("there is no %s %s in sandbox %s (set allow_missing = true if that can be normal)",
			kindNoun(req.Kind), req.Remote, req.SandboxID)
	case errors.Is(err, errArtifactTooLarge):
		return nil, fmt.Errorf("%s in sandbox %s is larger than max_size (%d bytes); nothing was kept. Raise max_size if "+
			"the result is expected to be that large", req.Remote, req.SandboxID, req.MaxBytes)
	case err != nil:
		return nil, fmt.Errorf("downloading %s from sandbox %s to %s: %w", req.Remote, req.SandboxID, req.Local, err)
	}
	return res, nil
}

func kindNoun(kind string) string {
	switch kind {
	case artifactDirectory:
		return "directory"
	case artifactArchive:
		return "archive"
	}
	return "file"
}

// DownloadOneFile streams the file into a temporary file beside the
// destination, hashing it, and renames it into place once it is whole.
func DownloadOneFile(ctx context.Context, c *prime.Client, req ArtifactRequest) (*ArtifactResult, error) {
	dir := filepath.Dir(req.Local)
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: results are the operator's to read
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(req.Local)+".prime-download-*")
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	defer func() {
		if tmp != nil {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	var rec ArtifactFileRecord
	err = c.DownloadFile(ctx, req.SandboxID, req.Remote, func(body io.Reader) error {
		// A retried download starts over.
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := tmp.Truncate(0); err != nil {
			return err
		}
		h := sha256.New()
		in := &countingReader{r: io.LimitReader(body, req.MaxBytes+1)}
		n, err := prime.ScrubStream(io.MultiWriter(tmp, h), in, req.Scrub)
		if err != nil {
			return err
		}
		if in.n > req.MaxBytes {
			return errArtifactTooLarge
		}
		rec = ArtifactFileRecord{Path: req.Local, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	tmp = nil
	if err := os.Rename(name, req.Local); err != nil {
		_ = os.Remove(name)
		return nil, err
	}
	return &ArtifactResult{Exists: true, Files: []ArtifactFileRecord{rec}}, nil
}

// countingReader counts what passes through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// downloadTree unpacks a directory (archived in the sandbox) or an archive
// into a fresh temporary directory beside the destination, through the
// untrusted-archive extractor, then swaps it into place.
func downloadTree(ctx context.Context, c *prime.Client, req ArtifactRequest) (*ArtifactResult, error) {
	parent := filepath.Dir(req.Local)
	if err := os.MkdirAll(parent, 0o755); err != nil { //nolint:gosec // G301: results are the operator's to read
		return nil, err
	}
	var staged string
	var extracted *prime.ExtractResult
	cleanup := func() {
		if staged != "" {
			_ = os.RemoveAll(staged)
			staged = ""
		}
	}
	defer cleanup()
	sink := func(stream io.Reader) error {
		cleanup() // a retried download starts over
		dir, err := os.MkdirTemp(parent, "."+filepath.Base(req.Local)+".prime-download-*")
		if err != nil {
			return err
		}
		staged = dir
		res, err := prime.ExtractTar(stream, dir, prime.ExtractLimits{MaxBytes: req.MaxBytes, MaxEntries: maxArtifactEntries})
		if err != nil {
			if errors.Is(err, prime.ErrArchiveTooLarge) {
				return errArtifactTooLarge
			}
			return err
		}
		extracted = res
		return nil
	}
	var err error
	if req.Kind == artifactDirectory {
		err = c.FetchDirectory(ctx, req.SandboxID, req.Remote, sink)
	} else {
		err = c.DownloadFile(ctx, req.SandboxID, req.Remote, sink)
	}
	if err != nil {
		return nil, err
	}
	if err := swapDirectory(staged, req.Local); err != nil {
		return nil, err
	}
	staged = ""
	out := &ArtifactResult{Exists: true, Refused: extracted.Refused}
	for _, f := range extracted.Files {
		out.Files = append(out.Files, ArtifactFileRecord{Path: filepath.Join(req.Local, filepath.FromSlash(f.Name)), Size: f.Size, SHA256: f.SHA256})
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, nil
}

// swapDirectory puts the staged directory at dest: an earlier download
// there is moved aside first and removed after, so dest is never a mix of
// two downloads. A file at dest is not replaced by a directory silently.
func swapDirectory(staged, dest string) error {
	fi, err := os.Lstat(dest)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.Rename(staged, dest)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory; remove it or choose another local_path", dest)
	}
	old := staged + ".old"
	if err := os.Rename(dest, old); err != nil {
		return err
	}
	if err := os.Rename(staged, dest); err != nil {
		_ = os.Rename(old, dest)
		return err
	}
	return os.RemoveAll(old)
}

// localFilesIntact reports whether every recorded file is still on disk
// with its recorded size (hashing every refresh would read gigabytes).
func localFilesIntact(files []ArtifactFileRecord) bool {
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
			return false
		}
	}
	return true
}

// removeLocalArtifact removes what a download wrote: the file, or the
// directory it unpacked into.
func removeLocalArtifact(kind, local string) error {
	if kind == ArtifactFile {
		if err := os.Remove(local); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.RemoveAll(local)
}

// refusedSummary renders refused archive entries for a warning.
func refusedSummary(refused []prime.RefusedEntry) string {
	var b strings.Builder
	for i, r := range refused {
		if i == 20 {
			fmt.Fprintf(&b, "\n  … and %d more", len(refused)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %q: %s", r.Name, r.Reason)
	}
	return b.String()
}
