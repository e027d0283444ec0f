package prime

// Transfers built on the file routes and ordinary commands: a file put
// under its final name only when whole, a directory shipped as one tar
// archive, a remote directory fetched as one. verifiers (its Prime
// runtime's write) does the same: mkdir -p the parent through a command,
// because the gateway's upload sidecar cannot create it, and never inline
// file bytes in a command line (a tarball overflows its length limit).

import (
	"context"
	"crypto/rand"
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
// req.Path. Three gateway calls: a command creating the parent, the
// upload to a temporary name beside the destination, and a command moving
// it into place (or unpacking it and removing it). A partial upload never
// sits under the final name; on a failure after the upload began the
// temporary file is removed (best effort). It returns the gateway's answer
// to the upload, with Path the destination.
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
	dest = path.Clean(dest)
	if dest == "/" {
		return nil, fmt.Errorf("%s: %w: the destination is the root directory", what, ErrInvalidRequest)
	}
	if req.Mode != nil && *req.Mode > 0o7777 {
		return nil, fmt.Errorf("%s: %w: mode %o is not a permission mode", what, ErrInvalidRequest, *req.Mode)
	}
	parent := path.Dir(dest)
	tmp := path.Join(parent, ".prime-upload-"+randomHex(8))
	if req.Extract {
		tmp += ".tar"
	}
	if err := c.runChecked(ctx, sandboxID, "creating the parent directory", mkdirCommand(parent), transferCommandTimeout); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
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
		c.removeTemporary(ctx, sandboxID, tmp, err)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res.Path = dest
	return res, nil
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

// removeTemporary removes a temporary file, best effort: on a context of
// its own (an interrupted apply still cleans up), not when the sandbox is
// gone (nothing to clean), its failure only logged.
func (c *Client) removeTemporary(ctx context.Context, sandboxID, tmp string, cause error) {
	if errors.Is(cause, ErrSandboxNotRunning) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := c.runChecked(rctx, sandboxID, "removing a temporary file", removeCommand(tmp, false), cleanupTimeout); err != nil {
		c.debug(ctx, "Prime temporary file not removed", map[string]any{"sandbox_id": sandboxID, "path": tmp, "error": err.Error()})
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
// missing path is no error. It refuses "/" (and anything that cleans to
// it) without sending anything.
func (c *Client) RemovePath(ctx context.Context, sandboxID, p string, recursive bool) error {
	what := fmt.Sprintf("removing %s in sandbox %s", p, sandboxID)
	if err := checkRemotePath(sandboxID, p); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if path.Clean(p) == "/" {
		return fmt.Errorf("%s: %w: refusing to remove the root directory", what, ErrInvalidRequest)
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
	c.removeTemporary(ctx, sandboxID, tmp, err)
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
