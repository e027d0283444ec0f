package prime

// Whether a sandbox is still there: SandboxGone asks (what the client
// already knows, else one GET), GoneWithSandbox reads an error. Resources
// that live inside a sandbox (files, checkpoints in flight) go with it.

import (
	"context"
	"errors"
)

// SandboxGone reports whether a sandbox no longer runs (gone, or in a
// terminal status): what this process's client already learned, else one
// GET. Resources that live inside a sandbox (files) disappear with it.
// An error is a failed read, not an answer.
func (c *Client) SandboxGone(ctx context.Context, id string) (bool, error) {
	if known, ok := c.Known(id); ok && known.Status != "" {
		return IsTerminalStatus(known.Status), nil
	}
	sb, err := c.GetSandbox(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return IsTerminalStatus(sb.Status), nil
}

// GoneWithSandbox reports an error that means the sandbox is not there any
// more (so whatever lived in it is gone too).
func GoneWithSandbox(err error) bool {
	var failed *SandboxFailedError
	if errors.As(err, &failed) && IsTerminalStatus(failed.Status) {
		return true
	}
	return errors.Is(err, ErrNotFound) && !errors.Is(err, ErrFileNotFound)
}
