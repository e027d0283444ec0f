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
