package prime

import (
	"context"
	"errors"
	"fmt"
)

// ErrForeign is wrapped by the errors of a sandbox the platform reports as
// another account's or team's: routes addressed by its ID answer 404 (they
// take the owner from the sandbox), while the status batch names it
// FORBIDDEN.
var ErrForeign = errors.New("the sandbox belongs to another account or team")

// ForeignError is a 404 for a sandbox the status batch reports FORBIDDEN:
// not gone, only not this API key's (or team's) to see. It wraps ErrForeign,
// never ErrNotFound, so a caller that drops what is gone keeps it.
type ForeignError struct {
	SandboxID string
	// NotFound is the 404 the route answered.
	NotFound error
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("sandbox %s belongs to another account or team: the platform answers %v, and its status batch "+
		"reports FORBIDDEN. Check the provider's api_key and team_id: they must be those the sandbox was created with",
		e.SandboxID, e.NotFound)
}

func (e *ForeignError) Unwrap() error { return ErrForeign }

// notFoundOrForeign turns a 404 for sandbox id into a *ForeignError when
// the status batch says FORBIDDEN; any other error, or a batch that cannot
// tell, leaves err as it is. Without the batch endpoint nothing tells the
// two apart.
func (c *Client) notFoundOrForeign(ctx context.Context, id string, err error) error {
	if !errors.Is(err, ErrNotFound) || c.batchUnsupported.Load() {
		return err
	}
	res, berr := c.BatchStatus(ctx, []string{id})
	if berr != nil {
		return err
	}
	for _, e := range res.Errors {
		if e.SandboxID == id && e.Code == BatchCodeForbidden {
			return &ForeignError{SandboxID: id, NotFound: err}
		}
	}
	return err
}
