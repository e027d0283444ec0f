// Command demo runs examples/demo, a small evaluation, end to end against
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
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
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
	if err := copyConfig(*configDir, work); err != nil {
		return err
	}
	// Colour only on a terminal: piped output (CI, logs) stays readable.
	var color []string
	if fi, err := os.Stdout.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		color = []string{"-no-color"}
	}
	terraform := func(args ...string) error {
		args = append(args, color...)
		cmd := exec.CommandContext(ctx, cli, args...) //nolint:gosec // G204: the CLI the user chose
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ws.Dir, ws.Env, os.Stdout, os.Stderr
		return cmd.Run()
	}

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

	out, err := readOutputs(ctx, cli, ws)
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
	once, err := readOnceOutputs(ctx, cli, ws)
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
	verdict = errors.Join(verdict, secondApply(ctx, terraform, mock, cli, ws, sandboxes))

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
func secondApply(ctx context.Context, terraform func(...string) error, mock *soak.Mock, cli string, ws *soak.Workspace, sandboxes []sandbox) error {
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
	out, err := readOutputs(ctx, cli, ws)
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

// --- The configuration's outputs ------------------------------------------

// scenario is one row of examples/demo's scenarios output. A nil list is
// unset; an empty one is `allow = []`.
type scenario struct {
	Name  string    `json:"name"`
	Allow *[]string `json:"allow"`
	Block *[]string `json:"block"`
	Born  bool      `json:"born_restricted"`
}

// configuration is the row's egress configuration, as HCL would say it.
func (s scenario) configuration() string {
	list := func(attr string, v []string) string {
		q := make([]string, len(v))
		for i, e := range v {
			q[i] = fmt.Sprintf("%q", e)
		}
		return attr + " = [" + strings.Join(q, ", ") + "]"
	}
	c := "no policy: egress open"
	switch {
	case s.Allow != nil:
		c = list("allow", *s.Allow)
	case s.Block != nil:
		c = list("block", *s.Block)
	}
	if s.Born {
		c += ", born restricted"
	}
	return c
}

// result is what an agent wrote to /results/reward.json (task/agent.sh).
type result struct {
	Scenario struct {
		Name string `json:"name"`
	} `json:"scenario"`
	Member   string          `json:"member"`
	SetupRan bool            `json:"setup_ran"`
	Reached  map[string]bool `json:"reached"`
	Reward   float64         `json:"reward"`
}

// routeHost is the interception route's host, which every lock allows.
const routeHost = "intercept.example.net"

type outputs struct {
	SandboxIDs map[string]string
	Scenarios  []scenario
	// Results are the decoded result files, by scenario; null (nil) when
	// an agent wrote none. Raw keeps them as read, for the copy on disk.
	Results map[string]*result
	Raw     map[string]json.RawMessage
	// Expected is what each scenario's agent must reach.
	Expected map[string]map[string]bool
}

func readOutputs(ctx context.Context, cli string, ws *soak.Workspace) (*outputs, error) {
	o := &outputs{}
	for name, v := range map[string]any{
		"sandbox_ids": &o.SandboxIDs, "scenarios": &o.Scenarios, "results": &o.Results,
		"expected_reachability": &o.Expected,
	} {
		if err := outputJSON(ctx, cli, ws, name, v); err != nil {
			return nil, err
		}
	}
	if err := outputJSON(ctx, cli, ws, "results", &o.Raw); err != nil {
		return nil, err
	}
	return o, nil
}

// sandbox is one scenario's sandbox.
type sandbox struct {
	name, id string
	born     bool
}

// sandboxes are the scenarios' sandboxes, in the table's order.
func (o *outputs) sandboxes() []sandbox {
	out := make([]sandbox, 0, len(o.Scenarios))
	for _, s := range o.Scenarios {
		out = append(out, sandbox{name: s.Name, id: o.SandboxIDs[s.Name], born: s.Born})
	}
	return out
}

// expectedReward is the share of the task's pages the scenario lets the
// agent fetch.
func (o *outputs) expectedReward(name string) float64 {
	want := o.Expected[name]
	if len(want) == 0 {
		return 0
	}
	n := 0
	for _, ok := range want {
		if ok {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// printRewards prints the upstream verification table's shape: scenario,
// configuration, reward; plus what the agent reached.
func printRewards(o *outputs) {
	fmt.Printf("  %-14s %-42s %6s  %s\n", "scenario", "configuration", "reward", "the agent reached")
	for _, s := range o.Scenarios {
		r := o.Results[s.Name]
		if r == nil {
			fmt.Printf("  %-14s %-42s %6s  %s\n", s.Name, s.configuration(), "-", "(no result)")
			continue
		}
		fmt.Printf("  %-14s %-42s %6.1f  %s\n", s.Name, s.configuration(), r.Reward, reachedList(r.Reached))
	}
	fmt.Printf("\n  The task: fetch example.com and google.com; reward = the share fetched. Every lock also\n"+
		"  allows the interception route (%s), which the agent calls first.\n", routeHost)
}

func reachedList(reached map[string]bool) string {
	var hosts []string
	for _, h := range sortedKeys(reached) {
		if reached[h] {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return "nothing"
	}
	return strings.Join(hosts, ", ")
}

// checkResults holds every result to its scenario: the agent got its own
// task and its member key, ran after a setup exactly when the sandbox had
// an open one, reached the route and exactly what its lists allow, scored
// the share of pages it fetched, and its results directory on disk
// (prime_fleet_artifact) holds the same result the data source read.
func checkResults(o *outputs, dir string) error {
	var problems []error
	for _, s := range o.Scenarios {
		name := s.Name
		fail := func(format string, args ...any) {
			err := fmt.Errorf("%s: "+format, append([]any{name}, args...)...)
			fmt.Printf("  FAIL  %v\n", err)
			problems = append(problems, err)
		}
		r := o.Results[name]
		if r == nil {
			fail("the agent wrote no result")
			continue
		}
		if r.Scenario.Name != name || r.Member != name {
			fail("the agent read the task of %q and the member key %q", r.Scenario.Name, r.Member)
		}
		if r.SetupRan == s.Born {
			fail("setup_ran is %t; want %t (born restricted sandboxes have no open setup)", r.SetupRan, !s.Born)
		}
		if !r.Reached[routeHost] {
			fail("the agent could not reach the interception route %s", routeHost)
		}
		for _, host := range sortedKeys(o.Expected[name]) {
			if want := o.Expected[name][host]; r.Reached[host] != want {
				fail("the agent reached %s: %t, want %t", host, r.Reached[host], want)
			}
		}
		if want := o.expectedReward(name); math.Abs(r.Reward-want) > 1e-9 {
			fail("reward %g, want %g", r.Reward, want)
		}
		local := filepath.Join(dir, "results", name, "reward.json")
		disk, err := os.ReadFile(local) //nolint:gosec // G304: the artifact the demo downloaded
		if err != nil {
			fail("no result on disk: %v", err)
			continue
		}
		var fromDisk, fromHCL any
		if err := json.Unmarshal(disk, &fromDisk); err != nil {
			fail("%s is not JSON: %v", local, err)
			continue
		}
		_ = json.Unmarshal(o.Raw[name], &fromHCL)
		if !reflect.DeepEqual(fromDisk, fromHCL) {
			fail("%s holds %s, the data source read %s", local, bytes.TrimSpace(disk), o.Raw[name])
		}
	}
	if len(problems) == 0 {
		fmt.Printf("  ok    every agent read its own task, reached exactly what its scenario allows and scored\n"+
			"        the share it fetched; its results are on disk too (%d scenarios)\n", len(o.Scenarios))
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

// --- The timeline ----------------------------------------------------------

// The configuration's paths and scripts (examples/demo), by which the
// timeline tells its steps apart from the provider's own commands (mkdir,
// mv, tar, tail, rm: uploads, downloads and job output).
const (
	taskDir      = "/task"
	scenarioFile = "/task/scenario.json"
	setupCommand = "sh /task/setup.sh"
	agentScript  = "/task/agent.sh"
	resultFile   = "/results/reward.json"
	// fetchPrefix is where the provider packs a directory it downloads.
	fetchPrefix = "/tmp/.prime-fetch-"
)

// gatewayProbe is the command the provider runs on every new sandbox to
// know that its gateway answers (prime.gatewayProbeCommand, the SDK's
// readiness check): neither setup nor agent.
const gatewayProbe = "echo 'sandbox ready'"

var jobIDRE = regexp.MustCompile(`/tmp/job_([0-9a-f]{8})\.`)

// step is what a command is in the protocol.
type step int

const (
	stepProvider   step = iota // the provider's own plumbing
	stepProbe                  // the gateway probe
	stepTaskDir                // the task archive unpacked into /task
	stepScenario               // the scenario file moved into place
	stepSetup                  // the trusted setup
	stepAgentStart             // the command that starts the agent's job
	stepAgent                  // the agent's job itself
)

func stepOf(e primemock.Event) step {
	c := e.Command
	switch {
	case c == gatewayProbe:
		return stepProbe
	case e.Transport == primemock.TransportBackground && strings.Contains(c, agentScript):
		return stepAgent
	case strings.HasPrefix(c, "nohup ") && strings.Contains(c, agentScript):
		return stepAgentStart
	case c == setupCommand:
		return stepSetup
	case strings.Contains(c, "tar -xf ") && strings.Contains(c, " -C "+taskDir+";"):
		return stepTaskDir
	case strings.HasPrefix(c, "mv -f -- ") && strings.HasSuffix(c, " "+scenarioFile):
		return stepScenario
	}
	return stepProvider
}

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

func printTimeline(events []primemock.Event, sandboxes []sandbox) {
	printTimelineAfter(events, sandboxes, -1)
}

// printTimelineAfter prints the events after sequence number after (the
// egress of each generation still known from the whole log); a sandbox
// with none is left out.
func printTimelineAfter(events []primemock.Event, sandboxes []sandbox, after int64) {
	tls := timelines(events)
	for _, sb := range sandboxes {
		tl := tls[sb.id]
		if tl == nil {
			continue
		}
		var shown []primemock.Event
		for _, e := range tl.events {
			if e.Seq > after {
				shown = append(shown, e)
			}
		}
		if len(shown) == 0 {
			fmt.Printf("%s (%s): nothing\n\n", sb.name, sb.id)
			continue
		}
		fmt.Printf("%s (%s)\n", sb.name, sb.id)
		t0 := shown[0].Time
		for _, e := range shown {
			// An answer that reports the open generation 0 as applied is not
			// news for the timeline. Each command is one line, when it ends
			// (with the policy enforced when it started); the agent's job is
			// one line when its starting command returns and one when it ends.
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
	case primemock.EventFileUploaded:
		return fmt.Sprintf("file uploaded    %s (%d bytes)", e.Path, e.Size)
	case primemock.EventFileDownloaded, primemock.EventFileRead:
		switch {
		case e.Path == resultFile:
			return fmt.Sprintf("result read      %s (%d bytes): the prime_fleet_file data source", e.Path, e.Size)
		case strings.HasPrefix(e.Path, fetchPrefix):
			return fmt.Sprintf("results fetched  /results as one archive (%d bytes): prime_fleet_artifact", e.Size)
		}
		return fmt.Sprintf("file read        %s (%d bytes)", e.Path, e.Size)
	case primemock.EventCommandExecuted:
		return tl.describeCommand(e)
	default:
		s := strings.ReplaceAll(e.Type, "_", " ")
		if e.Status != "" {
			s += "  " + e.Status
		}
		return s
	}
}

// describeCommand names a finished command by its part in the protocol,
// with the egress enforced when it started.
func (tl *timeline) describeCommand(e primemock.Event) string {
	network := "nothing enforced yet"
	if open, known := tl.openAt(e.AppliedGeneration); known && open && e.AppliedGeneration < 0 {
		network = "network open, untouched"
	} else if known && open {
		network = fmt.Sprintf("network open, generation %d", e.AppliedGeneration)
	} else if known && e.AppliedGeneration >= 0 {
		network = fmt.Sprintf("restricted, generation %d", e.AppliedGeneration)
	}
	job := ""
	if m := jobIDRE.FindStringSubmatch(e.Command); m != nil {
		job = m[1]
	}
	var what string
	switch stepOf(e) {
	case stepProbe:
		what = fmt.Sprintf("gateway probe    %q", e.Command)
	case stepTaskDir:
		what = "task in          the archive unpacked into " + taskDir
	case stepScenario:
		what = "task in          " + scenarioFile + " moved into place"
	case stepSetup:
		what = fmt.Sprintf("setup            %q", e.Command)
	case stepAgentStart:
		what = fmt.Sprintf("agent started    job %s: sh %s in the background", job, agentScript)
	case stepAgent:
		what = fmt.Sprintf("agent ended      job %s", job)
	default:
		c := e.Command
		if len(c) > 60 {
			c = c[:57] + "..."
		}
		what = fmt.Sprintf("  (provider)     %q", c)
	}
	return fmt.Sprintf("%-74s exit %d  [%s]", what, e.ExitCode, network)
}

// --- The checks ------------------------------------------------------------

// marks are the indexes, in a timeline's events, of what the checks order;
// -1 when it did not happen.
type marks struct {
	taskDir, scenario   int // the upload's last step ended (exit 0)
	setupStart          int
	firstPut, lockPut   int // the first policy write; the last restricted one
	lockGen             int64
	lockApplied         int // that write enforced
	agentStart, agentOK int // the job started; it ended with exit 0
	agentStarts         int
	resultRead, fetched int // the data source read; the artifact download
}

func (tl *timeline) marks() marks {
	m := marks{taskDir: -1, scenario: -1, setupStart: -1, firstPut: -1, lockPut: -1, lockGen: -1, lockApplied: -1,
		agentStart: -1, agentOK: -1, resultRead: -1, fetched: -1}
	first := func(p *int, i int) {
		if *p < 0 {
			*p = i
		}
	}
	for i, e := range tl.events {
		ended := e.Type == primemock.EventCommandExecuted && e.ExitCode == 0
		switch {
		case ended && stepOf(e) == stepTaskDir:
			first(&m.taskDir, i)
		case ended && stepOf(e) == stepScenario:
			first(&m.scenario, i)
		case e.Type == primemock.EventCommandStarted && stepOf(e) == stepSetup:
			first(&m.setupStart, i)
		case e.Type == primemock.EventPolicyPut:
			first(&m.firstPut, i)
			if e.Policy != nil && !e.Policy.IsOpen() {
				m.lockPut, m.lockGen, m.lockApplied = i, e.Generation, -1
			}
		case e.Type == primemock.EventPolicyApplied && m.lockPut >= 0 && e.Generation >= m.lockGen:
			first(&m.lockApplied, i)
		case e.Type == primemock.EventCommandStarted && stepOf(e) == stepAgent:
			m.agentStarts++
			first(&m.agentStart, i)
		case ended && stepOf(e) == stepAgent:
			first(&m.agentOK, i)
		case (e.Type == primemock.EventFileDownloaded || e.Type == primemock.EventFileRead) && e.Path == resultFile:
			first(&m.resultRead, i)
		case e.Type == primemock.EventFileDownloaded && strings.HasPrefix(e.Path, fetchPrefix):
			first(&m.fetched, i)
		}
	}
	return m
}

// checkTimeline prints, and returns as an error, what each sandbox's
// timeline must show. Every sandbox: the task in place before the setup
// (and the agent), the agent's job started once and ended, then its result
// read and its results downloaded. Born open and locked: the setup ran with
// the network open and before any policy was written; then a restricted
// policy was written and enforced; then the agent started, under it. Born
// open and never locked (the baseline): no policy at all. Born restricted:
// no policy written, and the born lists enforced before any command other
// than the gateway probe.
func checkTimeline(events []primemock.Event, sandboxes []sandbox) error {
	tls := timelines(events)
	var problems []error
	for _, sb := range sandboxes {
		name := sb.name
		tl := tls[sb.id]
		var err error
		var ok string
		switch {
		case tl == nil:
			err = errors.New("no events")
		case sb.born:
			err = tl.checkBorn()
			ok = "born restricted; its lists were enforced before any command but the gateway probe; task in, then the agent under them"
		case len(tl.puts) == 0:
			err = tl.checkOpen()
			ok = "never locked (the baseline): task in, setup, then the agent, with the network open"
		default:
			err = tl.checkLocked()
			ok = "task in, setup with the network open, the policy written and enforced, then the agent under it"
		}
		if err == nil {
			err = tl.checkAgentAndResults()
		}
		if err != nil {
			fmt.Printf("  FAIL  %-14s %v\n", name, err)
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			continue
		}
		fmt.Printf("  ok    %-14s %s\n", name, ok)
	}
	if len(problems) == 0 {
		fmt.Printf("  ok    %-14s each agent started once; its result was read and downloaded only after it ended\n", "every sandbox")
	}
	return errors.Join(problems...)
}

// checkTaskBefore: both parts of the task were in place before event i.
func (m marks) checkTaskBefore(i int, what string) error {
	switch {
	case m.taskDir < 0 || m.scenario < 0:
		return errors.New("the task was not uploaded (both the task directory and the scenario file)")
	case m.taskDir > i || m.scenario > i:
		return fmt.Errorf("%s started before the task was in place", what)
	}
	return nil
}

// checkSetupOpen: the setup ran, with the network open, before any policy
// was written.
func (tl *timeline) checkSetupOpen(m marks) error {
	if m.setupStart < 0 {
		return errors.New("no setup ran")
	}
	if m.firstPut >= 0 && m.firstPut < m.setupStart {
		return errors.New("a policy was written before the setup ran")
	}
	e := tl.events[m.setupStart]
	if open, known := tl.openAt(e.AppliedGeneration); !known || !open {
		return fmt.Errorf("setup %q ran without open egress (generation %d)", e.Command, e.AppliedGeneration)
	}
	return m.checkTaskBefore(m.setupStart, "the setup")
}

func (tl *timeline) checkLocked() error {
	m := tl.marks()
	if err := tl.checkSetupOpen(m); err != nil {
		return err
	}
	for gen, p := range tl.puts {
		if p.IsOpen() {
			return fmt.Errorf("an open policy was written (generation %d)", gen)
		}
	}
	switch {
	case m.lockPut < 0 || m.lockApplied < 0:
		return errors.New("no policy was written and enforced")
	case m.agentStart < 0:
		return errors.New("the agent never ran")
	case m.agentStart < m.lockApplied || tl.events[m.agentStart].AppliedGeneration < m.lockGen:
		return fmt.Errorf("the agent started before the policy (generation %d) was enforced", m.lockGen)
	}
	return nil
}

func (tl *timeline) checkOpen() error {
	m := tl.marks()
	if err := tl.checkSetupOpen(m); err != nil {
		return err
	}
	if m.agentStart < 0 || m.agentStart < m.setupStart {
		return errors.New("the agent did not run after the setup")
	}
	return nil
}

func (tl *timeline) checkBorn() error {
	if tl.born.IsOpen() {
		return errors.New("created with open lists")
	}
	enforced := false
	for _, e := range tl.events {
		switch {
		case e.Type == primemock.EventPolicyPut:
			return fmt.Errorf("a policy was written (generation %d) to a born-restricted sandbox", e.Generation)
		case e.Type == primemock.EventPolicyApplied && e.Generation == 0:
			enforced = true
		case e.Type != primemock.EventCommandStarted || e.Command == gatewayProbe:
		case !enforced || e.AppliedGeneration < 0:
			return fmt.Errorf("%q ran before the born lists were enforced", e.Command)
		case stepOf(e) == stepSetup:
			return errors.New("a setup ran on a born-restricted sandbox")
		}
	}
	m := tl.marks()
	if m.agentStart < 0 {
		return errors.New("the agent never ran")
	}
	return m.checkTaskBefore(m.agentStart, "the agent")
}

// checkAgentAndResults: the agent's job started exactly once and ended
// with exit 0, and only then was its result read and downloaded.
func (tl *timeline) checkAgentAndResults() error {
	m := tl.marks()
	switch {
	case m.agentStarts != 1:
		return fmt.Errorf("the agent started %d times, want once", m.agentStarts)
	case m.agentOK < 0:
		return errors.New("the agent's job did not end with exit 0")
	case m.resultRead < 0:
		return errors.New("the result was never read")
	case m.resultRead < m.agentOK:
		return errors.New("the result was read before the agent ended")
	case m.fetched < 0:
		return errors.New("the results were never downloaded")
	case m.fetched < m.agentOK:
		return errors.New("the results were downloaded before the agent ended")
	}
	return m.checkTaskBefore(m.agentStart, "the agent")
}

// checkSecondApply checks the events after sequence number after: on
// widenedRow's sandbox, no setup, one restricted policy write (in place:
// nothing reopened), enforced before its agent's job started, once, and
// the result read and downloaded after it ended; on every other sandbox,
// no setup, no policy write and no agent.
func checkSecondApply(events []primemock.Event, sandboxes []sandbox, after int64) error {
	tls := timelines(events)
	var problems []error
	for _, sb := range sandboxes {
		tl := tls[sb.id]
		if tl == nil {
			continue
		}
		setups, agents, puts := 0, 0, 0
		lockGen, lockApplied, agentStart, agentEnd, read, fetched := int64(-1), -1, -1, -1, -1, -1
		for i, e := range tl.events {
			if e.Seq <= after {
				continue
			}
			switch {
			case e.Type == primemock.EventCommandStarted && stepOf(e) == stepSetup:
				setups++
			case e.Type == primemock.EventCommandStarted && stepOf(e) == stepAgent:
				agents++
				agentStart = i
			case e.Type == primemock.EventCommandExecuted && stepOf(e) == stepAgent && e.ExitCode == 0:
				agentEnd = i
			case e.Type == primemock.EventPolicyPut:
				puts++
				if e.Policy != nil && !e.Policy.IsOpen() {
					lockGen = e.Generation
				}
			case e.Type == primemock.EventPolicyApplied && lockGen >= 0 && e.Generation >= lockGen && lockApplied < 0:
				lockApplied = i
			case (e.Type == primemock.EventFileDownloaded || e.Type == primemock.EventFileRead) && e.Path == resultFile && agentEnd >= 0:
				read = i
			case e.Type == primemock.EventFileDownloaded && strings.HasPrefix(e.Path, fetchPrefix) && agentEnd >= 0:
				fetched = i
			}
		}
		var err error
		switch {
		case setups > 0:
			err = fmt.Errorf("the setup ran %d times; a change of the allowlist runs no setup", setups)
		case sb.name != widenedRow && (agents > 0 || puts > 0):
			err = fmt.Errorf("%d agent runs and %d policy writes; only %s's allowlist changed", agents, puts, widenedRow)
		case sb.name != widenedRow:
		case puts != 1 || lockGen < 0:
			err = fmt.Errorf("%d policy writes, want one restricted write in place (no reopening)", puts)
		case lockApplied < 0:
			err = fmt.Errorf("the new lock (generation %d) was never enforced", lockGen)
		case agents != 1:
			err = fmt.Errorf("the agent started %d times, want once: the lock's new id must run it again", agents)
		case agentStart < lockApplied || tl.events[agentStart].AppliedGeneration < lockGen:
			err = fmt.Errorf("the agent started before the new lock (generation %d) was enforced", lockGen)
		case agentEnd < 0 || read < 0 || fetched < 0:
			err = errors.New("the agent's new result was not read and downloaded after it ended")
		}
		if err != nil {
			fmt.Printf("  FAIL  %-14s %v\n", sb.name, err)
			problems = append(problems, fmt.Errorf("second apply, %s: %w", sb.name, err))
			continue
		}
		if sb.name == widenedRow {
			fmt.Printf("  ok    %-14s relocked in place (generation %d), then its agent ran again under it; no setup\n", sb.name, lockGen)
		} else {
			fmt.Printf("  ok    %-14s nothing ran: no setup, no policy write, no agent\n", sb.name)
		}
	}
	return errors.Join(problems...)
}

func compact(p *prime.EgressPolicy) string {
	b, _ := json.Marshal(p)
	return string(b)
}
