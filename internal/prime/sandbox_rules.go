package prime

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The SDK's defaults for create fields (prime-sandboxes 0.2.39,
// CreateSandboxRequest), which it always sends. ApplySDKCreateDefaults fills
// them into a request; the mock applies them too; the provider reads back
// whatever the platform chose.
const (
	DefaultCPUCores       = 1.0
	DefaultMemoryGB       = 1.0
	DefaultDiskSizeGB     = 5.0
	DefaultTimeoutMinutes = 60
	DefaultDiskMountPath  = "/sandbox-workspace"
	DefaultShellCommand   = "tail -f /dev/null"
)

// ApplySDKCreateDefaults fills what r leaves unset with the values the SDK
// sends for them: cpu_cores 1.0, memory_gb 1.0, disk_size_gb 5.0, gpu_count
// 0, timeout_minutes 60, labels [] (guaranteed is a plain bool, so false is
// already sent), and start_command "tail -f /dev/null" unless vm is true.
// The SDK's body carries these keys on every create; what the server does
// with a body that lacks them is not known, so the client sends them too.
// vm itself stays unset when unset: the platform then picks its default
// runtime. Explicitly set values are never changed. A restore
// (CheckpointID) gets no disk_size_gb, and a memory restore no cpu_cores or
// memory_gb.
func ApplySDKCreateDefaults(r *CreateSandboxRequest) {
	setFloat := func(p **float64, v float64) {
		if *p == nil {
			*p = &v
		}
	}
	// A restore takes the checkpoint's disk size (it must not be sent), and
	// a memory restore keeps the paused shape [I: sending the default CPU
	// and memory could conflict with it], so neither gets those defaults.
	if r.RestoreMemory == nil || !*r.RestoreMemory {
		setFloat(&r.CPUCores, DefaultCPUCores)
		setFloat(&r.MemoryGB, DefaultMemoryGB)
	}
	if r.CheckpointID == nil {
		setFloat(&r.DiskSizeGB, DefaultDiskSizeGB)
	}
	if r.GPUCount == nil {
		zero := 0
		r.GPUCount = &zero
	}
	if r.TimeoutMinutes == nil {
		m := DefaultTimeoutMinutes
		r.TimeoutMinutes = &m
	}
	if r.Labels == nil {
		r.Labels = []string{}
	}
	// The SDK clears its default command only for vm=True; with vm unset
	// (the platform's default, a VM) the string default is still sent.
	if r.StartCommand == nil && (r.VM == nil || !*r.VM) {
		r.StartCommand = ShellCommand(DefaultShellCommand)
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

// CreateRules checks a create request against the platform's rules, in the
// SDK's order (its CreateSandboxRequest validators), plus the checks this provider adds where
// the SDK is silent and the platform cannot do anything useful with the
// value (non-positive resources, empty labels, invalid variable names). It
// returns every violation, not just the first, so a plan shows all of them.
//
// vm nil means "platform default", which is a VM.
func CreateRules(r CreateSandboxRequest) []RuleViolation {
	var out []RuleViolation
	add := func(inputs []string, format string, args ...any) {
		out = append(out, RuleViolation{Field: inputs[0], Inputs: inputs, Message: fmt.Sprintf(format, args...)})
	}
	in := func(fields ...string) []string { return fields }
	container := r.VM != nil && !*r.VM
	gpus := 0
	if r.GPUCount != nil {
		gpus = *r.GPUCount
	}

	if strings.TrimSpace(r.Name) == "" {
		add(in("name"), "must not be empty")
	}
	if strings.TrimSpace(r.DockerImage) == "" && r.CheckpointID == nil {
		add(in("docker_image"), "must not be empty")
	}
	out = append(out, restoreRules(r)...)

	// 1. GPUs.
	if gpus < 0 {
		add(in("gpu_count"), "must be 0 or more, got %d", gpus)
	}
	if gpus > 0 && (r.GPUType == nil || *r.GPUType == "") {
		add(in("gpu_type", "gpu_count"), "is required when gpu_count > 0")
	}
	if gpus > 0 && container {
		add(in("gpu_count", "vm"), "GPUs are not supported on containers (vm = false); use a VM sandbox")
	}
	if r.GPUType != nil && gpus == 0 {
		add(in("gpu_type", "gpu_count"), "needs gpu_count > 0")
	}
	// 2–3. Container-only options.
	if r.Guaranteed && !container {
		add(in("guaranteed", "vm"), "is only supported on containers: set vm = false")
	}
	if r.RegistryCredentialsID != nil && !container {
		add(in("registry_credentials_id", "vm"), "is only supported on containers: set vm = false")
	}
	// 4. Start command.
	if sc := r.StartCommand; sc != nil {
		if sc.Shell != nil && !container {
			add(in("start_command", "vm"), "a shell-string start command is only supported on containers (vm = false); "+
				"VMs take the argv form, for example start_argv = [\"/bin/sh\", \"-c\", %q]", *sc.Shell)
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
	// 5. Create-time egress lists: VM only, at most one, grammar.
	if (r.NetworkAllowlist != nil || r.NetworkDenylist != nil) && container {
		add(in("network_allowlist", "network_denylist", "vm"), "egress lists are only supported on VM sandboxes (vm = true)")
	}
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
	// 6. Timeouts. An omitted timeout is sent as the SDK's default (60
	// minutes, ApplySDKCreateDefaults), so the idle timeout is compared with
	// that.
	timeout := DefaultTimeoutMinutes
	if r.TimeoutMinutes != nil {
		timeout = *r.TimeoutMinutes
	}
	if r.IdleTimeoutMinutes != nil {
		idle := *r.IdleTimeoutMinutes
		switch {
		case idle < 1:
			add(in("idle_timeout_minutes"), "must be at least 1, got %d", idle)
		case timeout > 0 && idle > timeout && r.TimeoutMinutes == nil:
			add(in("idle_timeout_minutes", "timeout_minutes"), "must not exceed the sandbox's lifetime, %d minutes "+
				"(timeout_minutes is unset, so its default applies), got %d: set timeout_minutes to at least %d, or -1 "+
				"for no lifetime limit", timeout, idle, idle)
		case timeout > 0 && idle > timeout:
			add(in("idle_timeout_minutes", "timeout_minutes"), "must not exceed timeout_minutes (%d), got %d", timeout, idle)
		}
		if container && timeout <= 0 {
			add(in("idle_timeout_minutes", "timeout_minutes", "vm"), "containers with an idle timeout need a finite lifetime: set timeout_minutes > 0")
		}
	}
	// Resources: the SDK passes anything, but a sandbox with no CPU, memory
	// or disk cannot start, so refuse it before a request is made.
	for _, res := range []struct {
		field string
		v     *float64
	}{{"cpu_cores", r.CPUCores}, {"memory_gb", r.MemoryGB}, {"disk_size_gb", r.DiskSizeGB}} {
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
	for _, m := range []struct {
		field string
		vars  map[string]string
	}{{"environment_vars", r.EnvironmentVars}, {"secrets", r.Secrets}} {
		for name := range m.vars {
			if !ValidEnvName(name) {
				add(in(m.field), "%q is not a valid variable name (letters, digits and _, not starting with a digit)", name)
			}
		}
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
