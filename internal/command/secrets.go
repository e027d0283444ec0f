package command

// The sandbox's own secrets (secrets, secrets_wo) are in the environment
// of every command it runs, so a command can print one. The command
// resources never see their values (secrets_wo reached only the sandbox's
// create), so they learn them inside the sandbox, once per member run,
// keep them in memory only, and scrub them — as env_wo values are
// scrubbed — from everything a run records or shows: the output in state
// (and hence plans), output_dir, errors, progress and logs.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// learnedSecrets holds a sandbox's secret values once read, shared by the
// specs of one member's steps (which run one after the other), so they are
// read once per member run.
type learnedSecrets struct {
	done   bool
	values []string
}

// learnSandboxSecrets fills spec.Secrets with the values of the sandbox's
// secrets, read once per spec.learned. It is called after the egress gate,
// right before anything that records output. A sandbox that is gone or
// not running cannot run the command either: its own error says so
// better, and nothing can print. Any other failure is an error: nothing
// that could show a secret is recorded.
func (spec *commandSpec) learnSandboxSecrets(ctx context.Context, c *prime.Client) error {
	if spec.learned == nil {
		spec.learned = &learnedSecrets{}
	}
	if !spec.learned.done {
		values, err := c.SandboxSecretValues(ctx, spec.SandboxID)
		switch {
		case err == nil:
		case errors.Is(err, prime.ErrSandboxNotRunning), errors.Is(err, prime.ErrNotFound):
			values = nil
		default:
			return &commandError{Summary: "Sandbox secrets not read", Err: fmt.Errorf("sandbox %s: the values of its "+
				"secrets, which the provider masks in a command's output, could not be read: %w", spec.SandboxID, err)}
		}
		spec.learned.values, spec.learned.done = values, true
	}
	spec.Secrets = spec.learned.values
	return nil
}

// secretValues are the values scrubbed from what a run records: env_wo's
// and the sandbox's secrets.
func (spec commandSpec) secretValues() []string {
	return append(slices.Collect(maps.Values(spec.EnvWO)), spec.Secrets...)
}
