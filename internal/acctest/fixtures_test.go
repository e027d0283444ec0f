package acctest

import "testing"

// The builders write what a test would have written by hand.
func TestFixtureBuilders(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{SandboxHCL("box", "box"), `
resource "prime_sandbox" "box" {
  name         = "box"
  docker_image = "python:3.12-slim"
}
`},
		{SandboxHCL("a", "a-${x}", `labels = ["x"]`), `
resource "prime_sandbox" "a" {
  name         = "a-$${x}"
  docker_image = "python:3.12-slim"
  labels = ["x"]
}
`},
		{SandboxFleetHCL("eval", "bg", 3), `
resource "prime_sandbox_fleet" "eval" {
  name_prefix  = "bg"
  size         = 3
  docker_image = "python:3.12-slim"
}
`},
		{BackgroundCommandHCL("agent", "prime_sandbox.box.id", `echo "hi"; sleep 1`, "timeout_seconds = 600"), `
resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_sandbox.box.id
  command    = "echo \"hi\"; sleep 1"
  background = true
  timeout_seconds = 600
}
`},
		{FleetBackgroundCommandHCL("agent", "prime_sandbox_fleet.eval.sandbox_ids", []string{"a", "b"}), `
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["a", "b"]
  background  = true
}
`},
		{EgressPolicyHCL("lock", "prime_sandbox.box.id", []string{"pypi.org", "*.pypi.org"}), `
resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = ["pypi.org", "*.pypi.org"]
}
`},
	} {
		if tc.got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", tc.got, tc.want)
		}
	}
}
