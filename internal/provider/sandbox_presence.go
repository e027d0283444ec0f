package provider

import (
	"context"
	"errors"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// sandboxGone reports whether a sandbox no longer runs (gone, or in a
// terminal status): what this process's client already learned, else one
// GET. Resources that live inside a sandbox (files) disappear with it.
// An error is a failed read, not an answer.
func sandboxGone(ctx context.Context, c *prime.Client, id string) (bool, error) {
	if known, ok := c.Known(id); ok && known.Status != "" {
		return prime.IsTerminalStatus(known.Status), nil
	}
	sb, err := c.GetSandbox(ctx, id)
	switch {
	case errors.Is(err, prime.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return prime.IsTerminalStatus(sb.Status), nil
}

// goneWithSandbox reports an error that means the sandbox is not there any
// more (so whatever lived in it is gone too).
func goneWithSandbox(err error) bool {
	var failed *prime.SandboxFailedError
	if errors.As(err, &failed) && prime.IsTerminalStatus(failed.Status) {
		return true
	}
	return errors.Is(err, prime.ErrNotFound) && !errors.Is(err, prime.ErrFileNotFound)
}
