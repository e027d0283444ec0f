// Package egress holds the egress policy domain: the allow/block/routes
// rules that the sandbox `egress` block, prime_egress_policy and
// prime_fleet_egress_policy share (one composition, one write-and-wait,
// one restore), and the two resources and the data source built on them.
//
// It owns:
//
//   - the entry type and its canonical form in state (entry_type.go), the
//     lists' schema, validation at plan time, composition and the
//     effective lists (lists.go), and Describe, a policy in messages;
//   - writing a policy and waiting fail-closed for the data plane, reading
//     it back (write.go), locking a sandbox with its baseline captured
//     (lock.go), restoring on destroy with the reuse guard and the
//     teardown restores a setup step may wait for (restore.go), and the
//     notes of creates that failed closed (baselines.go, kept beside the
//     create journal);
//   - the sandbox egress block's schema and rules, which prime_sandbox and
//     prime_sandbox_fleet call (block.go);
//   - prime_egress_policy (policy_resource.go, its identity in
//     policy_identity.go), prime_fleet_egress_policy
//     (fleet_policy_resource.go, its members in fleet_policy_members.go) and
//     the prime_egress_policy data source (policy_data_source.go).
//
// The policy semantics themselves (the entry grammar, composing allow,
// block and routes) live in internal/prime.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/memberkit, internal/tfkit, internal/journal, internal/prime.
//
// The sandbox and command domains and internal/provider import it, never the
// reverse. It reads the provider's configured data only through
// tfkit.ClientFrom and BaselinesFrom, so it never needs internal/provider's
// types.
package egress
