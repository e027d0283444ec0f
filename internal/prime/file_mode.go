package prime

import (
	"context"
	"fmt"
)

// ChangeMode sets the permission bits of a path in a sandbox (chmod), as
// PutFile does after an upload: one command.
func (c *Client) ChangeMode(ctx context.Context, sandboxID, p string, mode uint32) error {
	what := fmt.Sprintf("changing the mode of %s in sandbox %s", p, sandboxID)
	if err := checkRemotePath(sandboxID, p); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if mode > 0o7777 {
		return fmt.Errorf("%s: %w: mode %o is not a permission mode", what, ErrInvalidRequest, mode)
	}
	if err := c.runChecked(ctx, sandboxID, "changing the mode", chmodCommand(mode, p), transferCommandTimeout); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
