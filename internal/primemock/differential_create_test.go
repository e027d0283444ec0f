package primemock

// The create rules, differentially: the mock's verdict on a create request against the SDK's recorded one.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// createCase is a create request built from fuzzable parts.
type createCase struct {
	cpu                 int8
	hasCPU              bool
	arch                uint8 // 0 unset, 1 amd64, 2 arm64, 3 archText
	archText            string
	gpuCount            int8
	gpuType             string
	hasGPUType          bool
	start               uint8 // 0 none, 1 string, 2 argv
	startText           string
	lists               uint8 // 0 none, 1 allow, 2 deny, 3 both
	entries             string
	timeout, idle       int16
	hasTimeout, hasIdle bool
}

func (c createCase) request() prime.CreateSandboxRequest {
	r := prime.CreateSandboxRequest{Name: "n", DockerImage: "img", IdempotencyKey: "k"}
	if c.hasCPU {
		n := int(c.cpu)
		r.CPUCores = &n
	}
	switch c.arch % 4 {
	case 1:
		r.Arch = new(string)
		*r.Arch = prime.ArchAMD64
	case 2:
		r.Arch = new(string)
		*r.Arch = prime.ArchARM64
	case 3:
		r.Arch = &c.archText
	}
	if c.gpuCount != 0 {
		n := int(c.gpuCount)
		r.GPUCount = &n
	}
	if c.hasGPUType {
		r.GPUType = &c.gpuType
	}
	switch c.start % 3 {
	case 1:
		r.StartCommand = prime.ShellCommand(c.startText)
	case 2:
		args := strings.Fields(c.startText)
		if len(args) == 0 {
			args = []string{""}
		}
		r.StartCommand = prime.ArgvCommand(args[0], args[1:]...)
	}
	list := []string{}
	if c.entries != "" {
		list = strings.Split(c.entries, "\n")
	}
	switch c.lists % 4 {
	case 1:
		r.NetworkAllowlist = &list
	case 2:
		r.NetworkDenylist = &list
	case 3:
		l2 := slices.Clone(list)
		r.NetworkAllowlist, r.NetworkDenylist = &list, &l2
	}
	if c.hasTimeout {
		n := int(c.timeout)
		r.TimeoutMinutes = &n
	}
	if c.hasIdle {
		n := int(c.idle)
		r.IdleTimeoutMinutes = &n
	}
	return r
}

// mockCreate runs a wire body through the mock's create path (decoding,
// the rules, list canonicalisation) and returns its refusal, or nil.
func mockCreate(body []byte) error {
	decoded, err := decodeCreate(body)
	if err != nil {
		return err
	}
	_, _, _, err = admitCreate(decoded)
	return err
}

// diffCreate: a request the provider's CreateRules accept, completed with
// the defaults as the provider sends it, passes the mock's create path.
func diffCreate(t *testing.T, c createCase) {
	t.Helper()
	req := c.request()
	if len(prime.CreateRules(req)) > 0 || beyondOlderMaxima(req) {
		return
	}
	prime.ApplySDKCreateDefaults(&req)
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := mockCreate(body); err != nil {
		t.Errorf("FINDING: the provider accepts and sends %s, the mock refuses it: %v", body, err)
	}
}

// beyondOlderMaxima: the resource maxima only the older API reference
// shows (cpu_cores 16, gpu_count 8) are the mock's, not the provider's:
// the provider leaves them to the platform, whose current ones are not
// published.
func beyondOlderMaxima(r prime.CreateSandboxRequest) bool {
	return (r.CPUCores != nil && *r.CPUCores > maxCPUCores) || (r.GPUCount != nil && *r.GPUCount > maxGPUCount)
}

var createSeeds = []createCase{
	{},
	{cpu: 4, hasCPU: true},
	{cpu: 0, hasCPU: true},
	{arch: 1},
	{arch: 2},
	{arch: 3, archText: "x86_64"},
	{gpuCount: 1, gpuType: "H100", hasGPUType: true},
	{gpuCount: 2, gpuType: "A100", hasGPUType: true},
	{start: 1, startText: "python -m http.server"},
	{start: 2, startText: "/bin/sleep infinity"},
	{start: 2, startText: "/bin/sh -c true"},
	{lists: 1, entries: "example.com\n*.example.com\n10.0.0.0/8"},
	{lists: 2, entries: "ads.example.com"},
	{lists: 1},
	{lists: 2},
	{lists: 1, entries: strings.TrimSuffix(strings.Repeat("a.com\n", 256), "\n")},
	{timeout: -1, hasTimeout: true, idle: 60, hasIdle: true},
	{timeout: -5, hasTimeout: true, idle: 1440, hasIdle: true},
	{timeout: -1, hasTimeout: true, idle: 1441, hasIdle: true},
	{timeout: 120, hasTimeout: true, idle: 60, hasIdle: true},
	{timeout: 0, hasTimeout: true},
	{timeout: 1, hasTimeout: true},
	{idle: 60, hasIdle: true},
	{idle: 61, hasIdle: true},
	{timeout: 0, hasTimeout: true, idle: 5, hasIdle: true},
}

func TestDifferentialCreate(t *testing.T) {
	for _, c := range createSeeds {
		diffCreate(t, c)
	}
	// Every provider-accepted entry is accepted at create time too.
	for _, v := range sdkVerdicts(t) {
		diffCreate(t, createCase{lists: 1, entries: v.Entry})
		diffCreate(t, createCase{lists: 2, entries: v.Entry})
	}
}

func FuzzDifferentialCreate(f *testing.F) {
	for _, c := range createSeeds {
		f.Add(c.cpu, c.hasCPU, c.arch, c.archText, c.gpuCount, c.gpuType, c.hasGPUType,
			c.start, c.startText, c.lists, c.entries, c.timeout, c.idle, c.hasTimeout, c.hasIdle)
	}
	f.Fuzz(func(t *testing.T, cpu int8, hasCPU bool, arch uint8, archText string, gpuCount int8, gpuType string,
		hasGPUType bool, start uint8, startText string, lists uint8, entries string,
		timeout, idle int16, hasTimeout, hasIdle bool) {
		diffCreate(t, createCase{
			cpu: cpu, hasCPU: hasCPU, arch: arch, archText: archText, gpuCount: gpuCount, gpuType: gpuType,
			hasGPUType: hasGPUType, start: start, startText: startText, lists: lists,
			entries: entries, timeout: timeout, idle: idle, hasTimeout: hasTimeout, hasIdle: hasIdle,
		})
	})
}

// TestCreateRulesPinned pins the mock's create verdicts under today's
// contract, in the SDK's order (the first broken rule is the one reported),
// and the statuses of the refusals decided on the wire body.
func TestCreateRulesPinned(t *testing.T) {
	for _, tc := range []struct {
		c    createCase
		want string
	}{
		{createCase{}, ""},
		{createCase{gpuCount: 1}, "gpu_type is required when gpu_count is greater than 0"},
		{createCase{gpuCount: 1, hasGPUType: true}, "gpu_type is required when gpu_count is greater than 0"},
		{createCase{gpuType: "H100", hasGPUType: true}, "gpu_type requires gpu_count greater than 0"},
		// The SDK only compares with 0; the older reference's range is 0-8.
		{createCase{gpuCount: -1, gpuType: "H100", hasGPUType: true}, "gpu_count: Input should be greater than or equal to 0"},
		{createCase{gpuCount: 9, gpuType: "H100", hasGPUType: true}, "gpu_count: Input should be less than or equal to 8"},
		{createCase{cpu: 17, hasCPU: true}, "cpu_cores: Input should be less than or equal to 16"},
		{createCase{start: 1, startText: "echo"}, ""}, // a legacy string is dropped
		{createCase{start: 2, startText: ""}, "start_command.executable: String should have at least 1 character"},
		{createCase{lists: 3}, "network_allowlist and network_denylist are mutually exclusive; provide at most one"},
		{createCase{lists: 1, entries: "ok.com\nhttps://x"}, "network_allowlist: 'https://x' is not a valid IPv4 CIDR"},
		{createCase{timeout: 0, hasTimeout: true}, "timeout_minutes must be negative for infinite or >= 1"},
		{createCase{timeout: -7, hasTimeout: true}, ""},
		{createCase{idle: 0, hasIdle: true}, "idle_timeout_minutes must be >= 1"},
		{createCase{idle: 1441, hasIdle: true, timeout: -1, hasTimeout: true}, "idle_timeout_minutes must be <= 1440"},
		{createCase{idle: 1440, hasIdle: true, timeout: -1, hasTimeout: true}, ""},
		{createCase{idle: 61, hasIdle: true}, "idle_timeout_minutes must be <= timeout_minutes (got idle=61, lifetime=60)"},
		{createCase{timeout: -1, hasTimeout: true, idle: 600, hasIdle: true}, ""},
		// The first rule wins; the timeout is a field rule, before the
		// model's.
		{createCase{gpuCount: 1, idle: 0, hasIdle: true, timeout: 0, hasTimeout: true}, "timeout_minutes must be negative for infinite or >= 1"},
		{createCase{gpuCount: 1, idle: 0, hasIdle: true}, "gpu_type is required when gpu_count is greater than 0"},
	} {
		_, _, _, err := admitCreate(tc.c.request())
		if got := errString(err); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"docker_image":"i"}`, 422, "name: Field required"},
		{`{"name":"n","docker_image":null}`, 422, "docker_image: Field required"},
		{`{"name":"n","docker_image":"i","labels":null}`, 422, "labels: Input should be a valid list"},
		{`{"name":"n","docker_image":"i","vm":false}`, 410, retiredMessage},
		{`{"name":"n","docker_image":"i","vm":false,"cpu_cores":0.5}`, 410, retiredMessage},
		{`{"name":"n","docker_image":"i","vm":true}`, 0, ""},
		{`{"name":"n","docker_image":"i","vm":null}`, 0, ""},
		{`{"name":"n","docker_image":"i","cpu_cores":1.5}`, 422, "cpu_cores: Input should be a valid integer, got a number with a fractional part"},
		{`{"name":"n","docker_image":"i","cpu_cores":2.0}`, 0, ""},
		{`{"name":"n","docker_image":"i","cpu_cores":2}`, 0, ""},
		{`{"name":"n","docker_image":"i","cpu_cores":"2"}`, 0, ""}, // pydantic's lax mode reads a numeric string
		{`{"name":"n","docker_image":"i","arch":"arm64"}`, 0, ""},
		{`{"name":"n","docker_image":"i","arch":"x86_64"}`, 422, "arch: Input should be 'amd64' or 'arm64'"},
		{`{"name":"n","docker_image":"i","guaranteed":false,"registry_credentials_id":null}`, 0, ""},
		{`{"name":"n","docker_image":"i","guaranteed":true}`, 422, "guaranteed is no longer supported: it was a container option, and container sandboxes were retired"},
		{`{"name":"n","docker_image":"i","registry_credentials_id":"rc-1"}`, 422, "registry_credentials_id is no longer supported: it was a container option, and container sandboxes were retired"},
	} {
		_, err := decodeCreate([]byte(tc.body))
		if got := errString(err); got != tc.want || (err != nil && refusalStatus(err) != tc.status) {
			t.Errorf("%s: %v (status %d), want %d %q", tc.body, err, refusalStatus(err), tc.status, tc.want)
		}
	}
}

// sdkCreateVerdict is one line of testdata/sdk_create_verdicts.json: a
// create request (its varying fields) and what prime-sandboxes 0.2.39's own
// CreateSandboxRequest (pydantic 2.13, CPython 3.11) answered; error is the
// text of a model validator's ValueError, empty for a field-level error.
type sdkCreateVerdict struct {
	VM         *bool   `json:"vm"`
	GPUCount   int     `json:"gpu_count"`
	GPUType    *string `json:"gpu_type"`
	Guaranteed bool    `json:"guaranteed"`
	Registry   *string `json:"registry_credentials_id"`
	Start      string  `json:"start"`
	Lists      string  `json:"lists"`
	Timeout    int     `json:"timeout_minutes"`
	Idle       *int    `json:"idle_timeout_minutes"`
	OK         bool    `json:"ok"`
	Error      string  `json:"error"`
}

// body is the request as the 0.2.39 SDK put it on the wire: every key, vm
// and registry_credentials_id only when set, guaranteed always.
func (v sdkCreateVerdict) body(t *testing.T) []byte {
	m := map[string]any{"name": "n", "docker_image": "i", "gpu_count": v.GPUCount, "guaranteed": v.Guaranteed,
		"timeout_minutes": v.Timeout, "labels": []string{}, "cpu_cores": 1.0}
	if v.VM != nil {
		m["vm"] = *v.VM
	}
	if v.GPUType != nil {
		m["gpu_type"] = *v.GPUType
	}
	if v.Registry != nil {
		m["registry_credentials_id"] = *v.Registry
	}
	if v.Idle != nil {
		m["idle_timeout_minutes"] = *v.Idle
	}
	switch v.Start {
	case "argv":
		m["start_command"] = map[string]any{"executable": "/bin/x", "args": []string{"a"}}
	case "argv-empty":
		m["start_command"] = map[string]any{"executable": "", "args": []string{}}
	case "argv-nul":
		m["start_command"] = map[string]any{"executable": "/bin/x", "args": []string{"a\x00b"}}
	case "string":
		m["start_command"] = "python -m http.server"
	}
	switch v.Lists {
	case "allow-empty":
		m["network_allowlist"] = []string{}
	case "deny-one":
		m["network_denylist"] = []string{"a.com"}
	case "both":
		m["network_allowlist"], m["network_denylist"] = []string{}, []string{}
	case "allow-bad":
		m["network_allowlist"] = []string{"ok.com", "bad..x"}
	case "allow-257":
		many := make([]string, 257)
		for i := range many {
			many[i] = "a.com"
		}
		m["network_allowlist"] = many
	case "deny-star":
		m["network_denylist"] = []string{"*"}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// want2026 is the verdict today's contract gives a recorded request: the
// refusals the contract added (a container, a retired container option, a
// lifetime of 0), in the order the mock decides them, and otherwise the
// 0.2.39 SDK's own verdict and message, whose rules still hold.
func (v sdkCreateVerdict) want2026() (ok bool, status int, msg string) {
	fieldError := v.Start == "argv-empty" || v.Start == "argv-nul"
	switch {
	case v.VM != nil && !*v.VM:
		return false, 410, retiredMessage
	case v.Guaranteed:
		return false, 422, "guaranteed is no longer supported"
	case v.Registry != nil && *v.Registry != "":
		return false, 422, "registry_credentials_id is no longer supported"
	case fieldError:
		return false, 422, v.Error
	case v.GPUCount < 0: // the older reference's range, a field rule
		return false, 422, "gpu_count: Input should be greater than or equal to 0"
	case v.Timeout == 0:
		return false, 422, "timeout_minutes must be negative for infinite or >= 1"
	}
	return v.OK, 422, v.Error
}

// TestCreateVerdictsMatchTheSDK: the mock's create rules give the recorded
// 0.2.39 SDK verdicts, moved to today's contract (want2026): the SDK's
// verdict and message wherever its rule still holds, the contract's
// refusal where the contract added one.
func TestCreateVerdictsMatchTheSDK(t *testing.T) {
	raw, err := os.ReadFile("testdata/sdk_create_verdicts.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []sdkCreateVerdict
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	accepted, moved := 0, 0
	for _, v := range vs {
		err := mockCreate(v.body(t))
		ok, status, msg := v.want2026()
		switch {
		case ok && err != nil:
			t.Errorf("%+v: accepted today, the mock says %v", v, err)
		case !ok && err == nil:
			t.Errorf("%+v: refused today (%q), the mock accepts it", v, msg)
		case !ok && (!strings.Contains(err.Error(), msg) || refusalStatus(err) != status):
			t.Errorf("%+v: %d %q, want %d …%q…", v, refusalStatus(err), err, status, msg)
		}
		if ok {
			accepted++
		}
		if ok != v.OK {
			moved++
		}
	}
	if len(vs) < 300 || accepted < 30 || moved < 10 {
		t.Fatalf("%d recorded verdicts, %d accepted today, %d moved: too few to mean much", len(vs), accepted, moved)
	}
}
