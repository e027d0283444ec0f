package sandbox

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestRetiredSandboxAttributes(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*sandboxModel)
		want map[string]string // attribute → part of its error
	}{
		{"nothing retired", func(*sandboxModel) {}, nil},
		{"vm true is only deprecated", func(m *sandboxModel) { m.VM = types.BoolValue(true) }, nil},
		{"guaranteed false is only deprecated", func(m *sandboxModel) { m.Guaranteed = types.BoolValue(false) }, nil},
		{"unknown values wait", func(m *sandboxModel) {
			m.VM, m.Guaranteed = types.BoolUnknown(), types.BoolUnknown()
			m.StartCommand, m.RegistryCredentialsID = types.StringUnknown(), types.StringUnknown()
		}, nil},
		{"vm false", func(m *sandboxModel) { m.VM = types.BoolValue(false) },
			map[string]string{"vm": "vm: Prime retired container sandboxes on 2026-09-18; every sandbox is now a VM, and the platform answers a request for a container with HTTP 410 Gone"}},
		{"guaranteed", func(m *sandboxModel) { m.Guaranteed = types.BoolValue(true) },
			map[string]string{"guaranteed": "has no VM equivalent: remove it"}},
		{"registry credentials", func(m *sandboxModel) { m.RegistryCredentialsID = types.StringValue("cred") },
			map[string]string{"registry_credentials_id": "boot from a public image or a Prime image"}},
		{"start_command", func(m *sandboxModel) { m.StartCommand = types.StringValue(`python "app.py"`) },
			map[string]string{"start_command": `start_argv = ["/bin/sh", "-c", "python \"app.py\""]. Its process is one-shot: when it exits, the sandbox stops`}},
		{"a whole container", func(m *sandboxModel) {
			m.VM, m.Guaranteed = types.BoolValue(false), types.BoolValue(true)
			m.StartCommand, m.RegistryCredentialsID = types.StringValue("x"), types.StringValue("c")
		}, map[string]string{"vm": "vm:", "guaranteed": "guaranteed:", "registry_credentials_id": "registry_credentials_id:", "start_command": "start_command:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := nullSandboxModel()
			m.VM = types.BoolNull()
			tc.set(&m)
			var diags diag.Diagnostics
			retiredSandboxAttributes(m.template(), &diags)
			if got := diags.ErrorsCount(); got != len(tc.want) {
				t.Fatalf("%d errors, want %d: %v", got, len(tc.want), diags)
			}
			for attr, want := range tc.want {
				found := false
				for _, d := range diags.Errors() {
					withPath, ok := d.(diag.DiagnosticWithPath)
					if ok && withPath.Path().Equal(path.Root(attr)) && strings.Contains(d.Detail(), want) {
						found = true
					}
				}
				if !found {
					t.Errorf("no error on %s containing %q: %v", attr, want, diags)
				}
			}
		})
	}
}
