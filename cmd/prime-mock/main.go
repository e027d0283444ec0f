// Command prime-mock serves the in-memory Prime Sandboxes API
// (internal/primemock) for demos, benchmarks and testing Terraform modules
// without the real platform:
//
//	prime-mock -addr 127.0.0.1:0 -boot-delay 2s -apply-delay 1s
//
// The first line on stdout is "listening on http://HOST:PORT"; point the
// provider's base_url (or PRIME_API_BASE_URL) at that URL. SIGINT or SIGTERM
// shut it down cleanly (exit status 0). Knobs can also be changed while it
// runs: POST /_mock/config with a JSON object such as
// {"never_apply": true, "fail_rate": 0.1, "apply_delay": "2s",
// "gateway_outage": "10s"}; GET /_mock/config shows the current values. It serves HTTP/1.1 and, without
// TLS, HTTP/2 with prior knowledge. See the primemock package documentation
// for the endpoints, magic images and the shell language; -h prints the
// flags and the shell's supported subset.
//
// It may import: the standard library, internal/primemock, internal/primemock/shell.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

func main() {
	os.Exit(mainStatus())
}

// mainStatus runs the mock and returns the exit status, so that deferred
// calls run before os.Exit.
func mainStatus() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "prime-mock:", err)
		return 2
	}
	return 0
}

// shutdownGrace bounds how long in-flight requests (a long exec, say) may
// finish after a signal.
const shutdownGrace = 5 * time.Second

// run parses flags, serves until ctx ends, then shuts down.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prime-mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage of prime-mock (an in-memory Prime Sandboxes API and gateway):\n")
		fs.PrintDefaults()
		_, _ = fmt.Fprintf(fs.Output(), "\n%s", shell.Subset)
	}
	var o primemock.Options
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	fs.DurationVar(&o.BootDelay, "boot-delay", primemock.DefaultBootDelay, "PENDING + PROVISIONING time of a sandbox")
	fs.DurationVar(&o.ApplyDelay, "apply-delay", primemock.DefaultApplyDelay, "time for the data plane to apply an egress policy")
	fs.DurationVar(&o.ImageBuildDelay, "image-build-delay", primemock.DefaultImageBuildDelay, "PENDING time with pendingImageBuildId for images containing \"prime-mock/build\"")
	fs.BoolVar(&o.NeverApply, "never-apply", false, "accept egress policies but never apply them (the upstream platform gap)")
	fs.DurationVar(&o.Latency, "latency", 0, "added to every API and gateway request")
	fs.DurationVar(&o.LatencyJitter, "latency-jitter", 0, "uniform random extra latency in [0, jitter)")
	fs.Float64Var(&o.FailRate, "fail-rate", 0, "probability of an injected 503 per API request (half of those on POST/PUT/DELETE after the action)")
	fs.Float64Var(&o.ThrottleRate, "throttle-rate", 0, "probability of an injected 429 per API request")
	fs.DurationVar(&o.RetryAfter, "retry-after", primemock.DefaultRetryAfter, "Retry-After of injected 429s (whole seconds, at least 1s)")
	fs.StringVar(&o.APIKey, "api-key", "", "the only API key accepted (default: any non-empty bearer token)")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the random source (0: time-based)")
	fs.DurationVar(&o.TokenTTL, "token-ttl", primemock.DefaultTokenTTL, "lifetime of gateway tokens")
	fs.DurationVar(&o.GatewayLag, "gateway-lag", primemock.DefaultGatewayLag,
		"how long after RUNNING the gateway still answers as if the sandbox did not exist (0: no lag)")
	fs.DurationVar(&o.KeepaliveInterval, "keepalive-interval", primemock.DefaultKeepaliveInterval,
		"period of keepalive events on a command-session (Connect) stream")
	fs.Float64Var(&o.SleepScale, "sleep-scale", 1, "factor on the wall time of every shell sleep (0.001: \"sleep 1800\" takes 1.8s)")
	fs.Int64Var(&o.ReadFileLimit, "read-file-limit", primemock.DefaultReadFileLimit, "bytes read-file answers before 413 (a VM's file, a container's window)")
	fs.Float64Var(&o.UploadFailRate, "upload-fail-rate", 0, "probability of an injected 503 per gateway upload (half of them after the file was written)")
	fs.Float64Var(&o.DownloadFailRate, "download-fail-rate", 0, "probability of an injected 503 per gateway download or read-file")
	outage := fs.Duration("gateway-outage", 0, "fail every gateway request and the job batch for this long from the start (REST 503, Connect unavailable)")
	fs.BoolVar(&o.JobBatchUnsupported, "job-batch-unsupported", false, "answer the background-job batch endpoint with 404, as a platform without it")
	fs.StringVar(&o.EgressPutAnswer, "egress-put-answer", primemock.EgressPutStatus,
		"body of an egress PUT's 202: status (the policy status), minimal ({\"generation\": N}) or empty")
	fs.BoolVar(&o.RateLimits, "rate-limits", false,
		"enforce the platform's published per-sandbox rate limits (egress PUT 120/60s, egress GET 300, ...) with 429s")
	fs.Float64Var(&o.RateLimitScale, "rate-limit-scale", 1, "factor on every rate limit (with -rate-limits)")

	checkResources := resourceFlags(fs, &o.ResourceOptions)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkResources(); err != nil {
		return err
	}
	switch {
	case *outage < 0:
		return fmt.Errorf("-gateway-outage must not be negative, got %s", *outage)
	case *outage > 0:
		o.GatewayOutageUntil = time.Now().Add(*outage)
	}
	if !(o.SleepScale > 0 && o.SleepScale <= 1e6) {
		return fmt.Errorf("-sleep-scale must be above 0 (at most 1e6), got %g", o.SleepScale)
	}
	if o.ReadFileLimit <= 0 {
		return fmt.Errorf("-read-file-limit must be a positive number of bytes, got %d", o.ReadFileLimit)
	}
	switch {
	case o.GatewayLag < 0:
		return fmt.Errorf("-gateway-lag must not be negative, got %s", o.GatewayLag)
	case o.GatewayLag == 0:
		o.GatewayLag = -1 // Options reads 0 as "the default"; the flag means none
	}
	if o.KeepaliveInterval <= 0 {
		return fmt.Errorf("-keepalive-interval must be positive, got %s", o.KeepaliveInterval)
	}
	switch o.EgressPutAnswer {
	case primemock.EgressPutStatus, primemock.EgressPutMinimal, primemock.EgressPutEmpty:
	default:
		return fmt.Errorf("-egress-put-answer must be status, minimal or empty, got %q", o.EgressPutAnswer)
	}
	if !(o.RateLimitScale > 0 && o.RateLimitScale <= 1e6) {
		return fmt.Errorf("-rate-limit-scale must be above 0, got %g", o.RateLimitScale)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for name, r := range map[string]float64{
		"fail-rate": o.FailRate, "throttle-rate": o.ThrottleRate,
		"upload-fail-rate": o.UploadFailRate, "download-fail-rate": o.DownloadFailRate,
	} {
		if r < 0 || r > 1 {
			return fmt.Errorf("-%s must be between 0 and 1, got %g", name, r)
		}
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *addr)
	if err != nil {
		return err
	}
	mock := primemock.New(o)
	defer mock.Close()
	srv := &http.Server{Handler: mock, ReadHeaderTimeout: 10 * time.Second}
	// HTTP/1.1 and HTTP/2 without TLS (prior knowledge), so that Connect
	// clients that speak HTTP/2 reach the command-session service.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)

	// The first stdout line is the contract scripts wait for. Stdout is not
	// buffered by Go, but a wrapping writer might be.
	if _, err := fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("announcing the address: %w", err)
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	// Informational only: a failed write to stderr does not stop the mock.
	_, _ = fmt.Fprintf(stderr, "prime-mock: seed %d\n", mock.Options().Seed)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	// Stop the mock first: running commands end, so their streams close
	// instead of holding the shutdown for the whole grace period.
	mock.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running after the grace period are cut off; that
		// is still a requested, clean stop.
		_ = srv.Close()
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
