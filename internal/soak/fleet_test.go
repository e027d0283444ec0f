package soak

import (
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

func TestFleetHCL(t *testing.T) {
	hcl := Fleet{N: 3, BaseURL: "http://127.0.0.1:1", Setup: true, Agent: true, PolicyCreateTimeout: "3s",
		ProviderExtra: "max_retries = 2"}.HCL()
	for _, want := range []string{
		`resource "prime_sandbox" "s002"`, `resource "prime_egress_policy" "p002"`,
		`resource "prime_sandbox_command" "setup002"`, `resource "prime_sandbox_command" "agent002"`,
		`depends_on = [prime_sandbox_command.setup001]`, `depends_on = [prime_egress_policy.p001]`,
		`create = "3s"`, `  max_retries = 2`, `allow      = ["example.com"]`,
	} {
		if !strings.Contains(hcl, want) {
			t.Errorf("HCL lacks %q:\n%s", want, hcl)
		}
	}
	if n := strings.Count(hcl, `resource "prime_sandbox" `); n != 3 {
		t.Errorf("%d sandboxes, want 3", n)
	}
}

func TestLiveSandboxes(t *testing.T) {
	evs := []primemock.Event{
		{Type: primemock.EventSandboxCreated, SandboxID: "a"},
		{Type: primemock.EventSandboxCreated, SandboxID: "b"},
		{Type: primemock.EventSandboxCreated, SandboxID: "c"},
		{Type: primemock.EventSandboxDeleted, SandboxID: "a"},
		{Type: primemock.EventSandboxError, SandboxID: "c"},
		{Type: primemock.EventSandboxCreated, SandboxID: "d"},
		{Type: primemock.EventSandboxEnded, SandboxID: "d"},
		{Type: primemock.EventSandboxCreated, SandboxID: "e"},
		{Type: primemock.EventSandboxStopped, SandboxID: "e"},
	}
	live := LiveSandboxes(evs)
	if len(live) != 1 || !live["b"] {
		t.Fatalf("live = %v, want only b (a timed-out and a stopped sandbox are not live)", live)
	}
}

func TestSandboxFleetHCL(t *testing.T) {
	hcl := SandboxFleet{N: 7, BaseURL: "http://127.0.0.1:1", ProviderExtra: "max_requests_per_second = 0", Prefix: "bench"}.HCL()
	for _, want := range []string{
		`resource "prime_sandbox_fleet" "fleet"`, `size         = 7`, `name_prefix  = "bench"`,
		`resource "prime_fleet_egress_policy" "lock"`, `sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids`,
		`allow       = ["example.com"]`, `routes      = ["https://intercept.example.net/v1"]`,
		`  max_requests_per_second = 0`,
	} {
		if !strings.Contains(hcl, want) {
			t.Errorf("HCL lacks %q:\n%s", want, hcl)
		}
	}
	if FleetAddr != "prime_sandbox_fleet.fleet" || FleetPolicyAddr != "prime_fleet_egress_policy.lock" {
		t.Error("addresses do not match the rendered resource names")
	}
}

func TestTaskFleetHCL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         TaskFleet
		want, not []string
	}{
		{"files and read", TaskFleet{N: 5, BaseURL: "http://127.0.0.1:1", TaskDir: "/tmp/task", ReadResult: true, Prefix: "bench"},
			[]string{`size         = 5`, `resource "prime_fleet_file" "task"`, `source_dir  = "/tmp/task"`, `path        = "/task"`,
				`depends_on  = [prime_fleet_file.task]`, `data "prime_fleet_file" "result"`, `path        = "/task/result.json"`,
				`commands    = ["mkdir -p /task && echo \"{\\\"reward\\\": 1}\" > /task/result.json"]`,
				`sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }`},
			[]string{"background", "max_concurrency"}},
		{"no files", TaskFleet{N: 5, BaseURL: "http://127.0.0.1:1"},
			[]string{`resource "prime_fleet_command" "agent"`},
			[]string{"prime_fleet_file", "depends_on"}},
		{"background job", TaskFleet{N: 1000, BaseURL: "http://127.0.0.1:1", Command: "sleep 60", Background: true, MaxConcurrency: 1000},
			[]string{`commands    = ["sleep 60"]`, `background  = true`, `max_concurrency = 1000`},
			[]string{"prime_fleet_file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hcl := tc.f.HCL()
			for _, w := range tc.want {
				if !strings.Contains(hcl, w) {
					t.Errorf("HCL lacks %q:\n%s", w, hcl)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(hcl, w) {
					t.Errorf("HCL has %q:\n%s", w, hcl)
				}
			}
		})
	}
}
