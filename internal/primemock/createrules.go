package primemock

// The create request as the platform is known to check it: the model
// validators of the SDK's CreateSandboxRequest (prime-sandboxes 0.2.39
// models.py), in the SDK's order, applied to the wire body, plus the one
// rule a comment attributes to the platform. Independent of the provider's
// CreateRules in internal/prime (see differential_test.go).

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// The SDK's CreateSandboxRequest defaults. The server applies them when a
// key is absent [guess: nothing shows what the server does with a body that
// lacks them; the SDK always sends them].
const (
	sdkDefaultCPUCores       = 1.0
	sdkDefaultMemoryGB       = 1.0
	sdkDefaultDiskSizeGB     = 5.0
	sdkDefaultTimeoutMinutes = 60
	sdkDefaultShellCommand   = "tail -f /dev/null"
	// defaultDiskMountPath is what the SDK's fixtures show.
	defaultDiskMountPath = "/sandbox-workspace"
)

// decodeCreate reads a create body: malformed JSON, wrong types and missing
// required keys (name, docker_image: pydantic "Field required") are errors.
func decodeCreate(raw []byte) (prime.CreateSandboxRequest, error) {
	var req prime.CreateSandboxRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return req, fmt.Errorf("invalid JSON body: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return req, fmt.Errorf("the body must be a JSON object: %w", err)
	}
	for _, k := range []string{"name", "docker_image"} {
		if v, ok := keys[k]; !ok || string(v) == "null" {
			if k == "docker_image" && req.CheckpointID != nil {
				continue // a restore takes the checkpoint's image
			}
			return req, fmt.Errorf("%s: Field required", k)
		}
	}
	if err := checkRestoreKeys(keys, req); err != nil {
		return req, err
	}
	if v, ok := keys["labels"]; ok && string(v) == "null" {
		return req, errors.New("labels: Input should be a valid list")
	}
	return req, nil
}

// checkCreate returns the first rule a create request breaks, or nil. req
// is the body as received; the server-side dropping of a legacy string
// start command on the VM path (see handleCreate) has already happened.
func checkCreate(req prime.CreateSandboxRequest) error {
	// Field validation comes before the model validators in pydantic:
	// StartCommand{executable: min_length 1, no NUL bytes; args: no NUL}.
	if sc := req.StartCommand; sc != nil && sc.Argv != nil {
		switch {
		case sc.Argv.Executable == "":
			return errors.New("start_command.executable: String should have at least 1 character")
		case strings.ContainsRune(sc.Argv.Executable, 0):
			return errors.New("start_command: executable must not contain NUL bytes")
		}
		for _, a := range sc.Argv.Args {
			if strings.ContainsRune(a, 0) {
				return errors.New("start_command: args must not contain NUL bytes")
			}
		}
	}
	vmFalse := req.VM != nil && !*req.VM
	gpus := 0
	if req.GPUCount != nil {
		gpus = *req.GPUCount
	}
	timeout := sdkDefaultTimeoutMinutes
	if req.TimeoutMinutes != nil {
		timeout = *req.TimeoutMinutes
	}

	// validate_gpu_fields ("not gpu_type": an empty type counts as none).
	switch {
	case gpus > 0 && (req.GPUType == nil || *req.GPUType == ""):
		return errors.New("gpu_type is required when gpu_count is greater than 0")
	case gpus > 0 && vmFalse:
		return errors.New("gpu_count is not supported with vm=False")
	case gpus == 0 && req.GPUType != nil:
		return errors.New("gpu_type requires gpu_count greater than 0")
	}
	// validate_guaranteed.
	if req.Guaranteed && !vmFalse {
		return errors.New("guaranteed is not supported for VM sandboxes; pass vm=False to create a container sandbox")
	}
	// validate_registry_credentials (truthiness: "" passes).
	if req.RegistryCredentialsID != nil && *req.RegistryCredentialsID != "" && !vmFalse {
		return errors.New("registry_credentials_id is only supported for container sandboxes; pass vm=False to create a container sandbox")
	}
	// validate_vm_start_command: on the wire an explicit string on the VM
	// path never reaches here (dropped), the argv form is always allowed.
	// validate_network_lists.
	allowSet, denySet := req.NetworkAllowlist != nil, req.NetworkDenylist != nil
	if vmFalse && (allowSet || denySet) {
		return errors.New("network_allowlist and network_denylist are only supported for VM sandboxes (vm=True)")
	}
	var allow, deny []string
	if allowSet {
		allow = *req.NetworkAllowlist
	}
	if denySet {
		deny = *req.NetworkDenylist
	}
	if err := checkEgressLists(allow, deny, allowSet, denySet); err != nil {
		return err
	}
	// validate_idle_timeout.
	if idle := req.IdleTimeoutMinutes; idle != nil {
		if *idle < 1 {
			return errors.New("idle_timeout_minutes must be >= 1")
		}
		if timeout > 0 && *idle > timeout {
			return fmt.Errorf("idle_timeout_minutes must be <= timeout_minutes (got idle=%d, lifetime=%d)", *idle, timeout)
		}
		// [C] The platform requires a finite lifetime for a container with
		// an idle timeout (a comment in verifiers' Prime runtime).
		if vmFalse && timeout <= 0 {
			return errors.New("containers with idle_timeout_minutes need a finite timeout_minutes (> 0)")
		}
	}
	return nil
}

// admitCreate is the server side of a create body: a legacy string start
// command on the VM path is dropped [C: the platform is said to drop them,
// and the SDK's default create sends "tail -f /dev/null" with no vm key],
// the rules are checked, and the egress lists are canonicalised.
func admitCreate(req prime.CreateSandboxRequest) (prime.CreateSandboxRequest, []string, []string, error) {
	if req.StartCommand != nil && req.StartCommand.Shell != nil && (req.VM == nil || *req.VM) {
		req.StartCommand = nil
	}
	if err := checkCreate(req); err != nil {
		return req, nil, nil, err
	}
	var allow, deny []string
	var err error
	if req.NetworkAllowlist != nil {
		if allow, err = canonicalEgressList(*req.NetworkAllowlist); err != nil {
			return req, nil, nil, fmt.Errorf("network_allowlist: %w", err)
		}
	}
	if req.NetworkDenylist != nil {
		if deny, err = canonicalEgressList(*req.NetworkDenylist); err != nil {
			return req, nil, nil, fmt.Errorf("network_denylist: %w", err)
		}
	}
	return req, allow, deny, nil
}

// fillDefaults applies the SDK's defaults to absent optional fields, and
// the platform default runtime (a VM) to an absent vm.
func fillDefaults(r *prime.CreateSandboxRequest) {
	f := func(p **float64, v float64) {
		if *p == nil {
			*p = &v
		}
	}
	f(&r.CPUCores, sdkDefaultCPUCores)
	f(&r.MemoryGB, sdkDefaultMemoryGB)
	f(&r.DiskSizeGB, sdkDefaultDiskSizeGB)
	if r.GPUCount == nil {
		r.GPUCount = new(int)
	}
	if r.TimeoutMinutes == nil {
		v := sdkDefaultTimeoutMinutes
		r.TimeoutMinutes = &v
	}
	if r.VM == nil {
		vm := true // [C/T] the platform default runtime is a VM
		r.VM = &vm
	}
	if !*r.VM && r.StartCommand == nil {
		s := sdkDefaultShellCommand
		r.StartCommand = &prime.StartCommand{Shell: &s}
	}
	if r.TeamID != nil && *r.TeamID == "" {
		r.TeamID = nil // PRIME_TEAM_ID="" sends an empty team: no team [guess]
	}
	if r.Labels == nil {
		r.Labels = []string{}
	}
}
