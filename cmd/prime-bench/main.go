// Command prime-bench measures and soaks the provider against prime-mock
// through the real Terraform CLI (make bench, make soak):
//
//	prime-bench bench [flags]   fleet path, per-instance path and SDK stand-in → BENCHMARKS.md
//	prime-bench soak  [flags]   fault-injected, never-apply, SIGKILL and SIGINT runs
//
// Both run prime-mock and the provider as separate processes (the provider
// through a dev_overrides CLI configuration, without terraform init). Run
// with -h after a subcommand for its flags.
//
// It may import: the standard library, connectrpc.com/connect, google.golang.org/protobuf/..., internal/soak, internal/tfcli, internal/primemock, internal/prime, internal/commandsession/....
//
// Its SDK stand-in speaks the gateway protocol (internal/commandsession);
// it never imports internal/provider or a domain package: it runs the
// provider as a binary.
package main

import (
	"fmt"
	"os"
)

func main() {
	// Terraform starts the provider through a symlink to this binary when the
	// benchmark measures the provider's memory (see wrap.go).
	if target := os.Getenv(wrapTargetEnv); target != "" {
		os.Exit(wrapProvider(target, os.Getenv(wrapLogEnv)))
	}
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "bench":
		err = benchMain(os.Args[2:])
	case "soak":
		err = soakMain(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "prime-bench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  prime-bench bench [flags]   fleet path, per-instance path and SDK stand-in (make bench)
  prime-bench soak  [flags]   fault-injection soak (make soak)
`)
}
