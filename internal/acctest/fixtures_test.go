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
		{CommandHCL("setup", "prime_sandbox.box.id", "pip install x"), `
resource "prime_sandbox_command" "setup" {
  sandbox_id = prime_sandbox.box.id
  command    = "pip install x"
}
`},
		{FleetCommandHCL("agent", "prime_sandbox_fleet.eval.sandbox_ids", []string{"a", "b"}), `
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  commands    = ["a", "b"]
}
`},
		{FleetEgressPolicyHCL("lock", "prime_sandbox_fleet.eval.sandbox_ids", []string{"pypi.org"}), `
resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  allow       = ["pypi.org"]
}
`},
		{SandboxFileHCL("task", "prime_sandbox.box.id", "/task/in.txt", `content = "x"`), `
resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task/in.txt"
  content = "x"
}
`},
		{FleetFileHCL("task", "prime_sandbox_fleet.eval.sandbox_ids", "/task/in.txt"), `
resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  path        = "/task/in.txt"
}
`},
		{SandboxArtifactHCL("out", "prime_sandbox.box.id", "/out", "/tmp/out"), `
resource "prime_sandbox_artifact" "out" {
  sandbox_id  = prime_sandbox.box.id
  remote_path = "/out"
  local_path  = "/tmp/out"
}
`},
		{FleetArtifactHCL("out", "prime_sandbox_fleet.eval.sandbox_ids", "/out", "/tmp/out"), `
resource "prime_fleet_artifact" "out" {
  sandbox_ids = prime_sandbox_fleet.eval.sandbox_ids
  remote_path = "/out"
  local_path  = "/tmp/out"
}
`},
		{CheckpointHCL("setup", "prime_sandbox.box.id"), `
resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id = prime_sandbox.box.id
}
`},
		{NetworkHCL("net", "n", `rules = []`), `
resource "prime_sandbox_network" "net" {
  name = "n"
  rules = []
}
`},
		{NetworkMemberHCL("box", "prime_sandbox_network.net.id", "prime_sandbox.box.id"), `
resource "prime_sandbox_network_member" "box" {
  network_id = prime_sandbox_network.net.id
  sandbox_id = prime_sandbox.box.id
}
`},
		{VolumeHCL("data", "data", 10), `
resource "prime_volume" "data" {
  name    = "data"
  size_gb = 10
}
`},
		{ImageVMBuildHCL("img", "agent-image"), `
resource "prime_image_vm_build" "img" {
  name = "agent-image"
}
`},
	} {
		if tc.got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", tc.got, tc.want)
		}
	}
}
