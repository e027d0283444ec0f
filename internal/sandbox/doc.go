// Package sandbox holds the sandbox domain: prime_sandbox, prime_sandbox_fleet
// and what reads, finds and removes sandboxes.
//
// It owns:
//
//   - the sandbox's attributes and their conversions from the API, shared by
//     the resource and the data sources (model.go): sandboxSpec (what the
//     platform reports) and sandboxInputs (what only the configuration
//     knows), which prime_sandbox and a fleet's template both embed, and
//     the create request and plan rules that take the plain
//     sandboxTemplate, one implementation for both;
//   - creating a sandbox under the create journal and waiting for it
//     (create.go, lifecycle.go), the retired attributes (retired.go), the
//     state upgrade from the container era (state_upgrade.go) and whole
//     vCPU counts (whole_number_type.go);
//   - prime_sandbox: schema (resource.go), plan rules (resource_plan.go),
//     CRUD and import (resource_crud.go);
//   - prime_sandbox_fleet: schema (fleet_resource.go), model
//     (fleet_model.go, member codecs in fleet_member_values.go), plan
//     (fleet_plan.go), creating and deleting members and the failure
//     wording (fleet_apply.go), CRUD (fleet_crud.go), per-member egress
//     (fleet_egress.go), import (fleet_import.go), redo by member_triggers
//     (fleet_redo.go); both resources' identities (identity.go);
//   - the prime_sandbox and prime_sandboxes data sources (data_source.go),
//     the list resources `terraform query` uses (list_resource.go,
//     fleet_list_resource.go) and the prime_sandbox_sweep action
//     (sweep_action.go).
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/egress, internal/volume, internal/memberkit, internal/tfkit, internal/journal, internal/prime.
//
// It imports internal/egress for a sandbox's egress block and
// internal/volume for the attachments a sandbox declares at create.
// internal/provider imports it, never the reverse, and it never imports
// internal/command (what both need lives below them, in memberkit, tfkit or
// prime).
package sandbox
