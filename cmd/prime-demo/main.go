// Command prime-demo runs examples/demo, a small evaluation, end to end against
// prime-mock: start the mock on a free loopback port, apply the
// configuration through a dev_overrides CLI configuration (task files in,
// setup with the network open, the locks, the agent as a background job,
// each reward read back and the results downloaded), check that a second
// plan is empty, print the reward table and the platform's event timeline
// per sandbox, check that timeline (the task in before the setup, the setup
// with the network open, then the policy written and enforced, then the
// agent, once; its result read and downloaded after it ended; a
// born-restricted sandbox's lists enforced before anything but the gateway
// probe) and every result (its own task, what it reached, its reward, the
// copy on disk). Then day two: apply again with one row's allowlist
// widened, and check that only that row's agent ran again, under its new
// lock, with no setup anywhere, and that the reward table follows the new
// policy. Next to the per-member rows, setup once (examples/demo/
// setup_once.tf, once.go): one template set up and checkpointed, members
// restored from it; the check is one setup execution for all of them and
// every member restricted before its agent. Finally destroy everything
// (no sandbox and no checkpoint left) and stop the mock. It fails when a
// check does. `make demo` runs it.
//
// It may import: the standard library, internal/soak, internal/tfcli, internal/primemock, internal/prime.
//
// It uses internal/soak for the mock process and the isolated workspace;
// it never imports internal/provider or a domain package: it runs the
// provider as a binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
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
	if err := copyConfig(*configDir, work); err != nil {
		return err
	}
	// Colour only on a terminal: piped output (CI, logs) stays readable.
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		ws.Color = true
	}
	// The steps the demo shows are printed as they run; its reads of the
	// outputs (readOutputs) are not.
	shown := *ws
	shown.Stream = os.Stdout
	terraform := func(args ...string) error { return shown.Run(ctx, args...).Check() }

	banner("terraform apply: sandboxes -> task files -> setup (network open) -> egress policies -> agent jobs -> results")
	start := time.Now()
	if err := terraform("apply", "-auto-approve", "-input=false", "-compact-warnings"); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	fmt.Printf("\napply took %s\n", time.Since(start).Round(10*time.Millisecond))

	// The timeline and its checks are the apply's: the second plan reads
	// the results again, which is no step of the protocol.
	events, err := mock.Events(ctx, 0)
	if err != nil {
		return err
	}

	// Everything below is reported, and the fleet destroyed, even when a
	// check fails.
	var verdict error
	banner("terraform plan: a second plan must be empty")
	if err := terraform("plan", "-detailed-exitcode", "-input=false", "-compact-warnings"); err != nil {
		verdict = errors.Join(verdict, fmt.Errorf("the second plan is not empty or failed: %w", err))
	}

	out, err := readOutputs(ctx, ws)
	if err != nil {
		return err
	}
	banner("Rewards: what each agent could fetch under its egress configuration (prime_fleet_file data source)")
	printRewards(out)

	banner("What the platform saw during the apply, per sandbox (prime-mock /_mock/events)")
	sandboxes := out.sandboxes()
	printTimeline(events, sandboxes)
	// The demo fails, rather than only printing, when the platform saw the
	// protocol broken or an agent's result is not what its scenario allows.
	banner("Checks")
	verdict = errors.Join(verdict, checkTimeline(events, sandboxes), checkResults(out, ws.Dir))

	// Setup once, next to the per-member rows: one setup, every member
	// restricted before its agent.
	once, err := readOnceOutputs(ctx, ws)
	if err != nil {
		return err
	}
	banner("Setup once: the template and its restored members (prime-mock /_mock/events)")
	printTimeline(events, once.sandboxes())
	banner("Checks of setup once")
	verdict = errors.Join(verdict, checkSetupOnce(events, once, sandboxes))

	// Day two: one row's allowlist widens. Its lock is written again in
	// place, which gives the policy a new id, so that row's agent alone runs
	// again, under the new lock, and its reward follows; no setup runs.
	verdict = errors.Join(verdict, secondApply(ctx, terraform, mock, ws, sandboxes))

	banner("terraform destroy")
	if err := terraform("destroy", "-auto-approve", "-input=false", "-compact-warnings", "-var", widenedAllow); err != nil {
		return errors.Join(verdict, fmt.Errorf("destroy: %w", err))
	}
	stats, err := mock.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\n%d sandboxes created, %d left running.\n", stats.SandboxesCreated, stats.LiveSandboxes)
	if stats.LiveSandboxes != 0 {
		verdict = errors.Join(verdict, errors.New("sandboxes leaked"))
	}
	if err := checkNoCheckpoints(ctx, mock.URL); err != nil {
		verdict = errors.Join(verdict, err)
	}
	if verdict != nil {
		return verdict
	}
	banner("Demo complete")
	return nil
}

func banner(s string) { fmt.Printf("\n=== %s ===\n\n", s) }

// The second apply's change: the partial-allow row's allowlist widens to
// both pages (examples/demo's partial_allow variable).
const (
	widenedRow   = "partial-allow"
	widenedAllow = `partial_allow=["example.com","google.com"]`
)

// secondApply applies again with widenedAllow, checks that the plan after
// it is empty, prints the new reward table and what the platform saw, and
// checks both: only widenedRow's agent ran again, under its new lock,
// nothing else ran, and every result still matches its scenario (the
// widened row's reward is now 1).
func secondApply(ctx context.Context, terraform func(...string) error, mock *soak.Mock, ws *tfcli.Workspace, sandboxes []sandbox) error {
	before, err := mock.Events(ctx, 0)
	if err != nil {
		return err
	}
	last := int64(0)
	if len(before) > 0 {
		last = before[len(before)-1].Seq
	}
	banner("terraform apply again: " + widenedRow + "'s allowlist widened to example.com and google.com")
	if err := terraform("apply", "-auto-approve", "-input=false", "-compact-warnings", "-var", widenedAllow); err != nil {
		return fmt.Errorf("second apply: %w", err)
	}
	events, err := mock.Events(ctx, 0)
	if err != nil {
		return err
	}
	var verdict error
	banner("terraform plan: the plan after the second apply must be empty too")
	if err := terraform("plan", "-detailed-exitcode", "-input=false", "-compact-warnings", "-var", widenedAllow); err != nil {
		verdict = fmt.Errorf("the plan after the second apply is not empty or failed: %w", err)
	}
	out, err := readOutputs(ctx, ws)
	if err != nil {
		return errors.Join(verdict, err)
	}
	banner("Rewards after the second apply")
	printRewards(out)
	banner("What the platform saw during the second apply")
	printTimelineAfter(events, sandboxes, last)
	banner("Checks of the second apply")
	return errors.Join(verdict, checkSecondApply(events, sandboxes, last), checkResults(out, ws.Dir))
}

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

// copyConfig copies the configuration directory (its .tf files and what
// they read, such as the task directory) into the workspace, leaving out
// Terraform's own files and the results of earlier runs.
func copyConfig(from, to string) error {
	if files, err := filepath.Glob(filepath.Join(from, "*.tf")); err != nil || len(files) == 0 {
		return fmt.Errorf("no .tf files in %s", from)
	}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case rel == ".":
			return nil
		case d.IsDir() && (name == ".terraform" || rel == "results"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(to, rel), 0o750)
		case !d.Type().IsRegular() || strings.Contains(name, ".tfstate") || name == ".terraform.lock.hcl":
			return nil
		}
		data, err := os.ReadFile(p) //nolint:gosec // G304: the demo's own configuration
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o600) //nolint:gosec // G703: into our temp dir
	})
}
