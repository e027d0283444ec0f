package primemock

// The create request as the platform checks it today (late 2026): the model
// validators of the SDK's CreateSandboxRequest (prime-sandboxes 0.2.39
// models.py), in the SDK's order, applied to the wire body, moved to the
// contract of the platform's published create page and guides: sandboxes
// are VMs only (an explicit vm false is 410), cpu_cores is whole vCPUs, a
// negative timeout_minutes means no lifetime limit and 0 is refused, the
// idle timeout is 1 to 1,440 minutes, arch is amd64 or arm64. Independent of
// the provider's CreateRules in internal/prime (see differential_test.go).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// The defaults the server applies when a key is absent [I: create-defaults: nothing
// shows what the server does with a body that lacks them; cpu_cores 1 and
// timeout_minutes 60 are the documented defaults, memory and disk the 0.2.39
// SDK's, which it always sent].
const (
	sdkDefaultCPUCores       = 1
	sdkDefaultMemoryGB       = 1.0
	sdkDefaultDiskSizeGB     = 5.0
	sdkDefaultTimeoutMinutes = 60
	// maxIdleTimeoutMinutes is the documented upper bound (24 hours).
	maxIdleTimeoutMinutes = 1440
	// defaultDiskMountPath is what the SDK's fixtures show; the mock's
	// file systems have it.
	defaultDiskMountPath = sandboxfs.WorkspaceDir
	// defaultArch is the documented default of arch.
	defaultArch = "amd64"
)

// retiredMessage is the 410's detail for vm false. [PR] The status is 410;
// [I: retired-text] the text.
const retiredMessage = "Container sandboxes were retired on 2026-09-18: every sandbox is a VM. Omit vm (or send true)."

// createRefusal is a create the platform refuses before it is admitted:
// its status (422, or 410 for a container) and its detail.
type createRefusal struct {
	status int
	msg    string
	// plain: the platform's handler refuses it, with {"detail": "<msg>"},
	// not its request validation (the list form).
	plain bool
}

func (r *createRefusal) Error() string { return r.msg }

func invalid(format string, args ...any) error {
	return &createRefusal{status: http.StatusUnprocessableEntity, msg: fmt.Sprintf(format, args...)}
}

// refusalStatus is the status of a create error: a *createRefusal's, else
// 422.
func refusalStatus(err error) int {
	var r *createRefusal
	if errors.As(err, &r) {
		return r.status
	}
	return http.StatusUnprocessableEntity
}

// refusalReply is the answer to a refused create.
func refusalReply(err error) reply {
	rep := errorReply(refusalStatus(err), "%v", err)
	var r *createRefusal
	rep.plain = errors.As(err, &r) && r.plain
	return rep
}

// createWire is the body's keys whose wire form differs from
// prime.CreateSandboxRequest's: cpu_cores arrives as any number (the 0.2.39
// SDK sends 1.0), and the retired container keys.
type createWire struct {
	CPUCores   *json.Number `json:"cpu_cores"`
	VM         *bool        `json:"vm"`
	Guaranteed *bool        `json:"guaranteed"`
	Registry   *string      `json:"registry_credentials_id"`
}

// decodeCreate reads a create body. Malformed JSON, wrong types and missing
// required keys (name, docker_image: pydantic "Field required") are 422s; an
// explicit vm false is 410 (containers were retired). The retired container
// options are refused when they ask for something [I: retired-options: today's schema is
// not visible; the 0.2.39 SDK always sent guaranteed false, which is
// ignored, and null is ignored too]. A fractional cpu_cores is a 422
// (pydantic's integer message [I: cpu-integer-text: the text]); a whole one (1.0, as the
// 0.2.39 SDK sends it) is read as that integer.
func decodeCreate(raw []byte) (prime.CreateSandboxRequest, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return prime.CreateSandboxRequest{}, invalid("the body must be a JSON object: %v", err)
	}
	var w createWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return prime.CreateSandboxRequest{}, invalid("invalid JSON body: %v", err)
	}
	if w.VM != nil && !*w.VM {
		return prime.CreateSandboxRequest{}, &createRefusal{status: http.StatusGone, msg: retiredMessage}
	}
	if w.Guaranteed != nil && *w.Guaranteed {
		return prime.CreateSandboxRequest{}, invalid("guaranteed is no longer supported: it was a container option, and container sandboxes were retired")
	}
	if w.Registry != nil && *w.Registry != "" {
		return prime.CreateSandboxRequest{}, invalid("registry_credentials_id is no longer supported: it was a container option, and container sandboxes were retired")
	}
	cpu, err := wholeCPUs(w.CPUCores)
	if err != nil {
		return prime.CreateSandboxRequest{}, err
	}
	// The rest decodes as the request type, with cpu_cores put back as the
	// integer it stands for.
	if cpu != nil {
		keys["cpu_cores"] = json.RawMessage(fmt.Sprint(*cpu))
	}
	fixed, err := json.Marshal(keys)
	if err != nil {
		return prime.CreateSandboxRequest{}, invalid("invalid JSON body: %v", err)
	}
	var req prime.CreateSandboxRequest
	if err := json.Unmarshal(fixed, &req); err != nil {
		return req, invalid("invalid JSON body: %v", err)
	}
	for _, k := range []string{"name", "docker_image"} {
		if v, ok := keys[k]; !ok || string(v) == "null" {
			if k == "docker_image" && req.CheckpointID != nil {
				continue // a restore takes the checkpoint's image
			}
			return req, invalid("%s: Field required", k)
		}
	}
	if req.Arch != nil && *req.Arch != "amd64" && *req.Arch != "arm64" {
		return req, invalid("arch: Input should be 'amd64' or 'arm64'")
	}
	if err := checkRestoreKeys(keys, req); err != nil {
		return req, invalid("%v", err)
	}
	if v, ok := keys["labels"]; ok && string(v) == "null" {
		return req, invalid("labels: Input should be a valid list")
	}
	return req, nil
}

// wholeCPUs reads cpu_cores: whole vCPUs, so a fraction is refused.
func wholeCPUs(n *json.Number) (*int, error) {
	if n == nil {
		return nil, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, invalid("cpu_cores: Input should be a valid integer")
	}
	if f != math.Trunc(f) {
		return nil, invalid("cpu_cores: Input should be a valid integer, got a number with a fractional part")
	}
	if math.Abs(f) > 1<<31 {
		return nil, invalid("cpu_cores: Input should be a valid integer")
	}
	v := int(f)
	return &v, nil
}

// checkCreate returns the first rule a create request breaks, or nil. req
// is the body as received; the server-side dropping of a legacy string
// start command (see admitCreate) has already happened.
func checkCreate(req prime.CreateSandboxRequest) error {
	// Field validation comes before the model validators in pydantic, in
	// the order the fields are declared: name and docker_image [OA-r],
	// then StartCommand{executable: min_length 1, no NUL bytes; args: no
	// NUL}, then the resources.
	if err := checkNameAndImage(req); err != nil {
		return err
	}
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
	if err := checkResources(req); err != nil {
		return err
	}
	// [PR, live] A lifetime of 0 is refused; any negative value is none.
	// Its text came back from the live platform as a plain detail.
	if req.TimeoutMinutes != nil && *req.TimeoutMinutes == 0 {
		return &createRefusal{status: http.StatusUnprocessableEntity, msg: "timeout_minutes must be negative for infinite or >= 1", plain: true}
	}
	if err := checkEnvironment(req); err != nil {
		return err
	}
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
	case gpus == 0 && req.GPUType != nil:
		return errors.New("gpu_type requires gpu_count greater than 0")
	}
	// validate_network_lists.
	allowSet, denySet := req.NetworkAllowlist != nil, req.NetworkDenylist != nil
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
	// validate_idle_timeout, with the documented 1-1,440 range.
	if idle := req.IdleTimeoutMinutes; idle != nil {
		if *idle < 1 {
			return errors.New("idle_timeout_minutes must be >= 1")
		}
		if *idle > maxIdleTimeoutMinutes {
			// [I: idle-max-text] the text; the range is documented.
			return fmt.Errorf("idle_timeout_minutes must be <= %d", maxIdleTimeoutMinutes)
		}
		if timeout > 0 && *idle > timeout {
			return fmt.Errorf("idle_timeout_minutes must be <= timeout_minutes (got idle=%d, lifetime=%d)", *idle, timeout)
		}
	}
	return nil
}

// admitCreate is the server side of a decoded create body: a legacy string
// start command is dropped [C: the platform is said to drop them on VMs,
// and the 0.2.39 SDK's default create sends "tail -f /dev/null" without a vm
// key], the rules are checked, and the egress lists are canonicalised.
func admitCreate(req prime.CreateSandboxRequest) (prime.CreateSandboxRequest, []string, []string, error) {
	if req.StartCommand != nil && req.StartCommand.Shell != nil {
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

// fillDefaults applies the defaults to absent optional fields.
func fillDefaults(r *prime.CreateSandboxRequest) {
	f := func(p **float64, v float64) {
		if *p == nil {
			*p = &v
		}
	}
	if r.CPUCores == nil {
		v := sdkDefaultCPUCores
		r.CPUCores = &v
	}
	f(&r.MemoryGB, sdkDefaultMemoryGB)
	f(&r.DiskSizeGB, sdkDefaultDiskSizeGB)
	if r.GPUCount == nil {
		r.GPUCount = new(int)
	}
	if r.TimeoutMinutes == nil {
		v := sdkDefaultTimeoutMinutes
		r.TimeoutMinutes = &v
	}
	if r.Arch == nil {
		a := defaultArch
		r.Arch = &a
	}
	if r.TeamID != nil && *r.TeamID == "" {
		r.TeamID = nil // PRIME_TEAM_ID="" sends an empty team: no team [I: empty-team]
	}
	if r.Labels == nil {
		r.Labels = []string{}
	}
}
