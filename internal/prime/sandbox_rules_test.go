package prime

import (
	"strings"
	"testing"
)

func TestCreateRules(t *testing.T) {
	b := func(v bool) *bool { return &v }
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
		{"gpu on container", base(func(r *CreateSandboxRequest) { r.GPUCount = i(1); r.GPUType = s("A100"); r.VM = b(false) }), "gpu_count", "not supported on containers"},
		{"gpu with unset vm is fine", base(func(r *CreateSandboxRequest) { r.GPUCount = i(2); r.GPUType = s("A100") }), "", ""},
		{"gpu type without count", base(func(r *CreateSandboxRequest) { r.GPUType = s("A100") }), "gpu_type", "needs gpu_count > 0"},
		{"guaranteed on unset vm", base(func(r *CreateSandboxRequest) { r.Guaranteed = true }), "guaranteed", "vm = false"},
		{"guaranteed on container", base(func(r *CreateSandboxRequest) { r.Guaranteed = true; r.VM = b(false) }), "", ""},
		{"registry creds on vm", base(func(r *CreateSandboxRequest) { r.RegistryCredentialsID = s("c"); r.VM = b(true) }), "registry_credentials_id", "vm = false"},
		{"shell command on unset vm", base(func(r *CreateSandboxRequest) { r.StartCommand = ShellCommand("python app.py") }), "start_command", `start_argv = ["/bin/sh", "-c", "python app.py"]`},
		{"shell command on container", base(func(r *CreateSandboxRequest) { r.StartCommand = ShellCommand("x"); r.VM = b(false) }), "", ""},
		{"argv without executable", base(func(r *CreateSandboxRequest) {
			r.StartCommand = &StartCommand{Argv: &StartArgv{Args: []string{}}}
		}), "start_command", "needs an executable"},
		{"argv with NUL", base(func(r *CreateSandboxRequest) { r.StartCommand = ArgvCommand("/bin/x", "a\x00b") }), "start_command", "NUL"},
		{"egress lists on container", base(func(r *CreateSandboxRequest) { r.NetworkAllowlist = &[]string{}; r.VM = b(false) }), "network_allowlist", "VM"},
		{"both egress lists", base(func(r *CreateSandboxRequest) { r.NetworkAllowlist = &[]string{}; r.NetworkDenylist = &[]string{} }), "network_allowlist", "mutually exclusive"},
		{"idle below 1", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(0) }), "idle_timeout_minutes", "at least 1"},
		{"idle above timeout", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(30); r.TimeoutMinutes = i(20) }), "idle_timeout_minutes", "must not exceed timeout_minutes (20)"},
		{"idle above the default timeout", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(90) }), "idle_timeout_minutes", "must not exceed the sandbox's lifetime, 60 minutes (timeout_minutes is unset, so its default applies)"},
		{"idle with unbounded vm", base(func(r *CreateSandboxRequest) { r.IdleTimeoutMinutes = i(600); r.TimeoutMinutes = i(-1) }), "", ""},
		{"idle on unbounded container", base(func(r *CreateSandboxRequest) {
			r.IdleTimeoutMinutes = i(10)
			r.TimeoutMinutes = i(-1)
			r.VM = b(false)
		}), "idle_timeout_minutes", "finite lifetime"},
		{"zero cpu", base(func(r *CreateSandboxRequest) { r.CPUCores = f(0) }), "cpu_cores", "greater than 0"},
		{"negative memory", base(func(r *CreateSandboxRequest) { r.MemoryGB = f(-1) }), "memory_gb", "greater than 0"},
		{"empty label", base(func(r *CreateSandboxRequest) { r.Labels = []string{"ok", " "} }), "labels", "empty"},
		{"bad env name", base(func(r *CreateSandboxRequest) { r.EnvironmentVars = map[string]string{"1BAD": "x"} }), "environment_vars", `"1BAD"`},
		{"bad secret name", base(func(r *CreateSandboxRequest) { r.Secrets = map[string]string{"A-B": "x"} }), "secrets", `"A-B"`},
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
