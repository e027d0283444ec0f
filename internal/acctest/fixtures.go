package acctest

import (
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
)

// Fixture builders for the acceptance tests' configurations: the plain
// blocks most tests need around the thing they test. A test whose subject
// is the HCL itself (an attribute's syntax, a plan-time error, text a test
// edits) keeps its block inline.
//
// attrs are extra attribute lines, written as in HCL (`labels = ["x"]`);
// strings the builders take are quoted for HCL (see HCLString).

// Image is the image of every fixture (mocktest.Image).
const Image = mocktest.Image

// Block renders `resource "typ" "label" { lines... }` with a blank line
// before it.
func Block(typ, label string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nresource %q %q {\n", typ, label)
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// HCLString is s as an HCL quoted string: Go's quoting, with template
// sequences escaped so that s is taken literally.
func HCLString(s string) string {
	q := fmt.Sprintf("%q", s)
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
}

// SandboxHCL is a prime_sandbox named name with the test image.
func SandboxHCL(label, name string, attrs ...string) string {
	return Block("prime_sandbox", label, append([]string{
		"name         = " + HCLString(name),
		"docker_image = " + HCLString(Image),
	}, attrs...)...)
}

// SandboxFleetHCL is a prime_sandbox_fleet of size members named after prefix,
// with the test image.
func SandboxFleetHCL(label, prefix string, size int, attrs ...string) string {
	return Block("prime_sandbox_fleet", label, append([]string{
		"name_prefix  = " + HCLString(prefix),
		fmt.Sprintf("size         = %d", size),
		"docker_image = " + HCLString(Image),
	}, attrs...)...)
}

// BackgroundCommandHCL is a prime_sandbox_command that runs command as a
// background job in the sandbox whose id is the HCL expression sandboxID.
func BackgroundCommandHCL(label, sandboxID, command string, attrs ...string) string {
	return Block("prime_sandbox_command", label, append([]string{
		"sandbox_id = " + sandboxID,
		"command    = " + HCLString(command),
		"background = true",
	}, attrs...)...)
}

// FleetBackgroundCommandHCL is a prime_fleet_command that runs commands as
// background jobs on the members whose ids are the HCL expression
// sandboxIDs.
func FleetBackgroundCommandHCL(label, sandboxIDs string, commands []string, attrs ...string) string {
	quoted := make([]string, len(commands))
	for i, c := range commands {
		quoted[i] = HCLString(c)
	}
	return Block("prime_fleet_command", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"commands    = [" + strings.Join(quoted, ", ") + "]",
		"background  = true",
	}, attrs...)...)
}

// EgressPolicyHCL is a prime_egress_policy on the sandbox whose id is the
// HCL expression sandboxID that allows only the hosts in allow.
func EgressPolicyHCL(label, sandboxID string, allow []string, attrs ...string) string {
	quoted := make([]string, len(allow))
	for i, h := range allow {
		quoted[i] = HCLString(h)
	}
	return Block("prime_egress_policy", label, append([]string{
		"sandbox_id = " + sandboxID,
		"allow      = [" + strings.Join(quoted, ", ") + "]",
	}, attrs...)...)
}

// quoted is each of ss as an HCL string, comma-separated in brackets.
func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = HCLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// CommandHCL is a prime_sandbox_command that runs command (in the
// foreground) in the sandbox whose id is the HCL expression sandboxID.
func CommandHCL(label, sandboxID, command string, attrs ...string) string {
	return Block("prime_sandbox_command", label, append([]string{
		"sandbox_id = " + sandboxID,
		"command    = " + HCLString(command),
	}, attrs...)...)
}

// FleetCommandHCL is a prime_fleet_command that runs commands, in order, on
// the members whose ids are the HCL expression sandboxIDs.
func FleetCommandHCL(label, sandboxIDs string, commands []string, attrs ...string) string {
	return Block("prime_fleet_command", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"commands    = " + quoted(commands),
	}, attrs...)...)
}

// FleetEgressPolicyHCL is a prime_fleet_egress_policy on the members whose
// ids are the HCL expression sandboxIDs that allows only the hosts in
// allow.
func FleetEgressPolicyHCL(label, sandboxIDs string, allow []string, attrs ...string) string {
	return Block("prime_fleet_egress_policy", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"allow       = " + quoted(allow),
	}, attrs...)...)
}

// SandboxFileHCL is a prime_sandbox_file at path in the sandbox whose id
// is the HCL expression sandboxID; attrs give its source (content,
// source, ...).
func SandboxFileHCL(label, sandboxID, path string, attrs ...string) string {
	return Block("prime_sandbox_file", label, append([]string{
		"sandbox_id = " + sandboxID,
		"path       = " + HCLString(path),
	}, attrs...)...)
}

// FleetFileHCL is a prime_fleet_file at path on the members whose ids are
// the HCL expression sandboxIDs; attrs give its source.
func FleetFileHCL(label, sandboxIDs, path string, attrs ...string) string {
	return Block("prime_fleet_file", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"path        = " + HCLString(path),
	}, attrs...)...)
}

// SandboxArtifactHCL is a prime_sandbox_artifact that brings remotePath of
// the sandbox whose id is the HCL expression sandboxID to localPath.
func SandboxArtifactHCL(label, sandboxID, remotePath, localPath string, attrs ...string) string {
	return Block("prime_sandbox_artifact", label, append([]string{
		"sandbox_id  = " + sandboxID,
		"remote_path = " + HCLString(remotePath),
		"local_path  = " + HCLString(localPath),
	}, attrs...)...)
}

// FleetArtifactHCL is a prime_fleet_artifact that brings remotePath of
// every member whose id is in the HCL expression sandboxIDs under
// localPath.
func FleetArtifactHCL(label, sandboxIDs, remotePath, localPath string, attrs ...string) string {
	return Block("prime_fleet_artifact", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"remote_path = " + HCLString(remotePath),
		"local_path  = " + HCLString(localPath),
	}, attrs...)...)
}

// CheckpointHCL is a prime_sandbox_checkpoint of the sandbox whose id is
// the HCL expression sandboxID.
func CheckpointHCL(label, sandboxID string, attrs ...string) string {
	return Block("prime_sandbox_checkpoint", label, append([]string{
		"sandbox_id = " + sandboxID,
	}, attrs...)...)
}

// NetworkHCL is a prime_sandbox_network named name; attrs give its rules.
func NetworkHCL(label, name string, attrs ...string) string {
	return Block("prime_sandbox_network", label, append([]string{
		"name = " + HCLString(name),
	}, attrs...)...)
}

// NetworkMemberHCL joins the sandbox whose id is the HCL expression
// sandboxID to the network whose id is the HCL expression networkID.
func NetworkMemberHCL(label, networkID, sandboxID string, attrs ...string) string {
	return Block("prime_sandbox_network_member", label, append([]string{
		"network_id = " + networkID,
		"sandbox_id = " + sandboxID,
	}, attrs...)...)
}

// VolumeHCL is a prime_volume named name of sizeGB GB.
func VolumeHCL(label, name string, sizeGB int, attrs ...string) string {
	return Block("prime_volume", label, append([]string{
		"name    = " + HCLString(name),
		fmt.Sprintf("size_gb = %d", sizeGB),
	}, attrs...)...)
}

// ImageVMBuildHCL is a prime_image_vm_build named name; attrs give what it
// builds from.
func ImageVMBuildHCL(label, name string, attrs ...string) string {
	return Block("prime_image_vm_build", label, append([]string{
		"name = " + HCLString(name),
	}, attrs...)...)
}
