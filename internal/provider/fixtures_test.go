package provider

import (
	"fmt"
	"strings"
)

// Fixture builders for the acceptance tests' configurations: the plain
// blocks most tests need around the thing they test. A test whose subject
// is the HCL itself (an attribute's syntax, a plan-time error, text a test
// edits) keeps its block inline.
//
// attrs are extra attribute lines, written as in HCL (`labels = ["x"]`);
// strings the builders take are quoted for HCL (see hclString).

// testImage is the image of every fixture: the mock runs any image, and
// this is the one the examples use.
const testImage = "python:3.12-slim"

// hclBlock renders `resource "typ" "label" { lines... }` with a blank line
// before it.
func hclBlock(typ, label string, lines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nresource %q %q {\n", typ, label)
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// hclString is s as an HCL quoted string: Go's quoting, with template
// sequences escaped so that s is taken literally.
func hclString(s string) string {
	q := fmt.Sprintf("%q", s)
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
}

// sandboxHCL is a prime_sandbox named name with the test image.
func sandboxHCL(label, name string, attrs ...string) string {
	return hclBlock("prime_sandbox", label, append([]string{
		"name         = " + hclString(name),
		"docker_image = " + hclString(testImage),
	}, attrs...)...)
}

// sandboxFleetHCL is a prime_sandbox_fleet of size members named after prefix,
// with the test image.
func sandboxFleetHCL(label, prefix string, size int, attrs ...string) string {
	return hclBlock("prime_sandbox_fleet", label, append([]string{
		"name_prefix  = " + hclString(prefix),
		fmt.Sprintf("size         = %d", size),
		"docker_image = " + hclString(testImage),
	}, attrs...)...)
}

// backgroundCommandHCL is a prime_sandbox_command that runs command as a
// background job in the sandbox whose id is the HCL expression sandboxID.
func backgroundCommandHCL(label, sandboxID, command string, attrs ...string) string {
	return hclBlock("prime_sandbox_command", label, append([]string{
		"sandbox_id = " + sandboxID,
		"command    = " + hclString(command),
		"background = true",
	}, attrs...)...)
}

// fleetBackgroundCommandHCL is a prime_fleet_command that runs commands as
// background jobs on the members whose ids are the HCL expression
// sandboxIDs.
func fleetBackgroundCommandHCL(label, sandboxIDs string, commands []string, attrs ...string) string {
	quoted := make([]string, len(commands))
	for i, c := range commands {
		quoted[i] = hclString(c)
	}
	return hclBlock("prime_fleet_command", label, append([]string{
		"sandbox_ids = " + sandboxIDs,
		"commands    = [" + strings.Join(quoted, ", ") + "]",
		"background  = true",
	}, attrs...)...)
}

// egressPolicyHCL is a prime_egress_policy on the sandbox whose id is the
// HCL expression sandboxID that allows only the hosts in allow.
func egressPolicyHCL(label, sandboxID string, allow []string, attrs ...string) string {
	quoted := make([]string, len(allow))
	for i, h := range allow {
		quoted[i] = hclString(h)
	}
	return hclBlock("prime_egress_policy", label, append([]string{
		"sandbox_id = " + sandboxID,
		"allow      = [" + strings.Join(quoted, ", ") + "]",
	}, attrs...)...)
}
