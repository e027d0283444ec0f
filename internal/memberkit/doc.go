// Package memberkit is the kit every resource that works on a fleet's
// members shares, so that a per-member rule is written once, not once per
// fleet resource. It holds helpers for members, not fleets: the fleets
// themselves are resources of their domains (prime_sandbox_fleet in
// internal/sandbox, prime_fleet_command in internal/command,
// prime_fleet_egress_policy in internal/egress, prime_fleet_file and
// prime_fleet_artifact in internal/files, network members in
// internal/network).
//
// It holds:
//
//   - member iteration (members.go): ForEachMember, bounded concurrency in
//     sorted key order; Problems, per-member failures collected from that
//     concurrent work; AddFailure, the one error naming every failed
//     member; DefaultConcurrency, max_concurrency's default;
//   - the per-member rules (rules.go): the one stray-key check (StrayKeys:
//     member_env, member_triggers and members entries that are not member
//     keys), the one trigger lookup (TriggerOf: an unknown member_triggers
//     map reads as unknown, never as "no trigger"), and the one builder of
//     the `sandbox_ids` attribute;
//   - reading member maps from state without reflection (codecs.go):
//     MemberAttrs, MembersOfMap, ObjectListsOfMap. Each resource's own
//     member type (a fleet member, a policy member, a command result)
//     stays with its resource.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-framework/..., internal/tfkit.
//
// The domain packages that have fleet forms import it, never the reverse.
package memberkit
