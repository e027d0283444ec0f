// Package sandbox holds the sandbox domain: prime_sandbox, prime_sandbox_fleet
// and what reads, finds and removes sandboxes.
//
// It owns:
//
//   - the sandbox's attributes and their conversions from the API, shared by
//     the resource and the data sources (model.go), and the create request
//     a plan makes (the one rule prime_sandbox and a fleet's template use);
//   - creating a sandbox under the create journal and waiting for it
//     (create.go, lifecycle.go), the retired attributes (retired.go), the
//     state upgrade from the container era (state_upgrade.go) and whole
//     vCPU counts (whole_number_type.go);
//   - prime_sandbox (resource.go) and prime_sandbox_fleet (fleet_*.go:
//     schema and plan, orchestration and its failure wording, CRUD,
//     per-member egress, import, redo by member_triggers), their identities
//     (identity.go) and the member codecs (fleet_member_values.go);
//   - the prime_sandbox and prime_sandboxes data sources (data_source.go),
//     the list resources `terraform query` uses (list_resource.go,
//     fleet_list_resource.go) and the prime_sandbox_sweep action
//     (sweep_action.go).
//
// It may import the standard library, the terraform-plugin-* modules,
// internal/egress, internal/fleet, internal/tfkit, internal/journal and
// internal/prime, nothing else of this module: internal/provider imports
// it, never the reverse, and it never imports internal/command (what both
// need lives below them, in fleet, tfkit or prime).
package sandbox
