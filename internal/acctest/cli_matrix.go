package acctest

import (
	"os"
	"testing"
)

// The CLI matrix of `make test`: every test on the CLI on PATH, then the
// TestAcc* tests again on the pinned newest Terraform and on the pinned
// OpenTofu, with PRIME_TEST_EXTRA_CLI set. A test that measures only what
// the provider asks of the API (request counts of thousands of members) has
// nothing to learn from another CLI and costs minutes on each: it runs on
// the first CLI only.

// extraCLIEnv is set by the Makefile for the runs on the extra CLIs.
const extraCLIEnv = "PRIME_TEST_EXTRA_CLI"

// onExtraCLI reports whether this is a run on an extra CLI.
func onExtraCLI() bool { return os.Getenv(extraCLIEnv) != "" }

// FirstCLIOnly skips the test in the runs on the extra CLIs, saying why it
// does not need them.
func FirstCLIOnly(t testing.TB, why string) {
	t.Helper()
	if onExtraCLI() {
		t.Skipf("runs on the first CLI of make test only: %s (%s is set)", why, extraCLIEnv)
	}
}
