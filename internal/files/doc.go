// Package files holds the files domain: what goes into a sandbox and what
// comes out of it.
//
// It owns:
//
//   - the rules every upload shares (sources.go): which source an upload
//     has, its plan-time fingerprint, how its bytes are opened, and the
//     checks of remote paths and modes;
//   - prime_sandbox_file (file_resource.go) and prime_fleet_file
//     (fleet_file_resource.go, its per-member sources in
//     fleet_file_sources.go);
//   - downloads to local disk (artifact_download.go: never a partial file
//     under its final name, never a write outside the destination, a size
//     cap), which the command domain also calls, and prime_sandbox_artifact
//     and prime_fleet_artifact built on them;
//   - the prime_sandbox_file and prime_fleet_file data sources and their
//     shared read rule (data_source_read.go), and the result-paths advice
//     their docs end with (result_paths.go).
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/memberkit, internal/tfkit, internal/prime.
//
// The command domain and internal/provider import it, never the reverse.
package files
