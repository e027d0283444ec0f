// Package network holds the private network domain: prime_sandbox_network
// (a network and its rules), prime_sandbox_network_member (one sandbox, or
// every member of a fleet, on a network with tags) and the
// prime_sandbox_network data source.
//
// Members of one network reach each other at <sandbox-id>.sandbox.internal
// over TCP, where a directed, tag-based allow rule lets them; only running
// VM sandboxes of the network's owner can join. The rule grammar and its
// checks (selectors, tags, ports) live in internal/prime, so the plan-time
// check here and the client's check before a request are one rule.
//
// It owns:
//
//   - the rule and member values shared by the resource and the data source
//     (model.go), and the plan-time check of a rule list, naming the
//     attribute, the entry and the reason (rules.go);
//   - prime_sandbox_network (network_resource.go, its identity in
//     network_identity.go) and its data source (network_data_source.go);
//   - prime_sandbox_network_member (member_resource.go, its member map in
//     members.go).
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/memberkit, internal/tfkit, internal/prime.
//
// internal/provider registers it, never the reverse. It reads the provider's
// configured data only through tfkit.ClientFrom.
package network
