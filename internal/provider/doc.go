// Package provider is the Terraform side of the Prime sandboxes provider:
// the provider type, its configuration (provider.go, the base URL rule in
// base_url.go), the wiring of every domain's resources, data sources, list
// resources, ephemeral resources and actions, and the protocol server
// wrapper that sends read state as JSON (read_state_json.go), hands states
// already at their schema's version back without a round trip through the
// framework (upgrade_state_json.go) and lets actions take write-only values
// (action_write_only.go). The domains live in packages of
// their own: internal/sandbox, internal/command, internal/files,
// internal/egress, internal/checkpoint, internal/network, internal/volume,
// internal/image and internal/ssh, on the kits internal/memberkit and
// internal/tfkit and on internal/journal. Everything about the Prime API
// itself (HTTP, retries, the egress grammar) lives in internal/prime.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/sandbox, internal/command, internal/files, internal/egress, internal/checkpoint, internal/network, internal/volume, internal/image, internal/ssh, internal/tfkit, internal/journal, internal/prime.
//
// Only main.go imports it. Its configured data reaches the domain packages
// through capabilities (PrimeClient, EgressBaselines, CreateJournal,
// JobJournal, CheckpointJournal), not through its types.
package provider
