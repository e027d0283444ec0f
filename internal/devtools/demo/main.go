// Command demo runs examples/demo end to end against prime-mock: start the
// mock on a free loopback port, apply the fleet through a dev_overrides CLI
// configuration, print the outputs and the platform's event timeline per
// sandbox, destroy everything and stop the mock. `make demo` runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

func main() {
	// Ctrl-C stops the demo's children (terraform, prime-mock) with it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	tf := flag.String("terraform", "", "Terraform or OpenTofu CLI (default: terraform, then tofu, on PATH)")
	providerDir := flag.String("provider-dir", "bin", "directory holding terraform-provider-prime")
	mockBin := flag.String("mock", "bin/prime-mock", "prime-mock binary")
	configDir := flag.String("config", "examples/demo", "Terraform configuration to apply")
	boot := flag.String("boot-delay", "1s", "mock sandbox boot time")
	apply := flag.String("apply-delay", "500ms", "mock egress policy apply time")
	flag.Parse()

	cli, err := findCLI(*tf)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "prime-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	banner("Starting prime-mock (an in-memory Prime API)")
	mock, err := soak.StartMockProcess(*mockBin, "-addr", "127.0.0.1:0", "-boot-delay", *boot, "-apply-delay", *apply)
	if err != nil {
		return fmt.Errorf("%w (run make build first)", err)
	}
	defer mock.Close()
	fmt.Println("prime-mock listening on", mock.URL)

	// The same dev_overrides workspace the benchmark and soak use; the
	// provider finds the mock through the environment, as a user's would.
	ws, err := soak.NewWorkspace(work, cli, *providerDir, "PRIME_API_BASE_URL="+mock.URL, "PRIME_API_KEY=demo-key")
	if err != nil {
		return err
	}
	if err := copyTF(*configDir, work); err != nil {
		return err
	}
	// Colour only on a terminal: piped output (CI, logs) stays readable.
	var color []string
	if fi, err := os.Stdout.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		color = []string{"-no-color"}
	}
	terraform := func(args ...string) error {
		if len(args) > 0 && args[0] != "output" || len(args) == 1 {
			args = append(args, color...)
		}
		cmd := exec.CommandContext(ctx, cli, args...) //nolint:gosec // G204: the CLI the user chose
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ws.Dir, ws.Env, os.Stdout, os.Stderr
		return cmd.Run()
	}

	banner("terraform apply: sandboxes -> setup -> egress policies -> agent probes")
	start := time.Now()
	if err := terraform("apply", "-auto-approve", "-input=false", "-compact-warnings"); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	fmt.Printf("\napply took %s\n", time.Since(start).Round(10*time.Millisecond))

	banner("Outputs")
	if err := terraform("output"); err != nil {
		return err
	}
	names, err := sandboxNames(ctx, cli, ws)
	if err != nil {
		return err
	}
	banner("What the platform saw, per sandbox (prime-mock /_mock/events)")
	if err := printTimeline(ctx, mock, names); err != nil {
		return err
	}

	banner("terraform destroy")
	if err := terraform("destroy", "-auto-approve", "-input=false", "-compact-warnings"); err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	stats, err := mock.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d sandboxes created, %d left running.\n", stats.SandboxesCreated, stats.LiveSandboxes)
	if stats.LiveSandboxes != 0 {
		return errors.New("sandboxes leaked")
	}
	banner("Demo complete")
	return nil
}

func banner(s string) { fmt.Printf("\n=== %s ===\n\n", s) }

// findCLI picks the Terraform CLI: the flag, else terraform or tofu on PATH,
// else the OpenTofu that `make bin/tofu` builds.
func findCLI(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("bin/tofu"); err == nil {
		return filepath.Abs("bin/tofu")
	}
	return "", errors.New("no terraform or tofu on PATH (make bin/tofu builds OpenTofu)")
}

func copyTF(from, to string) error {
	files, err := filepath.Glob(filepath.Join(from, "*.tf"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no .tf files in %s", from)
	}
	for _, f := range files {
		data, err := os.ReadFile(f) //nolint:gosec // G304: the demo's own .tf files
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), data, 0o600); err != nil { //nolint:gosec // G703: into our temp dir
			return err
		}
	}
	return nil
}

// sandboxNames maps sandbox IDs to the demo's scenario keys.
func sandboxNames(ctx context.Context, cli string, ws *soak.Workspace) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, cli, "output", "-json", "sandbox_ids")
	cmd.Dir, cmd.Env = ws.Dir, ws.Env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading sandbox_ids: %w", err)
	}
	byKey := map[string]string{}
	if err := json.Unmarshal(out, &byKey); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for k, id := range byKey {
		names[id] = k
	}
	return names, nil
}

func printTimeline(ctx context.Context, mock *soak.Mock, names map[string]string) error {
	events, err := mock.Events(ctx, 0)
	if err != nil {
		return err
	}
	bySandbox := map[string][]primemock.Event{}
	for _, e := range events {
		bySandbox[e.SandboxID] = append(bySandbox[e.SandboxID], e)
	}
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return names[ids[i]] < names[ids[j]] })
	for _, id := range ids {
		evs := bySandbox[id]
		if len(evs) == 0 {
			continue
		}
		fmt.Printf("%s (%s)\n", names[id], id)
		t0 := evs[0].Time
		for _, e := range evs {
			// The PUT's own answer reports the open generation 0 as applied;
			// that is not news for the timeline.
			if e.Type == "policy_observed" && e.Generation == 0 {
				continue
			}
			fmt.Printf("  +%6.2fs  %s\n", e.Time.Sub(t0).Seconds(), describe(e))
		}
		fmt.Println()
	}
	return nil
}

func describe(e primemock.Event) string {
	switch e.Type {
	case "policy_put":
		return fmt.Sprintf("egress policy written   generation %d  %s", e.Generation, compact(e.Policy))
	case "policy_applied":
		return fmt.Sprintf("egress policy enforced  generation %d", e.Generation)
	case "policy_observed":
		return fmt.Sprintf("provider saw it enforced (generation %d)", e.Generation)
	case "command_executed":
		return fmt.Sprintf("command  %-34q exit %d  (enforced policy: generation %d)", e.Command, e.ExitCode, e.AppliedGeneration)
	default:
		s := strings.ReplaceAll(e.Type, "_", " ")
		if e.Status != "" {
			s += "  " + e.Status
		}
		return s
	}
}

func compact(p *prime.EgressPolicy) string {
	b, _ := json.Marshal(p)
	return string(b)
}
