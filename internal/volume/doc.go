// Package volume holds the volume domain: prime_volume (a named disk of up
// to 100 GiB: grown in place, never shrunk, public or private), the
// prime_volume data source, and the attachment list a sandbox declares at
// create (its schema, its plan-time check and its conversion), which the
// sandbox resources call.
//
// A sandbox created with a volume gets a private copy of the volume's
// latest published checkpoint; its writes are its own until it publishes
// them. The volume rules (name pattern, size bounds, the mount rules) live
// in internal/prime, so the plan-time checks here and the client's checks
// before a request are one rule.
//
// It owns:
//
//   - the model and conversions shared by the resource and the data
//     source, and the size check (model.go);
//   - prime_volume (volume_resource.go, its identity in volume_identity.go)
//     and its data source (volume_data_source.go);
//   - the attachment list (attachments.go): AttachmentsAttribute,
//     ValidateAttachments, MountsOf.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit, internal/prime.
//
// The sandbox domain (for attachments) and internal/provider import it,
// never the reverse. It reads the provider's configured data only through
// tfkit.ClientFrom.
package volume
