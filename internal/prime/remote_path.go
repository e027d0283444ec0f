package prime

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// CheckRemotePath is the one rule for a path in a sandbox that the
// provider writes, reads, changes or removes: absolute, clean, not "/", no
// NUL byte. The gateway's file sidecars do not run in a command's working
// directory, so a relative path would land somewhere unexpected; a clean
// path is the one spelling of a file, so state never holds "/a/b" and
// "/a//b" for one file; "/" is never a file to write, read or remove; a NUL
// byte ends the path early in the sandbox. The plan-time validators and
// every client call that names a path apply it.
func CheckRemotePath(p string) error {
	switch {
	case p == "":
		return errors.New("must not be empty")
	case strings.ContainsRune(p, 0):
		return errors.New("must not contain a NUL byte")
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is relative: give an absolute path such as %q", p, "/"+strings.TrimLeft(p, "./"))
	case p == "/":
		return errors.New(`"/" is the root directory: give a path below it`)
	case path.Clean(p) != p:
		return fmt.Errorf("%q is not clean (no trailing slash, no \".\" or \"..\" components, no \"//\"): write %q", p, path.Clean(p))
	}
	return nil
}

// checkRemotePath is CheckRemotePath for a client call, with the sandbox it
// names: refused before any request.
func checkRemotePath(sandboxID, p string) error {
	if sandboxID == "" {
		return fmt.Errorf("%w: no sandbox id", ErrInvalidRequest)
	}
	if err := CheckRemotePath(p); err != nil {
		return fmt.Errorf("%w: the remote path: %w", ErrInvalidRequest, err)
	}
	return nil
}
