// Package tfcli is the one driver of the Terraform CLI for everything that
// runs it outside the provider: the acceptance tests that need a real
// Terraform (kills, interrupts, query, modules, state surgery), the soak
// harness and prime-bench, and the demo. A Workspace is a working directory
// plus the CLI and environment to run it with; Run and Start give a
// Result (output, exit code, CPU time) or a Running command that can be
// signalled or killed with every provider process it started.
//
// It owns: running terraform in a directory, its exit-code and kill
// handling, the dev_overrides CLI configuration, and reading the state
// back through `terraform show -json`.
//
// It may import: the standard library.
//
// It knows nothing of the provider, the mock or the Prime API.
package tfcli
