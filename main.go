// Command terraform-provider-prime serves the Prime Intellect sandboxes
// provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/primeintellect/terraform-provider-prime/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers such as delve")
	flag.Parse()
	quietLogsUnlessAsked()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
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
