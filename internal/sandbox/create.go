package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// createReplayTimeout bounds the replay of an interrupted create: long enough
// for a slow API and a few retries, short enough that Ctrl-C still ends the
// apply promptly.
const createReplayTimeout = 30 * time.Second

// createSandboxTracked creates a sandbox so that a sandbox the platform
// created always comes back to the caller, and so reaches state.
//
// If the apply is interrupted (or times out) while the create is in flight
// or being retried, the platform may already have created the sandbox, and
// an abandoned create would leave it running with nobody tracking it. So the
// idempotency key is fixed here, and after an interruption the same create
// is replayed once on a short context of its own: the platform answers with
// the sandbox it created for that key (or creates it now), and the caller
// saves it, tainted, together with the interruption error. If even the replay
// fails, the error names the key so the sandbox can be found.
func createSandboxTracked(ctx context.Context, c *prime.Client, req prime.CreateSandboxRequest) (*prime.Sandbox, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = prime.NewIdempotencyKey()
	}
	sb, err := c.CreateSandbox(ctx, req)
	if err == nil || ctx.Err() == nil {
		return sb, err
	}
	replayCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createReplayTimeout)
	defer cancel()
	sb, replayErr := c.CreateSandbox(replayCtx, req)
	if replayErr != nil {
		return nil, fmt.Errorf("%w; a sandbox may have been created (idempotency key %s) and could not be confirmed: %w",
			err, req.IdempotencyKey, replayErr)
	}
	return sb, fmt.Errorf("create interrupted (%w); the sandbox the platform created was recovered", context.Cause(ctx))
}

// definitelyNotCreated reports a create the platform refused, or one the
// client refused before sending, as opposed to one whose outcome is unknown:
// only the latter keeps its journal entry. (A transport error is not proof:
// an earlier attempt of the same create may have reached the platform.)
func definitelyNotCreated(err error) bool {
	if errors.Is(err, prime.ErrInvalidRequest) || errors.Is(err, prime.ErrMissingAPIKey) {
		return true
	}
	code := prime.StatusCodeOf(err)
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// adoptable reports whether the sandbox a replayed journal key returned is
// the one the create asks for: same name and image (a restore's image is
// the checkpoint's, which the request does not name), and still able to
// run.
func adoptable(sb *prime.Sandbox, req prime.CreateSandboxRequest) bool {
	return sb.Name == req.Name && (req.IsRestore() || sb.DockerImage == req.DockerImage) && !prime.IsTerminalStatus(sb.Status)
}
