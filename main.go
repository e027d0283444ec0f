// Command terraform-provider-prime serves the Prime Intellect sandboxes
// provider to Terraform and OpenTofu.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-go/..., internal/provider, internal/journal.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// version and commit are set at build time with
// -ldflags "-X main.version=… -X main.commit=…" (goreleaser sets both).
// Without commit, the revision Go stamped into the binary is reported.
var (
	version = "dev"
	commit  = ""
)

func main() {
	var debugMode, showVersion bool
	flag.BoolVar(&debugMode, "debug", false, "run the provider with support for debuggers such as delve")
	flag.BoolVar(&showVersion, "version", false, "print the version and commit and exit")
	flag.Parse()
	if showVersion {
		fmt.Println(versionString(commit, buildRevision()))
		return
	}
	if debugMode {
		log.Print(versionString(commit, buildRevision()))
	}
	quietLogsUnlessAsked()
	stopProfile := startCPUProfile()
	boundHeap(context.Background(), os.Getenv, debug.SetMemoryLimit, liveHeap)

	// providerserver.Serve, with the provider's own protocol 6 server: see
	// provider.NewProtocol6Server.
	var opts []tf6server.ServeOpt
	if debugMode {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	err := tf6server.Serve(provider.Address, provider.NewProtocol6Server(provider.New(version)()), opts...)
	stopProfile()
	if err != nil {
		log.Fatal(err.Error())
	}
	// Serve returns when Terraform shuts the provider down cleanly; it
	// writes its final state next, so what this process returned to it
	// needs its journal entries only for a short grace. A killed Terraform
	// never gets here.
	journal.ReleaseAll()
}

// versionString is "terraform-provider-prime VERSION (commit C)": C is
// built (main.commit, set at build time), else stamped (the VCS revision Go
// recorded), else omitted.
func versionString(built, stamped string) string {
	s := "terraform-provider-prime " + version
	if built == "" {
		built = stamped
	}
	if built != "" {
		s += " (commit " + built + ")"
	}
	return s
}

// buildRevision is the VCS revision in the binary's build information
// ("" when absent), suffixed with "-dirty" for a modified work tree.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	return rev
}

// quietLogsUnlessAsked turns the SDK's and the provider's loggers off when
// the user asked for no Terraform logging at all. Left unset, they inherit
// go-plugin's TRACE level and every gRPC call is serialised to JSON on
// stderr, which Terraform parses and throws away: measured at 37 % of the
// provider's CPU in a 200-sandbox apply (make bench). Any TF_LOG,
// TF_LOG_PROVIDER* or TF_LOG_SDK* setting leaves everything as configured.
func quietLogsUnlessAsked() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "TF_LOG" || strings.HasPrefix(name, "TF_LOG_PROVIDER") || strings.HasPrefix(name, "TF_LOG_SDK") {
			return
		}
	}
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		_ = os.Setenv(name, "OFF")
	}
}
