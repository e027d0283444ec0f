package sandbox

import (
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// Sandboxes are VMs only since the platform retired containers on
// 2026-09-18: an explicit vm false is answered with HTTP 410, and the
// container options (guaranteed, registry credentials, the shell-string
// start command) are gone from the API. The attributes stay in the schema,
// deprecated, so that a configuration still setting them gets an error on
// the attribute with what to do instead, rather than Terraform's bare
// "unsupported argument"; none of them is ever sent.

// containersRetired is what every retired attribute's error starts with.
const containersRetired = "Prime retired container sandboxes on 2026-09-18; every sandbox is now a VM, and the " +
	"platform answers a request for a container with HTTP 410 Gone."

const (
	vmDeprecation = "Every sandbox is a VM (containers were retired on 2026-09-18): vm is never sent and always " +
		"true. Remove it from your configuration."
	startCommandDeprecation = "The shell-string start command was the containers' form and is retired: use " +
		"start_argv (run without a shell; when its process exits, the sandbox stops)."
	guaranteedDeprecation          = "guaranteed was a container option and is retired: remove it from your configuration."
	registryCredentialsDeprecation = "registry_credentials_id was a container option and is retired: remove it " +
		"from your configuration (a VM boots from a public image or a Prime image)."
)

// retiredSandboxAttributes refuses, at plan, the retired attributes of one
// sandbox: vm = false, guaranteed = true, registry_credentials_id and
// start_command. prime_sandbox and prime_sandbox_fleet's template share it
// (through validateSandbox). An unknown value is left alone: nothing is
// sent for it either way.
func retiredSandboxAttributes(m sandboxTemplate, diags *diag.Diagnostics) {
	const summary = "Retired sandbox setting"
	if isSet(m.VM) && !m.VM.ValueBool() {
		diags.AddAttributeError(path.Root("vm"), summary, "vm: "+containersRetired+" Remove vm = false (and vm "+
			"itself: it is deprecated and always true); a container's start_command becomes start_argv, and "+
			"guaranteed and registry_credentials_id go.")
	}
	if isSet(m.Guaranteed) && m.Guaranteed.ValueBool() {
		diags.AddAttributeError(path.Root("guaranteed"), summary, "guaranteed: "+containersRetired+" guaranteed was "+
			"a container option and has no VM equivalent: remove it.")
	}
	if isSet(m.RegistryCredentialsID) {
		diags.AddAttributeError(path.Root("registry_credentials_id"), summary, "registry_credentials_id: "+
			containersRetired+" Registry credentials were a container option: remove the attribute, and boot "+
			"from a public image or a Prime image (<user_id>/name:tag).")
	}
	if isSet(m.StartCommand) {
		diags.AddAttributeError(path.Root("start_command"), summary, "start_command: "+containersRetired+" The "+
			"shell-string start command was the containers' form. Use start_argv, which runs without a shell, for "+
			"example start_argv = [\"/bin/sh\", \"-c\", "+strconv.Quote(m.StartCommand.ValueString())+"]. Its process is "+
			"one-shot: when it exits, the sandbox stops; leave start_argv unset to keep the sandbox up (the old "+
			"default, tail -f /dev/null, is no longer needed).")
	}
}

// isSet reports whether v is set to a known value.
func isSet(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }
