package prime

import (
	"strings"
	"testing"
)

func TestCreateRules(t *testing.T) {
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	base := func(mod func(*CreateSandboxRequest)) CreateSandboxRequest {
		r := CreateSandboxRequest{Name: "n", DockerImage: "img", Labels: []string{}}
		mod(&r)
		return r
	}
	tests := []struct {
		name      string
		req       CreateSandboxRequest
		wantField string
		wantMsg   string
	}{
		{"defaults are fine", base(func(*CreateSandboxRequest) {}), "", ""},
		{"gpu count without type", base(func(r *CreateSandboxRequest) { r.GPUCount = i(1) }), "gpu_type", "required when gpu_count > 0"},
		{"gpus are fine", base(func(r *CreateSandboxRequest) { r.GPUCount = i(2); r.GPUType = s("A100") }), "", ""},
		{"gpu type without count", base(func(r *CreateSandboxRequest) { r.GPUType = s("A100") }), "gpu_type", "needs gpu_count > 0"},
		{"string start command", base(func(r *CreateSandboxRequest) { r.StartCommand = ShellCommand("python app.py") }), "start_command", `the argv form, for example ["/bin/sh", "-c", "python app.py"]`},
		{"arm64", base(func(r *CreateSandboxRequest) { r.Arch = s(ArchARM64) }), "", ""},
		{"amd64", base(func(r *CreateSandboxRequest) { r.Arch = s(ArchAMD64) }), "", ""},
		{"unknown arch", base(func(r *CreateSandboxRequest) { r.Arch = s("x86_64") }), "arch", `must be "amd64" or "arm64", got "x86_64"`},
		{"argv without executable", base(func(r *CreateSandboxRequest) {
			r.StartCommand = &StartCommand{Argv: &StartArgv{Args: []string{}}}
		}), "start_command", "needs an executable"},
		{"argv with NUL", base(func(r *CreateSandboxRequest) { r.StartCommand = ArgvCommand("/bin/x", "a\x00b") }), "start_command", "NUL"},
		{"both egress lists", base(func(r *CreateSandboxRequest) { r.NetworkAllowlist = &[]string{}; r.NetworkDenylist = &[]string{} }), "network_allowlist", "mutually exclusive"},
		{"timeout 0", base(func(r *CreateSandboxRequest) { r.TimeoutMinutes = i(0) }), "timeout_minutes", "must be negative for no lifetime limit (-1) or >= 1, got 0"},
		{"timeout -1 is no limit", base(func(r *CreateSandboxRequest) { r.TimeoutMinutes = i(-1) }), "", ""},
		{"any negative timeout is no limit", base(func(r *CreateSandboxRequest) { r.TimeoutMinutes = i(-30) }), "", ""},
		{"timeout 1", base(func(r *CreateSandboxRequest) { r.TimeoutMinutes = i(1) }), "", ""},
		{"idle below 1", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(0) }), "idle_timeout_minutes", "must be between 1 and 1440 minutes (24 hours), got 0"},
		{"idle 1440 unbounded", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(1440); r.TimeoutMinutes = i(-1) }), "", ""},
		{"idle above 1440", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(1441); r.TimeoutMinutes = i(-1) }), "idle_timeout_minutes", "must be between 1 and 1440 minutes (24 hours), got 1441"},
		{"idle equal to timeout", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(20); r.TimeoutMinutes = i(20) }), "", ""},
		{"idle above timeout", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(30); r.TimeoutMinutes = i(20) }), "idle_timeout_minutes", "must not exceed timeout_minutes (20)"},
		{"idle above the default timeout", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(90) }), "idle_timeout_minutes", "must not exceed the sandbox's lifetime, 60 minutes (timeout_minutes is unset, so its default applies)"},
		{"idle with unbounded vm", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(600); r.TimeoutMinutes = i(-1) }), "", ""},
		{"zero cpu", base(func(r *CreateSandboxRequest) { r.CPUCores = i(0) }), "cpu_cores", "must be at least 1 (whole vCPUs), got 0"},
		{"eight cpus", base(func(r *CreateSandboxRequest) { r.CPUCores = i(8) }), "", ""},
		{"negative memory", base(func(r *CreateSandboxRequest) { r.MemoryGB = f(-1) }), "memory_gb", "greater than 0"},
		{"empty label", base(func(r *CreateSandboxRequest) { r.Labels = []string{"ok", " "} }), "labels", "empty"},
		{"bad env name", base(func(r *CreateSandboxRequest) { r.EnvironmentVars = map[string]string{"1BAD": "x"} }), "environment_vars", `"1BAD"`},
		{"bad secret name", base(func(r *CreateSandboxRequest) { r.Secrets = map[string]string{"A-B": "x"} }), "secrets", `"A-B"`},
		{"name of 100 characters", base(func(r *CreateSandboxRequest) { r.Name = strings.Repeat("é", 100) }), "", ""},
		{"name of 101 characters", base(func(r *CreateSandboxRequest) { r.Name = strings.Repeat("n", 101) }), "name", "at most 100 characters, got 101"},
		{"NUL in a variable", base(func(r *CreateSandboxRequest) { r.EnvironmentVars = map[string]string{"A": "x\x00y"} }), "environment_vars", "the value of A must not contain NUL bytes"},
		{"NUL in a secret", base(func(r *CreateSandboxRequest) { r.Secrets = map[string]string{"TOKEN": "x\x00y"} }), "secrets", "the value of TOKEN must not contain NUL bytes"},
		{"a variable and a secret of one name", base(func(r *CreateSandboxRequest) {
			r.EnvironmentVars = map[string]string{"TOKEN": "a"}
			r.Secrets = map[string]string{"TOKEN": "b"}
		}), "secrets", "TOKEN is also in environment_vars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := CreateRules(tt.req)
			if tt.wantField == "" {
				if len(vs) != 0 {
					t.Fatalf("unexpected violations: %v", vs)
				}
				return
			}
			for _, v := range vs {
				if v.Field == tt.wantField && strings.Contains(v.Message, tt.wantMsg) {
					if v.Inputs[0] != v.Field {
						t.Fatalf("Inputs %v must start with Field %q", v.Inputs, v.Field)
					}
					return
				}
			}
			t.Fatalf("violations %v, want %s: …%s…", vs, tt.wantField, tt.wantMsg)
		})
	}
}
