// Command demo runs examples/demo end to end against prime-mock: start the
// mock on a free loopback port, apply the fleet through a dev_overrides CLI
// configuration, print the outputs and the platform's event timeline per
// sandbox, check that timeline (setup with the network open, then the
// policy written and enforced, then the agent; a born-restricted sandbox's
// lists enforced before anything but the gateway probe) and what each agent
// reached, destroy everything and stop the mock. It fails when a check does.
// `make demo` runs it.
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

	banner("terraform apply: sandboxes -> setup (network open) -> egress policies -> agent probes, and one sandbox born restricted")
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
	events, err := mock.Events(ctx, 0)
	if err != nil {
		return err
	}
	printTimeline(events, names)
	// The demo fails, rather than only printing, when the platform saw the
	// protocol broken or an agent saw what its scenario does not allow.
	banner("Checks")
	verdict := checkTimeline(events, names)
	if err := checkReachability(ctx, cli, ws); err != nil {
		verdict = errors.Join(verdict, err)
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
		verdict = errors.Join(verdict, errors.New("sandboxes leaked"))
	}
	if verdict != nil {
		return verdict
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
	byKey := map[string]string{}
	if err := outputJSON(ctx, cli, ws, "sandbox_ids", &byKey); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for k, id := range byKey {
		names[id] = k
	}
	return names, nil
}

// gatewayProbe is the command the provider runs on every new sandbox to
// know that its gateway answers (prime.gatewayProbeCommand, the SDK's
// readiness check): neither setup nor agent.
const gatewayProbe = "echo 'sandbox ready'"

// timeline is one sandbox's events, and what they say about its egress.
type timeline struct {
	events []primemock.Event
	// born is the policy the sandbox was created with; nil when born open.
	born *prime.EgressPolicy
	// puts are the policies written after the create, by generation.
	puts map[int64]prime.EgressPolicy
}

func timelines(events []primemock.Event) map[string]*timeline {
	out := map[string]*timeline{}
	for _, e := range events {
		tl := out[e.SandboxID]
		if tl == nil {
			tl = &timeline{puts: map[int64]prime.EgressPolicy{}}
			out[e.SandboxID] = tl
		}
		tl.events = append(tl.events, e)
		switch {
		case e.Type == primemock.EventSandboxCreated:
			tl.born = e.Policy
		case e.Type == primemock.EventPolicyPut && e.Policy != nil:
			tl.puts[e.Generation] = *e.Policy
		}
	}
	return out
}

// openAt says whether generation gen lets everything out: generation 0 is
// the create-time lists (open without any); -1, nothing applied, is open on
// an untouched VM (the SDK's fixture) and blocked on one born restricted.
func (tl *timeline) openAt(gen int64) (open, known bool) {
	switch {
	case gen < 0:
		return tl.born == nil, true
	case gen == 0:
		return tl.born == nil || tl.born.IsOpen(), true
	}
	p, ok := tl.puts[gen]
	return ok && p.IsOpen(), ok
}

// sortedIDs are the demo's sandbox IDs, in the order of their scenario names.
func sortedIDs(names map[string]string) []string {
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return names[ids[i]] < names[ids[j]] })
	return ids
}

func printTimeline(events []primemock.Event, names map[string]string) {
	tls := timelines(events)
	for _, id := range sortedIDs(names) {
		tl := tls[id]
		if tl == nil {
			continue
		}
		fmt.Printf("%s (%s)\n", names[id], id)
		t0 := tl.events[0].Time
		for _, e := range tl.events {
			// An answer that reports the open generation 0 as applied is not
			// news for the timeline. Each command is one line, when it ends
			// (with the policy enforced when it started).
			if e.Type == primemock.EventPolicyObserved && e.Generation == 0 || e.Type == primemock.EventCommandStarted {
				continue
			}
			fmt.Printf("  +%6.2fs  %s\n", e.Time.Sub(t0).Seconds(), tl.describe(e))
		}
		fmt.Println()
	}
}

func (tl *timeline) describe(e primemock.Event) string {
	switch e.Type {
	case primemock.EventSandboxCreated:
		if e.Policy != nil {
			return "sandbox created  " + e.Status + "  born restricted: " + compact(e.Policy)
		}
		return "sandbox created  " + e.Status
	case primemock.EventPolicyPut:
		return fmt.Sprintf("egress policy written   generation %d  %s", e.Generation, compact(e.Policy))
	case primemock.EventPolicyApplied:
		what := "restricted"
		if open, _ := tl.openAt(e.Generation); open {
			what = "open"
		}
		if e.Generation == 0 && tl.born != nil {
			what = "the born lists"
		}
		return fmt.Sprintf("egress policy enforced  generation %d (%s)", e.Generation, what)
	case primemock.EventPolicyObserved:
		return fmt.Sprintf("provider saw it enforced (generation %d)", e.Generation)
	case primemock.EventCommandExecuted:
		network := "nothing enforced yet"
		if open, known := tl.openAt(e.AppliedGeneration); known && open && e.AppliedGeneration < 0 {
			network = "network open, untouched"
		} else if known && open {
			network = fmt.Sprintf("network open, generation %d", e.AppliedGeneration)
		} else if known && e.AppliedGeneration >= 0 {
			network = fmt.Sprintf("restricted, generation %d", e.AppliedGeneration)
		}
		role := ""
		if e.Command == gatewayProbe {
			role = "  (gateway probe)"
		}
		return fmt.Sprintf("command  %-34q exit %d  [%s]%s", e.Command, e.ExitCode, network, role)
	default:
		s := strings.ReplaceAll(e.Type, "_", " ")
		if e.Status != "" {
			s += "  " + e.Status
		}
		return s
	}
}

// checkTimeline prints, and returns as an error, what each sandbox's
// timeline must show. Born open: the setup ran with the network open and
// before any policy was written; then a restricted policy was written and
// enforced; then the agent ran, under it. Born restricted: no policy was
// written at all, and the born lists were enforced before any command other
// than the gateway probe.
func checkTimeline(events []primemock.Event, names map[string]string) error {
	tls := timelines(events)
	var problems []error
	for _, id := range sortedIDs(names) {
		tl := tls[id]
		if tl == nil {
			problems = append(problems, fmt.Errorf("%s: no events", names[id]))
			continue
		}
		var err error
		var ok string
		if tl.born != nil {
			err = tl.checkBorn()
			ok = "born restricted; its lists were enforced before any command but the gateway probe, and the agent ran under them"
		} else {
			err = tl.checkLocked()
			ok = "setup ran with the network open, then the policy was written and enforced, then the agent ran under it"
		}
		if err != nil {
			fmt.Printf("  FAIL  %-14s %v\n", names[id], err)
			problems = append(problems, fmt.Errorf("%s: %w", names[id], err))
			continue
		}
		fmt.Printf("  ok    %-14s %s\n", names[id], ok)
	}
	return errors.Join(problems...)
}

func (tl *timeline) checkLocked() error {
	setup, lock, agents := false, int64(-1), 0
	enforced := false
	for _, e := range tl.events {
		switch {
		case e.Type == primemock.EventPolicyPut:
			if e.Policy == nil || e.Policy.IsOpen() {
				return fmt.Errorf("an open policy was written (generation %d)", e.Generation)
			}
			if !setup {
				return fmt.Errorf("the policy (generation %d) was written before the setup ran", e.Generation)
			}
			lock = e.Generation
		case e.Type == primemock.EventPolicyApplied && lock >= 0 && e.Generation >= lock:
			enforced = true
		case e.Type != primemock.EventCommandExecuted || e.Command == gatewayProbe:
		case lock < 0:
			if open, known := tl.openAt(e.AppliedGeneration); !known || !open {
				return fmt.Errorf("setup %q ran without open egress (generation %d)", e.Command, e.AppliedGeneration)
			}
			setup = true
		default:
			if !enforced || e.AppliedGeneration < lock {
				return fmt.Errorf("%q ran before the policy (generation %d) was enforced", e.Command, lock)
			}
			agents++
		}
	}
	switch {
	case !setup:
		return errors.New("no setup ran")
	case lock < 0 || !enforced:
		return errors.New("no policy was written and enforced")
	case agents == 0:
		return errors.New("the agent never ran")
	}
	return nil
}

func (tl *timeline) checkBorn() error {
	if tl.born.IsOpen() {
		return errors.New("created with open lists")
	}
	enforced, agents := false, 0
	for _, e := range tl.events {
		switch {
		case e.Type == primemock.EventPolicyPut:
			return fmt.Errorf("a policy was written (generation %d) to a born-restricted sandbox", e.Generation)
		case e.Type == primemock.EventPolicyApplied && e.Generation == 0:
			enforced = true
		case e.Type != primemock.EventCommandExecuted || e.Command == gatewayProbe:
		case !enforced || e.AppliedGeneration < 0:
			return fmt.Errorf("%q ran before the born lists were enforced", e.Command)
		default:
			agents++
		}
	}
	if agents == 0 {
		return errors.New("the agent never ran")
	}
	return nil
}

// checkReachability compares what each agent saw with what its scenario
// expects (the configuration's expected_reachability).
func checkReachability(ctx context.Context, cli string, ws *soak.Workspace) error {
	var got, want map[string]map[string]string
	if err := outputJSON(ctx, cli, ws, "agent_reachability", &got); err != nil {
		return err
	}
	if err := outputJSON(ctx, cli, ws, "expected_reachability", &want); err != nil {
		return err
	}
	var problems []error
	for _, k := range sortedKeys(want) {
		for _, host := range sortedKeys(want[k]) {
			if got[k][host] != want[k][host] {
				problems = append(problems, fmt.Errorf("%s: the agent found %s %s, want %s", k, host, got[k][host], want[k][host]))
			}
		}
	}
	if len(problems) == 0 {
		fmt.Printf("  ok    every agent reached exactly what its scenario allows (%d scenarios)\n", len(want))
	}
	return errors.Join(problems...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func outputJSON(ctx context.Context, cli string, ws *soak.Workspace, name string, v any) error {
	cmd := exec.CommandContext(ctx, cli, "output", "-json", name) //nolint:gosec // G204: the CLI the user chose
	cmd.Dir, cmd.Env = ws.Dir, ws.Env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return json.Unmarshal(out, v)
}

func compact(p *prime.EgressPolicy) string {
	b, _ := json.Marshal(p)
	return string(b)
}
