package prime

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The defaults the client fills into a create request (ApplySDKCreateDefaults;
// the mock applies the same ones to absent keys; the provider reads back
// whatever the platform chose). cpu_cores 1 and timeout_minutes 60 are the
// platform's documented defaults; memory and disk keep the 0.2.39 SDK's
// values, which its body always carried [I: today's defaults for them are
// not published].
const (
	DefaultCPUCores       = 1
	DefaultMemoryGB       = 1.0
	DefaultDiskSizeGB     = 5.0
	DefaultTimeoutMinutes = 60
	DefaultDiskMountPath  = "/sandbox-workspace"
	// DefaultArch is the platform's architecture when a create names none.
	DefaultArch = ArchAMD64
	// LegacyStartCommand is the string start command the 0.2.39 SDK (and
	// this provider before sandboxes were VM-only) sent when none was set.
	// It is never sent now: a VM's start process exiting stops the sandbox,
	// and a VM without one stays up. A sandbox that reports it reads back as
	// having no start command.
	LegacyStartCommand = "tail -f /dev/null"
	// MaxIdleTimeoutMinutes is the longest idle timeout (24 hours).
	MaxIdleTimeoutMinutes = 1440
	// MaxSandboxNameChars is the longest sandbox name the platform takes.
	MaxSandboxNameChars = 100
)

// The architectures a create may ask for.
const (
	ArchAMD64 = "amd64"
	ArchARM64 = "arm64"
)

// Arches are the values of a create's arch, in the platform's order.
var Arches = []string{ArchAMD64, ArchARM64}

// ApplySDKCreateDefaults fills what r leaves unset with the values the
// client always sends: cpu_cores 1, memory_gb 1.0, disk_size_gb 5.0,
// gpu_count 0, timeout_minutes 60 and labels []. Explicitly set values are
// never changed. Nothing else is filled in: no vm (every sandbox is a VM,
// and an explicit vm is not needed), no arch (the platform's default,
// amd64, applies), and no start command (the 0.2.39 SDK's "tail -f
// /dev/null" must not be sent: a VM without a start command stays up, one
// whose start process exits stops). A restore (CheckpointID) gets no
// disk_size_gb, and a memory restore no cpu_cores or memory_gb.
func ApplySDKCreateDefaults(r *CreateSandboxRequest) {
	setFloat := func(p **float64, v float64) {
		if *p == nil {
			*p = &v
		}
	}
	setInt := func(p **int, v int) {
		if *p == nil {
			*p = &v
		}
	}
	// A restore takes the checkpoint's disk size (it must not be sent), and
	// a memory restore keeps the paused shape [I: sending the default CPU
	// and memory could conflict with it], so neither gets those defaults.
	if r.RestoreMemory == nil || !*r.RestoreMemory {
		setInt(&r.CPUCores, DefaultCPUCores)
		setFloat(&r.MemoryGB, DefaultMemoryGB)
	}
	if r.CheckpointID == nil {
		setFloat(&r.DiskSizeGB, DefaultDiskSizeGB)
	}
	setInt(&r.GPUCount, 0)
	setInt(&r.TimeoutMinutes, DefaultTimeoutMinutes)
	if r.Labels == nil {
		r.Labels = []string{}
	}
}

// RuleViolation is one broken create rule. Field is the snake_case request
// key it concerns, so the provider can attach the message to its attribute.
type RuleViolation struct {
	Field   string
	Message string
	// Inputs are the request fields the verdict depends on (Field among
	// them). A plan-time caller skips a violation when any input is not
	// known yet.
	Inputs []string
}

func (v RuleViolation) Error() string { return v.Field + ": " + v.Message }

// envNamePattern is the portable environment variable name (POSIX).
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidEnvName reports whether name is a portable environment variable name.
func ValidEnvName(name string) bool { return envNamePattern.MatchString(name) }

// CreateRules checks a create request against the platform's rules (the
// SDK's CreateSandboxRequest validators, and the late-2026 contract's
// timeout, idle-timeout, arch and whole-vCPU rules), plus the checks this
// provider adds where the platform cannot do anything useful with the value
// (non-positive resources, empty labels, invalid variable names). It
// returns every violation, not just the first, so a plan shows all of them.
// The provider's plan-time checks and the client's pre-send check both run
// it.
func CreateRules(r CreateSandboxRequest) []RuleViolation {
	var out []RuleViolation
	add := func(inputs []string, format string, args ...any) {
		out = append(out, RuleViolation{Field: inputs[0], Inputs: inputs, Message: fmt.Sprintf(format, args...)})
	}
	in := func(fields ...string) []string { return fields }
	gpus := 0
	if r.GPUCount != nil {
		gpus = *r.GPUCount
	}

	if strings.TrimSpace(r.Name) == "" {
		add(in("name"), "must not be empty")
	}
	if n := utf8.RuneCountInString(r.Name); n > MaxSandboxNameChars {
		add(in("name"), "must be at most %d characters, got %d", MaxSandboxNameChars, n)
	}
	if strings.TrimSpace(r.DockerImage) == "" && r.CheckpointID == nil {
		add(in("docker_image"), "must not be empty")
	}
	out = append(out, restoreRules(r)...)
	if r.Arch != nil && !slices.Contains(Arches, *r.Arch) {
		add(in("arch"), "must be %q or %q, got %q", ArchAMD64, ArchARM64, *r.Arch)
	}

	// GPUs.
	if gpus < 0 {
		add(in("gpu_count"), "must be 0 or more, got %d", gpus)
	}
	if gpus > 0 && (r.GPUType == nil || *r.GPUType == "") {
		add(in("gpu_type", "gpu_count"), "is required when gpu_count > 0")
	}
	if r.GPUType != nil && gpus == 0 {
		add(in("gpu_type", "gpu_count"), "needs gpu_count > 0")
	}
	// Start command: the argv form only. The platform still parses a
	// string, but that was the containers' shell form; a VM runs a process
	// without a shell, so this client never sends one.
	if sc := r.StartCommand; sc != nil {
		if sc.Shell != nil {
			add(in("start_command"), "the string form is not sent (it was the containers' shell form): give the "+
				"argv form, for example [\"/bin/sh\", \"-c\", %q]", *sc.Shell)
		}
		if sc.Argv != nil {
			if sc.Argv.Executable == "" {
				add(in("start_command"), "the argv form needs an executable (at least one element)")
			}
			if strings.ContainsRune(sc.Argv.Executable, 0) {
				add(in("start_command"), "the executable must not contain NUL bytes")
			}
			for i, a := range sc.Argv.Args {
				if strings.ContainsRune(a, 0) {
					add(in("start_command"), "argument %d must not contain NUL bytes", i+1)
				}
			}
		}
	}
	// Create-time egress lists: at most one, grammar.
	if r.NetworkAllowlist != nil && r.NetworkDenylist != nil {
		add(in("network_allowlist", "network_denylist"), "network_allowlist and network_denylist are mutually exclusive; provide at most one")
	}
	if r.NetworkAllowlist != nil {
		if err := ValidateEgressList("network_allowlist", *r.NetworkAllowlist); err != nil {
			add(in("network_allowlist"), "%s", flattenErr(err))
		}
	}
	if r.NetworkDenylist != nil {
		if err := ValidateEgressList("network_denylist", *r.NetworkDenylist); err != nil {
			add(in("network_denylist"), "%s", flattenErr(err))
		}
	}
	out = append(out, timeoutRules(r)...)
	// Resources: a sandbox with no CPU, memory or disk cannot start, so
	// refuse it before a request is made.
	if r.CPUCores != nil && *r.CPUCores < 1 {
		add(in("cpu_cores"), "must be at least 1 (whole vCPUs), got %d", *r.CPUCores)
	}
	for _, res := range []struct {
		field string
		v     *float64
	}{{"memory_gb", r.MemoryGB}, {"disk_size_gb", r.DiskSizeGB}} {
		if res.v != nil && !(*res.v > 0) {
			add(in(res.field), "must be greater than 0, got %g", *res.v)
		}
	}
	for _, l := range r.Labels {
		if strings.TrimSpace(l) == "" {
			add(in("labels"), "labels must not be empty strings")
			break
		}
	}
	out = append(out, environmentRules(r)...)
	return out
}

// environmentRules are the platform's rules on a sandbox's variables and
// secrets (prime PR #805): valid names, no NUL byte in a value, and a name
// is a variable or a secret, not both. Messages name the variable, never
// its value.
func environmentRules(r CreateSandboxRequest) []RuleViolation {
	var out []RuleViolation
	add := func(field, format string, args ...any) {
		out = append(out, RuleViolation{Field: field, Inputs: []string{field}, Message: fmt.Sprintf(format, args...)})
	}
	for _, m := range []struct {
		field string
		vars  map[string]string
	}{{"environment_vars", r.EnvironmentVars}, {"secrets", r.Secrets}} {
		for _, name := range slices.Sorted(maps.Keys(m.vars)) {
			if !ValidEnvName(name) {
				add(m.field, "%q is not a valid variable name (letters, digits and _, not starting with a digit)", name)
			}
			if strings.ContainsRune(m.vars[name], 0) {
				add(m.field, "the value of %s must not contain NUL bytes", name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Secrets)) {
		if _, both := r.EnvironmentVars[name]; both {
			out = append(out, RuleViolation{Field: "secrets", Inputs: []string{"secrets", "environment_vars"},
				Message: fmt.Sprintf("%s is also in environment_vars; a name is either a variable or a secret, not both", name)})
		}
	}
	return out
}

// timeoutRules are the lifetime rules: any negative timeout_minutes means
// no lifetime limit and 0 is refused (the platform answers 422 "must be
// negative for infinite or >= 1"); idle_timeout_minutes is 1 to 1,440 and
// must not exceed a finite lifetime. An omitted timeout is sent as the
// default (60 minutes, ApplySDKCreateDefaults), so the idle timeout is
// compared with that.
func timeoutRules(r CreateSandboxRequest) []RuleViolation {
	var out []RuleViolation
	add := func(inputs []string, format string, args ...any) {
		out = append(out, RuleViolation{Field: inputs[0], Inputs: inputs, Message: fmt.Sprintf(format, args...)})
	}
	timeout := DefaultTimeoutMinutes
	if r.TimeoutMinutes != nil {
		timeout = *r.TimeoutMinutes
		if timeout == 0 {
			add([]string{"timeout_minutes"}, "must be negative for no lifetime limit (-1) or >= 1, got 0")
		}
	}
	if r.IdleTimeoutMinutes == nil {
		return out
	}
	idle := *r.IdleTimeoutMinutes
	switch {
	case idle < 1 || idle > MaxIdleTimeoutMinutes:
		add([]string{"idle_timeout_minutes"}, "must be between 1 and %d minutes (24 hours), got %d", MaxIdleTimeoutMinutes, idle)
	case timeout > 0 && idle > timeout && r.TimeoutMinutes == nil:
		add([]string{"idle_timeout_minutes", "timeout_minutes"}, "must not exceed the sandbox's lifetime, %d minutes "+
			"(timeout_minutes is unset, so its default applies), got %d: set timeout_minutes to at least %d, or -1 "+
			"for no lifetime limit", timeout, idle, idle)
	case timeout > 0 && idle > timeout:
		add([]string{"idle_timeout_minutes", "timeout_minutes"}, "must not exceed timeout_minutes (%d), got %d", timeout, idle)
	}
	return out
}

// ValidateCreateSandboxRequest returns CreateRules' violations as one error.
func ValidateCreateSandboxRequest(r CreateSandboxRequest) error {
	vs := CreateRules(r)
	if len(vs) == 0 {
		return nil
	}
	errs := make([]error, len(vs))
	for i, v := range vs {
		errs[i] = v
	}
	return fmt.Errorf("%w: %w", ErrInvalidRequest, errors.Join(errs...))
}

// flattenErr puts a joined error on one line.
func flattenErr(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
