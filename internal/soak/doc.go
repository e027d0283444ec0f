// Package soak drives fleets of prime_sandbox + prime_egress_policy (or one
// prime_sandbox_fleet + prime_fleet_egress_policy) through the real
// Terraform CLI against the Prime mock, and checks what the mock
// saw against what Terraform recorded. It is shared by:
//
//   - TestShortSoak (soak_test.go, TF_ACC=1, part of `make test`): N=20
//     under injected 503s/429s and jittered latency, against an in-process
//     mock; Terraform runs the provider as a plugin process through
//     dev_overrides (the test binary serves it, see TestMain);
//   - cmd/prime-bench (at the repository root): `make soak` (N=100 fault run, never-apply run,
//     SIGKILL and SIGINT runs) and `make bench` (the fleet path —
//     SandboxFleet —, the per-instance path — Fleet — and an SDK stand-in,
//     then task files in / results out and background jobs on the fleet
//     path — TaskFleet, with a task archive from WriteTaskDir —, each
//     beside a baseline; figures → BENCHMARKS.md), against a prime-mock
//     process and the ./bin provider.
//
// Nothing here runs `terraform init`: the CLI configuration written into
// each workspace uses dev_overrides, which plan/apply/destroy honour without
// a registry. Terraform itself is run through internal/tfcli.
//
// It may import: the standard library, internal/tfcli, internal/prime, internal/primemock.
//
// The provider reaches it only as a binary (the test binary serves the
// provider; see TestMain), so it never imports internal/provider or a domain
// package, and only its tests, prime-bench and the demo import it.
package soak
