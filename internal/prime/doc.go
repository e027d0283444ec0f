// Package prime is the Go client of the Prime Intellect sandboxes platform,
// and the one home of the platform's rules: everything about the API
// itself, nothing about Terraform.
//
// It owns:
//
//   - configuration and credentials (config.go: explicit values, the
//     environment, ~/.prime/config.json) and the REST client (client.go):
//     requests, retries with one backoff (backoff.go), rate limits
//     (throttle.go), error types (errors.go);
//   - sandboxes (sandboxes.go, sandbox_rules.go: the create rules the
//     provider checks at plan time), readiness and status polling
//     (ready.go, poller.go, batch_poller.go), pause, restore, checkpoints,
//     images, networks, volumes, SSH and secrets;
//   - the egress grammar and policies (egress.go, egress_chars.go,
//     egress_policy.go) and the wait for the data plane (egress_wait.go);
//   - the gateway: tokens and calls (gateway.go, gateway_call.go), commands
//     over the command-session protocol (exec_connect.go, exec_output.go,
//     scrub_stream.go), background jobs (jobs.go, job_poller.go), and files
//     in and out (files.go, transfer.go, archive*.go, result_paths.go).
//
// It may import: the standard library, github.com/hashicorp/go-cleanhttp, golang.org/x/time/rate, golang.org/x/net/idna, connectrpc.com/connect, google.golang.org/protobuf/..., internal/commandsession/....
//
// Those are its HTTP, rate-limit, IDNA and Connect/protobuf dependencies and
// the generated command-session client; no Terraform package: every other
// package may import it, it imports none of them.
package prime
