package primemock

// The create request's field rules beside the SDK's validators: the name
// and image lengths of the current create page [OA-r], the resource ranges
// of the older API reference [OLD] (the current page's are not visible
// past cpu_cores), and the environment rules of the platform change the
// SDK's pending validation mirrors (prime PR #805, platform #3611).

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Field bounds. [OA-r] name 1-100 characters, docker_image at least 1.
// [OLD] The older reference's ranges: cpu_cores 1-16, memory_gb up to 64,
// disk_size_gb up to 1000, gpu_count 0-8; the current page shows cpu_cores
// as whole vCPUs, default 1, and hides the rest.
const (
	maxNameChars = 100
	maxCPUCores  = 16
	maxMemoryGB  = 64
	maxDiskGB    = 1000
	maxGPUCount  = 8
)

// envNamePattern is a variable name the platform accepts. [PR] #805
// rejects "invalid names"; [I: env-name-pattern] the rule is the POSIX
// portable name, which "1BAD" and "A-B" break.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkNameAndImage(req prime.CreateSandboxRequest) error {
	switch n := utf8.RuneCountInString(req.Name); {
	case n < 1:
		return fmt.Errorf("name: String should have at least 1 character")
	case n > maxNameChars:
		return fmt.Errorf("name: String should have at most %d characters", maxNameChars)
	}
	if req.CheckpointID == nil && req.DockerImage == "" {
		return fmt.Errorf("docker_image: String should have at least 1 character")
	}
	return nil
}

// checkResources is the resource ranges. [I: resource-minima] memory and
// disk must be above 0 (a sandbox without them cannot start; the older
// reference's minimum, 0.1 or 1 by generation, is not enforced).
func checkResources(req prime.CreateSandboxRequest) error {
	if c := req.CPUCores; c != nil {
		switch {
		case *c < 1:
			return fmt.Errorf("cpu_cores: Input should be greater than or equal to 1")
		case *c > maxCPUCores:
			return fmt.Errorf("cpu_cores: Input should be less than or equal to %d", maxCPUCores)
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
		max  float64
	}{{"memory_gb", req.MemoryGB, maxMemoryGB}, {"disk_size_gb", req.DiskSizeGB, maxDiskGB}} {
		switch {
		case f.v == nil:
		case !(*f.v > 0):
			return fmt.Errorf("%s: Input should be greater than 0", f.name)
		case *f.v > f.max:
			return fmt.Errorf("%s: Input should be less than or equal to %g", f.name, f.max)
		}
	}
	if g := req.GPUCount; g != nil {
		switch {
		case *g < 0:
			return fmt.Errorf("gpu_count: Input should be greater than or equal to 0")
		case *g > maxGPUCount:
			return fmt.Errorf("gpu_count: Input should be less than or equal to %d", maxGPUCount)
		}
	}
	return nil
}

// checkEnvironment is the environment rules of [PR] #805: variable and
// secret names must be valid, values carry no NUL byte, and a name is
// either a variable or a secret, not both. Messages name the variable,
// never its value. The reserved platform names and the byte and count
// limits the change also adds are not published, so the mock does not
// enforce them.
func checkEnvironment(req prime.CreateSandboxRequest) error {
	for _, m := range []struct {
		field string
		vars  map[string]string
	}{{"environment_vars", req.EnvironmentVars}, {"secrets", req.Secrets}} {
		for _, name := range sortedNames(m.vars) {
			switch {
			case !envNamePattern.MatchString(name):
				return fmt.Errorf("%s: %q is not a valid variable name (letters, digits and _, not starting with a digit)", m.field, name)
			case strings.ContainsRune(m.vars[name], 0):
				return fmt.Errorf("%s: the value of %s must not contain NUL bytes", m.field, name)
			}
		}
	}
	for _, name := range sortedNames(req.Secrets) {
		if _, both := req.EnvironmentVars[name]; both {
			return fmt.Errorf("secrets: %s is also in environment_vars; a name is either a variable or a secret", name)
		}
	}
	return nil
}

// sortedNames are a map's keys in order, so the first broken rule reported
// is always the same one.
func sortedNames(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
