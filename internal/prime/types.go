package prime

// Wire types of the Prime Sandboxes REST API, as prime-sandboxes 0.2.39 sends
// and parses them, moved to the platform's late-2026 contract where it
// changed (VM-only creates, whole cpu_cores, arch). Key casing
// is not uniform on the platform: create and bulk-delete requests are
// snake_case, sandbox objects and the list envelope are camelCase, and the
// egress-policy, batch-status, logs and auth bodies are snake_case. The JSON
// tags below are the contract; the mock emits exactly these.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Sandbox lifecycle statuses, the exact strings of the SDK's status enum.
const (
	StatusPending      = "PENDING"
	StatusProvisioning = "PROVISIONING"
	StatusRunning      = "RUNNING"
	StatusPaused       = "PAUSED"
	StatusError        = "ERROR"
	StatusTerminated   = "TERMINATED"
	StatusTimeout      = "TIMEOUT"
)

// IsTerminalStatus reports whether a sandbox in this status will never run
// again (the SDK's waiters stop on these).
func IsTerminalStatus(status string) bool {
	switch status {
	case StatusError, StatusTerminated, StatusTimeout:
		return true
	}
	return false
}

// HasAllLabels reports whether a sandbox with labels have matches a label
// filter want: every wanted label must be present (the platform's list and
// bulk-delete semantics, "must have ALL labels").
func HasAllLabels(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// StartArgv is the structured start command VMs need: an executable and its
// arguments. The platform forbids extra keys; args is always sent.
type StartArgv struct {
	Executable string   `json:"executable"`
	Args       []string `json:"args"`
}

// StartCommand is the union the platform uses for start commands: a string
// or an argv object. The provider sends only the argv form; a string is
// still parsed, because sandboxes created by older clients (the 0.2.39 SDK
// sent "tail -f /dev/null") may report one.
type StartCommand struct {
	Shell *string
	Argv  *StartArgv
}

// ShellCommand returns a string-form start command (for tests of what older
// clients sent).
func ShellCommand(s string) *StartCommand { return &StartCommand{Shell: &s} }

// ArgvCommand returns a structured start command.
func ArgvCommand(executable string, args ...string) *StartCommand {
	if args == nil {
		args = []string{}
	}
	return &StartCommand{Argv: &StartArgv{Executable: executable, Args: args}}
}

// MarshalJSON writes the string or the object form.
func (c StartCommand) MarshalJSON() ([]byte, error) {
	switch {
	case c.Argv != nil:
		argv := *c.Argv
		if argv.Args == nil {
			argv.Args = []string{}
		}
		return json.Marshal(argv)
	case c.Shell != nil:
		return json.Marshal(*c.Shell)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads either form and rejects unknown object keys, as the
// platform's model does.
func (c *StartCommand) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	*c = StartCommand{}
	switch {
	case bytes.Equal(data, []byte("null")):
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		c.Shell = &s
		return nil
	case len(data) > 0 && data[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var argv StartArgv
		if err := dec.Decode(&argv); err != nil {
			return fmt.Errorf("start command object: %w", err)
		}
		if argv.Args == nil {
			argv.Args = []string{}
		}
		c.Argv = &argv
		return nil
	}
	return errors.New("start command must be a string, an {executable, args} object or null")
}

// Sandbox is the sandbox object returned by create, get and list (camelCase).
// Today's schema of this object is not published; these are the keys the
// newer SDK parses [I]. CPUCores stays a number on read (the SDK still
// parses one, and older sandboxes may report a fraction), VM is still sent
// (every sandbox is a VM now), and Arch is read when the platform reports
// it [I: whether it does is not known].
type Sandbox struct {
	ID                  string            `json:"id"`
	Name                string            `json:"name"`
	DockerImage         string            `json:"dockerImage"`
	StartCommand        *StartCommand     `json:"startCommand"`
	CPUCores            float64           `json:"cpuCores"`
	MemoryGB            float64           `json:"memoryGB"`
	DiskSizeGB          float64           `json:"diskSizeGB"`
	DiskMountPath       string            `json:"diskMountPath"`
	GPUCount            int               `json:"gpuCount"`
	GPUType             *string           `json:"gpuType"`
	VM                  bool              `json:"vm"`
	Arch                *string           `json:"arch,omitempty"`
	NetworkAllowlist    []string          `json:"networkAllowlist"`
	NetworkDenylist     []string          `json:"networkDenylist"`
	Status              string            `json:"status"`
	TimeoutMinutes      int               `json:"timeoutMinutes"`
	IdleTimeoutMinutes  *int              `json:"idleTimeoutMinutes"`
	TerminationReason   *string           `json:"terminationReason"`
	EnvironmentVars     map[string]string `json:"environmentVars"`
	Secrets             map[string]string `json:"secrets"`
	AdvancedConfigs     map[string]any    `json:"advancedConfigs"`
	Labels              []string          `json:"labels"`
	CreatedAt           time.Time         `json:"createdAt"`
	UpdatedAt           time.Time         `json:"updatedAt"`
	StartedAt           *time.Time        `json:"startedAt"`
	TerminatedAt        *time.Time        `json:"terminatedAt"`
	ExitCode            *int              `json:"exitCode"`
	ErrorType           *string           `json:"errorType"`
	ErrorMessage        *string           `json:"errorMessage"`
	UserID              *string           `json:"userId"`
	TeamID              *string           `json:"teamId"`
	Region              *string           `json:"region"`
	PendingImageBuildID *string           `json:"pendingImageBuildId"`
	// CheckpointID is the checkpoint the sandbox was restored from, when
	// the platform reports it [I: whether it does is not known].
	CheckpointID *string `json:"checkpointId,omitempty"`
}

// UnmarshalJSON reads the camelCase object (timestamps as ParseISOTime
// reads them) and also accepts the snake_case
// spelling of the egress lists, which one SDK test fixture uses: the real
// server's spelling of those two keys is not pinned down [I: inferred from
// the SDK's fixtures; reading both spellings is the safe choice].
func (s *Sandbox) UnmarshalJSON(data []byte) error {
	type plain Sandbox
	var aux struct {
		plain
		SnakeAllow []string `json:"network_allowlist"`
		SnakeDeny  []string `json:"network_denylist"`
	}
	if err := decodeWithISOTimes(data, &aux); err != nil {
		return err
	}
	*s = Sandbox(aux.plain)
	if s.NetworkAllowlist == nil && aux.SnakeAllow != nil {
		s.NetworkAllowlist = aux.SnakeAllow
	}
	if s.NetworkDenylist == nil && aux.SnakeDeny != nil {
		s.NetworkDenylist = aux.SnakeDeny
	}
	if s.Labels == nil {
		s.Labels = []string{}
	}
	return nil
}

// CreateSandboxRequest is the POST /sandbox body (snake_case). Pointer fields
// are omitted when nil, so the platform's defaults apply; the egress lists are
// pointers to slices because an empty list is meaningful and must be sent.
// docker_image is omitted when empty: a restore (CheckpointID) must not send
// it, and every other create needs it (CreateRules).
//
// Sandboxes are VMs only since containers were retired (2026-09-18): the
// body has no vm key (an omitted vm is accepted by every SDK version, and an
// explicit vm false is answered 410), and no guaranteed or
// registry_credentials_id (container options, gone from the SDK).
type CreateSandboxRequest struct {
	Name         string        `json:"name"`
	DockerImage  string        `json:"docker_image,omitempty"`
	StartCommand *StartCommand `json:"start_command,omitempty"`
	// Arch is amd64 or arm64; unset, the platform's default (amd64).
	Arch *string `json:"arch,omitempty"`
	// CPUCores is whole vCPUs: the platform's field is an integer.
	CPUCores           *int              `json:"cpu_cores,omitempty"`
	MemoryGB           *float64          `json:"memory_gb,omitempty"`
	DiskSizeGB         *float64          `json:"disk_size_gb,omitempty"`
	GPUCount           *int              `json:"gpu_count,omitempty"`
	GPUType            *string           `json:"gpu_type,omitempty"`
	NetworkAllowlist   *[]string         `json:"network_allowlist,omitempty"`
	NetworkDenylist    *[]string         `json:"network_denylist,omitempty"`
	TimeoutMinutes     *int              `json:"timeout_minutes,omitempty"`
	IdleTimeoutMinutes *int              `json:"idle_timeout_minutes,omitempty"`
	EnvironmentVars    map[string]string `json:"environment_vars,omitempty"`
	Secrets            map[string]string `json:"secrets,omitempty"`
	Labels             []string          `json:"labels"`
	TeamID             *string           `json:"team_id,omitempty"`
	Region             *string           `json:"region,omitempty"`
	AdvancedConfigs    map[string]any    `json:"advanced_configs,omitempty"`
	IdempotencyKey     string            `json:"idempotency_key"`
	// CheckpointID boots the sandbox from a DURABLE checkpoint instead of an
	// image; it then takes the checkpoint's image and disk size, so
	// DockerImage and DiskSizeGB must be left unset (restore.go).
	CheckpointID *string `json:"checkpoint_id,omitempty"`
	// RestoreMemory (only with CheckpointID) resumes a pause checkpoint with
	// its memory; the platform answers 409 when the checkpoint has none.
	RestoreMemory *bool `json:"restore_memory,omitempty"`
	// Volumes attach private copies of named volumes (volumes.go).
	Volumes []VolumeMount `json:"volumes,omitempty"`
}

// ListSandboxesOptions are the query parameters of GET /sandbox.
type ListSandboxesOptions struct {
	TeamID string
	UserID string
	Status string
	// Labels must all be present on a sandbox for it to match.
	Labels []string
	// IsActive filters out terminal sandboxes when true; nil sends nothing.
	IsActive *bool
	// PerPage defaults to 100 (what the CLI uses when paging everything).
	PerPage int
}

// ListSandboxesResponse is one page of GET /sandbox (camelCase envelope).
type ListSandboxesResponse struct {
	Sandboxes []Sandbox `json:"sandboxes"`
	Total     int       `json:"total"`
	Page      int       `json:"page"`
	PerPage   int       `json:"perPage"`
	HasNext   bool      `json:"hasNext"`
}

// UnmarshalJSON also accepts per_page / has_next, as the SDK does.
func (r *ListSandboxesResponse) UnmarshalJSON(data []byte) error {
	type plain ListSandboxesResponse
	var aux struct {
		plain
		SnakePerPage *int  `json:"per_page"`
		SnakeHasNext *bool `json:"has_next"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*r = ListSandboxesResponse(aux.plain)
	if r.PerPage == 0 && aux.SnakePerPage != nil {
		r.PerPage = *aux.SnakePerPage
	}
	if !r.HasNext && aux.SnakeHasNext != nil {
		r.HasNext = *aux.SnakeHasNext
	}
	return nil
}

// BulkDeleteRequest is the DELETE /sandbox body (snake_case, nulls omitted,
// all_users always present).
type BulkDeleteRequest struct {
	SandboxIDs []string `json:"sandbox_ids,omitempty"`
	Labels     []string `json:"labels,omitempty"`
	TeamID     *string  `json:"team_id,omitempty"`
	UserID     *string  `json:"user_id,omitempty"`
	AllUsers   bool     `json:"all_users"`
}

// BulkDeleteFailure is one entry of BulkDeleteResponse.Failed. Every value on
// the wire is a string.
type BulkDeleteFailure struct {
	SandboxID string `json:"sandbox_id"`
	Error     string `json:"error"`
}

// BulkDeleteResponse is the DELETE /sandbox answer; all keys are required.
type BulkDeleteResponse struct {
	Succeeded []string            `json:"succeeded"`
	Failed    []BulkDeleteFailure `json:"failed"`
	Message   string              `json:"message"`
}

// MaxBatchStatusIDs is the most ids one status:batchGet request may carry.
const MaxBatchStatusIDs = 100

// BatchStatusRequest is the POST /sandbox/status:batchGet body.
type BatchStatusRequest struct {
	SandboxIDs []string `json:"sandbox_ids"`
}

// SandboxStatus is one entry of BatchStatusResponse.Statuses (snake_case).
type SandboxStatus struct {
	SandboxID           string  `json:"sandbox_id"`
	Status              string  `json:"status"`
	ErrorType           *string `json:"error_type"`
	ErrorMessage        *string `json:"error_message"`
	PendingImageBuildID *string `json:"pending_image_build_id"`
}

// Batch status per-id error codes; nothing else parses in the SDK.
const (
	BatchCodeNotFound  = "NOT_FOUND"
	BatchCodeForbidden = "FORBIDDEN"
	BatchCodeManaged   = "MANAGED"
)

// SandboxStatusError is one entry of BatchStatusResponse.Errors.
type SandboxStatusError struct {
	SandboxID string `json:"sandbox_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// BatchStatusResponse answers status:batchGet: every requested id appears in
// exactly one of the two arrays.
type BatchStatusResponse struct {
	Statuses []SandboxStatus      `json:"statuses"`
	Errors   []SandboxStatusError `json:"errors"`
}

// EgressPolicy is the desired policy pair. On the wire both keys are always
// present and, in a PUT, exactly one is null (a nil slice marshals as null).
//
//	allowlist [..]  only these destinations     allowlist []  deny all
//	denylist  [..]  everything except these     denylist  []  unrestricted
type EgressPolicy struct {
	Allowlist []string `json:"allowlist"`
	Denylist  []string `json:"denylist"`
}

// OpenEgressPolicy is the unrestricted policy (an empty denylist).
func OpenEgressPolicy() EgressPolicy { return EgressPolicy{Denylist: []string{}} }

// IsOpen reports whether the policy restricts nothing: an empty denylist, or
// neither list set (the CLI's fallback reading).
func (p EgressPolicy) IsOpen() bool {
	return p.Allowlist == nil && len(p.Denylist) == 0
}

// EgressPolicyStatus is the GET/PUT egress-policy answer (snake_case only; the
// SDK has no camelCase aliases here).
type EgressPolicyStatus struct {
	Policy EgressPolicy `json:"policy"`
	// Generation counts accepted desired-policy versions (0 before any PUT).
	Generation int64 `json:"generation"`
	// AppliedGeneration is the last generation the data plane enforces, -1
	// while nothing has been applied.
	AppliedGeneration int64 `json:"applied_generation"`
	// Applied is true once the current generation is enforced.
	Applied bool `json:"applied"`
}

// UnmarshalJSON insists on the three required keys: a status without them
// must never be mistaken for "generation 0, applied".
func (s *EgressPolicyStatus) UnmarshalJSON(data []byte) error {
	var aux struct {
		Policy            *EgressPolicy `json:"policy"`
		Generation        *int64        `json:"generation"`
		AppliedGeneration *int64        `json:"applied_generation"`
		Applied           *bool         `json:"applied"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.Generation == nil || aux.AppliedGeneration == nil || aux.Applied == nil {
		return errors.New("egress policy status lacks generation, applied_generation or applied")
	}
	*s = EgressPolicyStatus{Generation: *aux.Generation, AppliedGeneration: *aux.AppliedGeneration, Applied: *aux.Applied}
	if aux.Policy != nil {
		s.Policy = *aux.Policy
	}
	return nil
}

// Enforces reports whether the data plane enforces generation gen or newer.
// Both signals are required: the platform's applied flag alone could refer to
// an older generation than the one we wrote.
func (s EgressPolicyStatus) Enforces(gen int64) bool {
	return s.Applied && s.AppliedGeneration >= gen
}

// SandboxLogs is the GET /sandbox/{id}/logs answer.
type SandboxLogs struct {
	Logs string `json:"logs"`
}

// SandboxErrorContext is GET /sandbox/{id}/error-context; both spellings of
// the error keys are read.
type SandboxErrorContext struct {
	Status       string  `json:"status"`
	ErrorType    *string `json:"errorType"`
	ErrorMessage *string `json:"errorMessage"`
}

// UnmarshalJSON accepts error_type / error_message too.
func (e *SandboxErrorContext) UnmarshalJSON(data []byte) error {
	type plain SandboxErrorContext
	var aux struct {
		plain
		SnakeType    *string `json:"error_type"`
		SnakeMessage *string `json:"error_message"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*e = SandboxErrorContext(aux.plain)
	if e.ErrorType == nil {
		e.ErrorType = aux.SnakeType
	}
	if e.ErrorMessage == nil {
		e.ErrorMessage = aux.SnakeMessage
	}
	return nil
}

// GatewayAuth is the POST /sandbox/{id}/auth answer: a short-lived token for
// the sandbox gateway that runs commands.
type GatewayAuth struct {
	GatewayURL string    `json:"gateway_url"`
	Token      string    `json:"token"`
	UserNS     string    `json:"user_ns"`
	JobID      string    `json:"job_id"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// UnmarshalJSON reads expires_at with or without a zone (ParseISOTime).
func (a *GatewayAuth) UnmarshalJSON(data []byte) error {
	type plain GatewayAuth
	return decodeWithISOTimes(data, (*plain)(a))
}
