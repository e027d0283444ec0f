package prime

// A sandbox's own secrets (its create request's secrets) are in the
// environment of every command it runs [I: the provider's observation of
// the mock, whose exec environment is environment_vars, then secrets, then
// the request's env; the platform's guide says only that secrets are
// "obfuscated in output" of its CLI]. A command that prints one would put
// it into whatever records the output. The platform never answers a
// secret's value (a sandbox object carries its names with masked values),
// so the values are learned inside the sandbox, by one command that prints
// them, and kept only in the caller's memory, to scrub output with.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// sandboxSecretNames remembers the names of each sandbox's secrets, from
// the answers that carry them for sure: a create request's secrets and a
// GET answer (not a list page, which may leave them out [I]). A sandbox's
// secrets never change: any change replaces it.
type sandboxSecretNames struct {
	mu    sync.Mutex
	names map[string][]string
}

func (s *sandboxSecretNames) learn(id string, secrets map[string]string) {
	if id == "" {
		return
	}
	names := make([]string, 0, len(secrets))
	for k := range secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string][]string{}
	}
	s.names[id] = names
}

func (s *sandboxSecretNames) lookup(id string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, ok := s.names[id]
	return names, ok
}

// SandboxSecretNames returns the names of the sandbox's secrets, from an
// answer this client has seen or one GET.
func (c *Client) SandboxSecretNames(ctx context.Context, id string) ([]string, error) {
	if names, ok := c.secrets.lookup(id); ok {
		return names, nil
	}
	if _, err := c.GetSandbox(ctx, id); err != nil {
		return nil, err
	}
	names, _ := c.secrets.lookup(id)
	return names, nil
}

// SandboxSecretValues returns the values of the sandbox's secrets, for the
// caller to scrub a command's output with (ScrubText, ExecRequest.Secrets):
// none, without a command, when the sandbox has no secrets; else they are
// read by one command in the sandbox (secretsProbeCommand), whose output is
// kept out of every debug record and error. A secret the sandbox's
// environment does not hold is left out.
func (c *Client) SandboxSecretValues(ctx context.Context, id string) ([]string, error) {
	names, err := c.SandboxSecretNames(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the secret names of sandbox %s: %w", id, err)
	}
	for _, n := range names {
		if !envKeyPattern.MatchString(n) {
			return nil, fmt.Errorf("sandbox %s has a secret named %q, which is not an environment variable name", id, clip(n, 64))
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	boundary := "prime-secret-" + randomHex(16)
	res, err := c.exec(ctx, id, ExecRequest{Command: secretsProbeCommand(names, boundary), Timeout: jobControlTimeout,
		SensitiveOutput: true}, execMode{raw: true})
	if err != nil {
		return nil, fmt.Errorf("reading the values of the secrets of sandbox %s: %w", id, err)
	}
	values, ok := parseSecretsProbe(res.Stdout, boundary, len(names))
	if !ok {
		return nil, fmt.Errorf("reading the values of the secrets of sandbox %s: %w", id, errors.New("the answer is not what the command prints"))
	}
	return values, nil
}

// SecretsProbePrefix starts the command that reads a sandbox's secrets,
// so that logs and event streams show it for what it is: ":" does nothing.
const SecretsProbePrefix = ": prime-secrets-probe; "

// secretsProbeCommand prints each variable's value (printenv: the value and
// a newline; nothing when unset) followed by a line holding boundary.
func secretsProbeCommand(names []string, boundary string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "printenv " + n + "; echo " + boundary
	}
	return SecretsProbePrefix + strings.Join(parts, "; ")
}

// parseSecretsProbe splits secretsProbeCommand's output into the values
// of the variables that are set; ok is false unless it holds count
// sections.
func parseSecretsProbe(out, boundary string, count int) ([]string, bool) {
	var values []string
	rest := out
	for range count {
		section, after, found := strings.Cut(rest, boundary+"\n")
		if !found {
			return nil, false
		}
		rest = after
		if section == "" {
			continue // unset
		}
		v, ok := strings.CutSuffix(section, "\n")
		if !ok {
			return nil, false
		}
		values = append(values, v)
	}
	if rest != "" {
		return nil, false
	}
	return values, true
}
