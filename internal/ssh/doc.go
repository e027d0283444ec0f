// Package ssh holds the SSH access domain: ephemeral SSH sessions to a
// running VM sandbox, for debugging a member by hand.
//
// It owns prime_sandbox_ssh_session (session.go), an ephemeral resource
// (Terraform 1.10+): it opens a session with a public key when Terraform
// needs it and closes it when Terraform is done, so nothing of it ever
// reaches a plan or state.
//
// The session calls themselves (open, close, the public key check) live in
// internal/prime.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/tfkit, internal/prime.
//
// internal/provider imports it, never the reverse. It reads the configured
// client only through tfkit.ClientFrom.
package ssh
