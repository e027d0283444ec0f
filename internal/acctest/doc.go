// Package acctest is the one harness of the acceptance tests, which live
// beside their domain in external test packages (sandbox_test, egress_test,
// ...; internal/provider's provider_test holds the provider's own, and the
// examples package the examples' and the eval-fleet module's). Only tests
// import it.
//
// It holds:
//
//   - Main, every acceptance test binary's TestMain: no PRIME_* setting,
//     ~/.prime/config.json or CLI configuration of the developer leaks in
//     (main.go);
//   - ProviderFactories, the provider served in the test process with a
//     journal directory of its own per test (factories.go);
//   - Mock, the one way to start the in-process prime-mock: quick timers
//     (FastOptions), an optional Hook in front of it, and a recorder of the
//     requests the provider sent (mock.go, mock_checks.go);
//   - Work, the one way to drive a real Terraform or OpenTofu CLI (kills,
//     interrupts, query, modules, state surgery, examples) through
//     internal/tfcli, with the provider built from this tree through
//     dev_overrides (cli.go, dev_provider.go);
//   - the CLI version gate of tests that need Terraform 1.12+ or 1.14+
//     (version_gate.go);
//   - HCL fixture builders for every resource type the tests configure
//     (fixtures.go).
//
// It sits above the provider (it serves it) and below nothing: no domain
// package imports it but from its tests.
//
// It may import: the standard library, github.com/hashicorp/go-version, github.com/hashicorp/terraform-plugin-*/..., internal/provider, internal/acctest/mocktest, internal/prime, internal/primemock, internal/tfcli.
package acctest
