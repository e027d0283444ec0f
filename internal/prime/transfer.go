package prime

// Transfers built on the file routes and ordinary commands: a file put
// under its final name only when whole, a file over the platform's upload
// limit sent in parts and joined in the sandbox, a directory shipped as one
// tar archive, a remote directory fetched as one. The platform's upload
// creates missing parent directories (the 2026 files guide), so nothing is
// made before an upload; as verifiers does, file bytes are never inlined in
// a command line (a tarball overflows its length limit).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"
)

// transferCommandTimeout bounds the small commands around a transfer
// (mkdir, mv, rm, chmod).
const transferCommandTimeout = 60 * time.Second

// cleanupTimeout bounds a best-effort removal of a temporary file, which
// runs even when the caller's context has ended.
const cleanupTimeout = 30 * time.Second

// shellSafe is Python's shlex.quote notion of a word that needs no quotes
// (its _find_unsafe: [^\w@%+=:,./-] with re.ASCII).
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell exactly as Python's shlex.quote
// does: a pair of single quotes for the empty string, s itself when every
// byte is safe, else s in single quotes with each ' written as '"'"'.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// randomHex is n random bytes as 2n lowercase hex characters.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// PutFileRequest is one file or directory to place in a sandbox.
type PutFileRequest struct {
	Path   string       // absolute destination
	Source UploadSource // the file's bytes, or a tar archive with Extract
	Mode   *uint32      // chmod after the move (octal), nil: leave the gateway's default
	// Extract: Source is a tar archive; unpack it into the directory Path
	// (created when missing; what it holds already stays unless the
	// archive overwrites it).
	Extract bool
}

// PutFile places a file (or, with Extract, a directory's archive) at
// req.Path: the upload to a temporary name beside the destination (the
// upload creates the missing parents), then one command that moves it into
// place (or unpacks and removes it). That is two gateway calls for a file
// up to MaxUploadBytes. A larger one goes up in parts of MaxUploadBytes,
// each to a temporary name of its own, and the one command joins them,
// checks the joined file's sha256 (Source.SHA256, or read from the source
// first), and only then moves (or unpacks) it. A partial upload never sits
// under the final name; on a failure after the upload began the temporary
// files are removed (best effort). It returns the gateway's answer to the
// upload (a multi-part one's whole size), with Path the destination.
func (c *Client) PutFile(ctx context.Context, sandboxID string, req PutFileRequest) (*UploadResult, error) {
	dest := req.Path
	kind := "file"
	if req.Extract {
		kind = "directory"
	}
	what := fmt.Sprintf("putting the %s %s in sandbox %s", kind, dest, sandboxID)
	if err := checkRemotePath(sandboxID, dest); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if req.Mode != nil && *req.Mode > 0o7777 {
		return nil, fmt.Errorf("%s: %w: mode %o is not a permission mode", what, ErrInvalidRequest, *req.Mode)
	}
	if req.Source.Open == nil || req.Source.Size < 0 {
		return nil, fmt.Errorf("%s: %w: the upload source needs Open and a size", what, ErrInvalidRequest)
	}
	tmp := path.Join(path.Dir(dest), ".prime-upload-"+randomHex(8))
	if req.Extract {
		tmp += ".tar"
	}
	if req.Source.Size > MaxUploadBytes {
		res, err := c.putParts(ctx, sandboxID, tmp, dest, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return res, nil
	}
	res, err := c.UploadFile(ctx, sandboxID, tmp, req.Source)
	if err == nil {
		if req.Extract {
			err = c.runChecked(ctx, sandboxID, "unpacking the archive", extractCommand(tmp, dest, req.Mode), transferTimeout(req.Source.Size))
		} else {
			err = c.runChecked(ctx, sandboxID, "moving the upload into place", moveCommand(tmp, dest, req.Mode), transferCommandTimeout)
		}
	}
	if err != nil {
		// A partial upload, or one whose move or unpacking did not happen
		// (or may not have), must not stay behind.
		c.removeTemporary(ctx, sandboxID, []string{tmp}, err)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res.Path = dest
	return res, nil
}

// putParts uploads a source over MaxUploadBytes in parts (tmp.part0,
// tmp.part1, ...), then runs joinCommand: the parts joined into tmp, its
// sha256 checked, then the move or the unpacking. Whatever fails, the
// parts and tmp are removed.
func (c *Client) putParts(ctx context.Context, sandboxID, tmp, dest string, req PutFileRequest) (*UploadResult, error) {
	src := req.Source
	sum := src.SHA256
	if sum == "" {
		var err error
		if sum, err = sourceSHA256(src); err != nil {
			return nil, err
		}
	}
	n := int((src.Size + MaxUploadBytes - 1) / MaxUploadBytes)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%s.part%d", tmp, i)
	}
	cleanup := append([]string{tmp}, parts...)
	for i, part := range parts {
		off := int64(i) * MaxUploadBytes
		size := min(MaxUploadBytes, src.Size-off)
		if _, err := c.UploadFile(ctx, sandboxID, part, partSource(src, i, off, size)); err != nil {
			c.removeTemporary(ctx, sandboxID, cleanup[:i+2], err)
			return nil, fmt.Errorf("part %d of %d: %w", i+1, n, err)
		}
	}
	doing := "joining the parts and moving the file into place"
	if req.Extract {
		doing = "joining the parts and unpacking the archive"
	}
	err := c.runChecked(ctx, sandboxID, doing, joinCommand(parts, tmp, dest, sum, req.Extract, req.Mode), transferTimeout(src.Size))
	var failed *CommandFailedError
	if errors.As(err, &failed) && failed.ExitCode == joinChecksumExit {
		err = fmt.Errorf("%w: the file joined from %d parts does not have the sha256 of the source (%s); nothing was "+
			"put in place", err, n, sum)
	}
	if err != nil {
		c.removeTemporary(ctx, sandboxID, cleanup, err)
		return nil, err
	}
	return &UploadResult{Path: dest, Size: src.Size}, nil
}

// Exit codes of joinCommand's own checks.
const (
	joinCatExit      = 10 // joining the parts failed
	joinChecksumExit = 11 // the joined file is not the source
)

// joinCommand joins parts into tmp, checks tmp's sha256, then moves tmp
// to dest (or unpacks it into dest), and removes the parts and tmp
// whatever happened:
//
//	(cat -- P0 P1 > TMP || exit 10) && (sha256sum -- TMP | grep -q '^SUM ' || exit 11) &&
//	  mv -f -- TMP DEST [&& chmod MODE -- DEST]; s=$?; rm -f -- TMP P0 P1; exit $s
func joinCommand(parts []string, tmp, dest, sum string, extract bool, mode *uint32) string {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = shellQuote(p)
	}
	all := strings.Join(quoted, " ")
	cmd := fmt.Sprintf("(cat -- %s > %s || exit %d) && (sha256sum -- %s | grep -q %s || exit %d) && ",
		all, shellQuote(tmp), joinCatExit, shellQuote(tmp), shellQuote("^"+sum+" "), joinChecksumExit)
	if extract {
		cmd += mkdirCommand(dest) + " && tar -xf " + shellQuote(tmp) + " -C " + shellQuote(dest)
	} else {
		cmd += "mv -f -- " + shellQuote(tmp) + " " + shellQuote(dest)
	}
	if mode != nil {
		cmd += " && " + chmodCommand(*mode, dest)
	}
	return cmd + "; s=$?; rm -f -- " + shellQuote(tmp) + " " + all + "; exit $s"
}

// partSource is the part of src that starts at off: its own reader per
// attempt, seeking when the source can, else skipping off bytes.
func partSource(src UploadSource, i int, off, size int64) UploadSource {
	return UploadSource{
		Name: fmt.Sprintf("%s.part%d", orDefault(src.Name, "upload"), i),
		Size: size,
		Open: func() (io.ReadCloser, error) {
			rc, err := src.Open()
			if err != nil {
				return nil, err
			}
			if seeker, ok := rc.(io.Seeker); ok {
				_, err = seeker.Seek(off, io.SeekStart)
			} else {
				_, err = io.CopyN(io.Discard, rc, off)
			}
			if err != nil {
				rc.Close()
				return nil, fmt.Errorf("skipping to byte %d of the upload source: %w", off, err)
			}
			return readCloser{Reader: io.LimitReader(rc, size), Closer: rc}, nil
		},
	}
}

// sourceSHA256 reads a source once for its sha256 (and checks its size).
func sourceSHA256(src UploadSource) (string, error) {
	rc, err := src.Open()
	if err != nil {
		return "", fmt.Errorf("opening the upload source: %w", err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the upload source: %w", err)
	case n != src.Size:
		return "", fmt.Errorf("the upload source yields %d bytes, not its size %d", n, src.Size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func mkdirCommand(dir string) string { return "mkdir -p -- " + shellQuote(dir) }

func moveCommand(tmp, dest string, mode *uint32) string {
	cmd := "mv -f -- " + shellQuote(tmp) + " " + shellQuote(dest)
	if mode != nil {
		cmd += " && " + chmodCommand(*mode, dest)
	}
	return cmd
}

func extractCommand(tmp, dest string, mode *uint32) string {
	cmd := mkdirCommand(dest) + " && tar -xf " + shellQuote(tmp) + " -C " + shellQuote(dest)
	if mode != nil {
		cmd += " && " + chmodCommand(*mode, dest)
	}
	return cmd + "; s=$?; rm -f -- " + shellQuote(tmp) + "; exit $s"
}

func chmodCommand(mode uint32, p string) string {
	return fmt.Sprintf("chmod %o -- %s", mode, shellQuote(p))
}

func removeCommand(p string, recursive bool) string {
	flags := "-f"
	if recursive {
		flags = "-rf"
	}
	return "rm " + flags + " -- " + shellQuote(p)
}

// removeTemporary removes temporary files, best effort: on a context of
// its own (an interrupted apply still cleans up), not when the sandbox is
// gone (nothing to clean), its failure only logged.
func (c *Client) removeTemporary(ctx context.Context, sandboxID string, tmps []string, cause error) {
	if errors.Is(cause, ErrSandboxNotRunning) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	quoted := make([]string, len(tmps))
	for i, t := range tmps {
		quoted[i] = shellQuote(t)
	}
	if err := c.runChecked(rctx, sandboxID, "removing temporary files", "rm -f -- "+strings.Join(quoted, " "), cleanupTimeout); err != nil {
		c.debug(ctx, "Prime temporary file not removed", map[string]any{"sandbox_id": sandboxID, "paths": tmps, "error": err.Error()})
	}
}

// runChecked runs a command and fails on a non-zero exit, with the start of
// its stderr.
func (c *Client) runChecked(ctx context.Context, sandboxID, doing, cmd string, timeout time.Duration) error {
	res, err := c.Exec(ctx, sandboxID, ExecRequest{Command: cmd, Timeout: timeout})
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	if res.ExitCode != 0 {
		return &CommandFailedError{Doing: doing, Command: cmd, ExitCode: res.ExitCode, Stderr: clip(res.Stderr, 512)}
	}
	return nil
}

// CommandFailedError is a command of the client's own (mkdir, mv, tar, ...)
// that exited non-zero.
type CommandFailedError struct {
	Doing    string
	Command  string
	ExitCode int
	Stderr   string // the start of its stderr
}

func (e *CommandFailedError) Error() string {
	msg := fmt.Sprintf("%s: %s exited %d", e.Doing, quoteCommand(e.Command), e.ExitCode)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// RemovePath removes a file (rm -f) or a tree (rm -rf) in a sandbox. A
// missing path is no error. It refuses "/" (CheckRemotePath) without
// sending anything.
func (c *Client) RemovePath(ctx context.Context, sandboxID, p string, recursive bool) error {
	what := fmt.Sprintf("removing %s in sandbox %s", p, sandboxID)
	if err := checkRemotePath(sandboxID, p); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := c.runChecked(ctx, sandboxID, "removing", removeCommand(p, recursive), transferCommandTimeout); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// FetchDirectory packs a remote directory into a tar archive in /tmp (a
// command), downloads it to sink (which may be called again on a retry, see
// DownloadFile), and removes the archive (a command, always attempted). The
// archive's names are relative to the directory ("./a/b"); it is untrusted:
// unpack it with ExtractTar. A missing directory wraps ErrFileNotFound.
func (c *Client) FetchDirectory(ctx context.Context, sandboxID, remoteDir string, sink func(tarStream io.Reader) error) error {
	what := fmt.Sprintf("fetching the directory %s from sandbox %s", remoteDir, sandboxID)
	if err := checkRemotePath(sandboxID, remoteDir); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	tmp := "/tmp/.prime-fetch-" + randomHex(8) + ".tar"
	err := c.runChecked(ctx, sandboxID, "packing the directory", packCommand(tmp, remoteDir), transferBaseTimeout)
	var failed *CommandFailedError
	if errors.As(err, &failed) && missingDirectory(failed.Stderr) {
		err = fmt.Errorf("%w: %s: %w", ErrFileNotFound, remoteDir, err)
	}
	if err == nil {
		err = c.DownloadFile(ctx, sandboxID, tmp, sink)
	}
	c.removeTemporary(ctx, sandboxID, []string{tmp}, err)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func packCommand(tmp, dir string) string {
	return "tar -cf " + shellQuote(tmp) + " -C " + shellQuote(dir) + " ."
}

// missingDirectory reads tar's complaint about a directory it cannot enter
// (GNU tar: "Cannot chdir: No such file or directory"; busybox: "can't
// change directory to ...: No such file or directory") [I: the message,
// not a status, is what tells; both tars print the C library's text].
func missingDirectory(stderr string) bool {
	return strings.Contains(stderr, "No such file or directory")
}
