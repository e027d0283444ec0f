package main

// The setup-once run: the same evaluation — N members, a trusted setup that
// takes a fixed time and writes a marker, an egress lock, an agent that
// reads the marker — set up two ways on the same mock settings, side by
// side in one invocation:
//
//   - per member: prime_sandbox_fleet (size N) -> prime_fleet_command setup
//     on every member (require_open_egress; at most setupParallelism at
//     once, the resource's default max_concurrency) ->
//     prime_fleet_egress_policy (after the setup) -> agent;
//   - once: prime_sandbox (the template) -> prime_sandbox_command setup ->
//     prime_sandbox_checkpoint (DURABLE, then the template deleted: it
//     outlives it) -> prime_sandbox_fleet restored from it with the lists in
//     its egress block (restricted right after each restore) -> agent.
//
// Besides the apply's time, the once row reports how long the template was
// billed after its checkpoint was DURABLE (target 0 s): from that DURABLE
// to the template's delete, in the mock's log.
//
// The setup is `sleep SETUP_SECONDS` in the mock's shell (its sleep_scale
// applies) and then the marker; each agent step cats the marker, so every
// member is seen to have the setup's artefact.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

// setupParallelism is how many members' setups run at once in the
// per-member configuration: prime_fleet_command's default max_concurrency,
// which the configuration leaves as it is.
const setupParallelism = 32

// setupMarker is the file the setup writes and every agent reads.
const setupMarker = "/opt/setup/marker"

func setupCommandOf(seconds int) string {
	return fmt.Sprintf("sleep %d && mkdir -p /opt/setup && echo set-up > %s", seconds, setupMarker)
}

const setupAgentCommand = "cat " + setupMarker + " && echo agent"

// setupOnceHCL is the configuration of one of the two ways.
func setupOnceHCL(once bool, n int, baseURL, providerExtra string, seconds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {
  base_url = %q
  api_key  = %q
%s}
`, baseURL, soak.APIKey, providerLines(providerExtra))
	setup := strconv.Quote(setupCommandOf(seconds))
	if once {
		fmt.Fprintf(&b, `
resource "prime_sandbox" "template" {
  name                    = "bench-template"
  docker_image            = "python:3.12-slim"
  retire_after_checkpoint = true
}

resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.template.id
  command             = %s
  require_open_egress = true
  timeout_seconds     = 3600
}

resource "prime_sandbox_checkpoint" "setup" {
  sandbox_id   = prime_sandbox.template.id
  source_after = "delete"
  triggers     = { setup = prime_sandbox_command.setup.id }
}

resource "prime_sandbox_fleet" "fleet" {
  name_prefix   = "bench"
  size          = %d
  checkpoint_id = prime_sandbox_checkpoint.setup.id

  egress {
    allow  = %s
    routes = %s
  }
}

locals {
  ready = { for k, s in prime_sandbox_fleet.fleet.sandboxes : k => s.id if s.egress_applied }
}
`, setup, n, hclStrings(soak.DefaultAllow), hclStrings(soak.DefaultRoutes))
	} else {
		fmt.Fprintf(&b, `
resource "prime_sandbox_fleet" "fleet" {
  name_prefix  = "bench"
  size         = %d
  docker_image = "python:3.12-slim"
}

resource "prime_fleet_command" "setup" {
  sandbox_ids         = prime_sandbox_fleet.fleet.sandbox_ids
  commands            = [%s]
  require_open_egress = true
  timeout_seconds     = 3600
}

resource "prime_fleet_egress_policy" "lock" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  allow       = %s
  routes      = %s
  after       = [prime_fleet_command.setup.id]
}

locals {
  ready = { for k, m in prime_fleet_egress_policy.lock.members : k => m.sandbox_id if m.applied }
}
`, n, setup, hclStrings(soak.DefaultAllow), hclStrings(soak.DefaultRoutes))
	}
	fmt.Fprintf(&b, `
resource "prime_fleet_command" "agent" {
  sandbox_ids     = local.ready
  commands        = [%q]
  max_concurrency = %d
}
`, setupAgentCommand, n)
	return b.String()
}

// providerLines is the extra provider attributes, indented, one a line.
func providerLines(extra string) string {
	if strings.TrimSpace(extra) == "" {
		return ""
	}
	return "  " + strings.TrimSpace(extra) + "\n"
}

func hclStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// setupFigures are one apply's measurements.
type setupFigures struct {
	n        int
	once     bool
	setup    time.Duration // one setup's wall time (seconds × scale)
	apply    phase
	floor    time.Duration
	setups   int // setup executions (command_started of the setup)
	agentsOK int // agent steps that ended 0 (each read the marker)
	restored int // sandboxes restored from a checkpoint
	// lockedFirst counts members whose agent started with a restricting
	// policy enforced.
	lockedFirst      int
	planEmpty        bool
	liveAfterDestroy int
	checkpointsLeft  int
	// templateBilled is how long the template outlived its checkpoint's
	// DURABLE within the apply; templateEnded, whether it ended in it (else
	// it is billed on, until destroy).
	templateBilled time.Duration
	templateEnded  bool
	// timeline is where the apply spent its time (setupTimeline).
	timeline []timelineRow
}

func (f *setupFigures) mode() string {
	if f.once {
		return "once"
	}
	return "per member"
}

// requestsPerMember counts every request the apply made (API and gateway)
// per member.
func (f *setupFigures) requestsPerMember() float64 {
	return float64(f.apply.apiTotal()+f.apply.gatewayTotal()) / float64(f.n)
}

// setupFloors are the mock's lower bounds of each apply: what its delays
// make unavoidable with unlimited client speed. Per member: boot + gateway
// lag, ceil(N/P) waves of setups, the lock's apply. Once: the template's
// boot + gateway lag, one setup, the checkpoint's freeze and upload, the
// restore + gateway lag, the lock's apply after it (the template's delete,
// which the checkpoint's create waits for, is immediate on the mock).
func setupFloors(c benchConfig, n int, setup time.Duration) (perMember, once time.Duration) {
	waves := time.Duration(math.Ceil(float64(n) / setupParallelism))
	perMember = c.boot + c.gatewayLag + waves*setup + c.apply
	once = c.boot + c.gatewayLag + setup + primemock.DefaultCheckpointFreezeDelay + primemock.DefaultCheckpointDurableDelay +
		c.boot + c.gatewayLag + c.apply
	return perMember, once
}

// setupPair is both ways at one N.
type setupPair struct {
	n                int
	perMember, once  *setupFigures
	setupWall        time.Duration
	savedBound       time.Duration // (N−1)/P × setup time
	targetAgainstPer time.Duration // per-member apply − savedBound
}

func (p *setupPair) passAgainstPer() bool { return p.once.apply.res.Duration <= p.targetAgainstPer }
func (p *setupPair) onceRatio() float64 {
	return p.once.apply.res.Duration.Seconds() / p.once.floor.Seconds()
}

func runSetupOnce(c benchConfig, rep *report) error {
	for _, n := range c.setupNs {
		p := &setupPair{n: n, setupWall: time.Duration(float64(c.setupSeconds) * c.setupScale * float64(time.Second))}
		ways := []bool{false, true}
		if c.setupOnceOnly {
			ways = []bool{true}
		}
		for _, once := range ways {
			fmt.Printf("\n=== setup %s, N=%d: setup sleep %d s at sleep_scale %g (%s), latency %s, boot %s, apply %s, gateway lag %s\n",
				map[bool]string{false: "per member", true: "once"}[once], n, c.setupSeconds, c.setupScale, secs(p.setupWall),
				c.latency, c.boot, c.apply, c.gatewayLag)
			f, err := setupRun(c, n, once, p.setupWall)
			if err != nil {
				return fmt.Errorf("setup-once run N=%d (once %t): %w (work directory %s)", n, once, err, c.workdir)
			}
			if once {
				p.once = f
			} else {
				p.perMember = f
			}
		}
		if c.setupOnceOnly {
			fmt.Printf("setup once N=%d: apply %s (floor %s, %.2f×), template billed after its checkpoint %s\n", n,
				secs(p.once.apply.res.Duration), secs(p.once.floor), p.onceRatio(), p.once.billedCell())
			continue
		}
		p.savedBound = time.Duration(float64(n-1) / setupParallelism * float64(p.setupWall))
		p.targetAgainstPer = p.perMember.apply.res.Duration - p.savedBound
		rep.setupOnce = append(rep.setupOnce, p)
		for _, f := range []*setupFigures{p.perMember, p.once} {
			fmt.Printf("setup %-10s N=%d: apply %s (floor %s, %.2f×), %d setup executions, %d/%d agents read the marker, %.1f requests per member, second plan empty %t, %d left after destroy (checkpoints %d), template billed after its checkpoint %s\n",
				f.mode(), n, secs(f.apply.res.Duration), secs(f.floor), f.apply.res.Duration.Seconds()/f.floor.Seconds(), f.setups,
				f.agentsOK, n, f.requestsPerMember(), f.planEmpty, f.liveAfterDestroy, f.checkpointsLeft, f.billedCell())
		}
	}
	return nil
}

func setupRun(c benchConfig, n int, once bool, setupWall time.Duration) (*setupFigures, error) {
	ctx := context.Background()
	name := fmt.Sprintf("setup-per-member-n%d", n)
	if once {
		name = fmt.Sprintf("setup-once-n%d", n)
	}
	env, err := newRunEnv(c, name, "-sleep-scale", strconv.FormatFloat(c.setupScale, 'g', -1, 64), "-restore-delay", c.boot.String())
	if err != nil {
		return nil, err
	}
	defer env.Close()
	f := &setupFigures{n: n, once: once, setup: setupWall}
	perMemberFloor, onceFloor := setupFloors(c, n, setupWall)
	f.floor = map[bool]time.Duration{false: perMemberFloor, true: onceFloor}[once]
	if err := env.ws.WriteConfig(setupOnceHCL(once, n, env.mock.URL, c.providerExtra, c.setupSeconds)); err != nil {
		return nil, err
	}
	if err := env.warmUp(ctx); err != nil {
		return nil, err
	}
	if f.apply, err = env.run(ctx, "apply", "apply", "-auto-approve", "-input=false"); err != nil {
		return nil, err
	}
	if !f.apply.res.OK() {
		fmt.Println(f.apply.res.Tail(4000))
		env.ws.Run(ctx, "destroy", "-auto-approve", "-input=false")
		return nil, fmt.Errorf("apply failed: %s", f.apply.res.Describe())
	}
	f.count(c.setupSeconds)
	if once {
		f.templateBilled, f.templateEnded = templateBilledAfterCheckpoint(f.apply.events, f.apply.res.Start.Add(f.apply.res.Duration))
	}
	f.timeline = setupTimeline(f.apply.events, f.apply.res.Start, setupCommandOf(c.setupSeconds))
	fmt.Print(timelineTable(f.timeline, f.apply.res.Duration))
	plan, err := env.run(ctx, "plan", "plan", "-detailed-exitcode", "-input=false")
	if err != nil {
		return nil, err
	}
	if f.planEmpty = plan.res.OK(); !f.planEmpty {
		fmt.Println(plan.res.Tail(3000))
	}
	destroy, err := env.run(ctx, "destroy", "destroy", "-auto-approve", "-input=false")
	if err != nil {
		return nil, err
	}
	if !destroy.res.OK() {
		fmt.Println(destroy.res.Tail(4000))
		return nil, fmt.Errorf("destroy failed: %s", destroy.res.Describe())
	}
	f.liveAfterDestroy = destroy.stats.LiveSandboxes
	f.checkpointsLeft, err = countCheckpoints(ctx, env.mock.URL)
	return f, err
}

// count reads the apply's events: setup executions, agents that read the
// marker, restores, and agents that started under a restricting policy.
func (f *setupFigures) count(seconds int) {
	setup := setupCommandOf(seconds)
	born := map[string]bool{}
	puts := map[string]map[int64]bool{} // restricting generations by sandbox
	for _, e := range f.apply.events {
		switch {
		case e.Type == primemock.EventSandboxCreated:
			born[e.SandboxID] = e.Policy != nil && !e.Policy.IsOpen()
		case e.Type == primemock.EventPolicyPut && e.Policy != nil && !e.Policy.IsOpen():
			if puts[e.SandboxID] == nil {
				puts[e.SandboxID] = map[int64]bool{}
			}
			puts[e.SandboxID][e.Generation] = true
		case e.Type == primemock.EventSandboxRestored:
			f.restored++
		case e.Type == primemock.EventCommandStarted && e.Command == setup:
			f.setups++
		case e.Type == primemock.EventCommandStarted && e.Command == setupAgentCommand:
			g := e.AppliedGeneration
			if (g == 0 && born[e.SandboxID]) || (g > 0 && puts[e.SandboxID][g]) {
				f.lockedFirst++
			}
		case e.Type == primemock.EventCommandExecuted && e.Command == setupAgentCommand && e.ExitCode == 0:
			f.agentsOK++
		}
	}
}

// templateBilledAfterCheckpoint is how long the template (the source of
// the first checkpoint taken, not a pause's) went on after that checkpoint
// was DURABLE: until its delete, or until end when it was not deleted
// (ended false: it is billed on, until destroy).
func templateBilledAfterCheckpoint(events []primemock.Event, end time.Time) (billed time.Duration, ended bool) {
	var template, ck string
	var durable time.Time
	for _, e := range events {
		switch {
		case e.Type == primemock.EventCheckpointCreated && ck == "" && !e.Memory:
			template, ck = e.SandboxID, e.CheckpointID
		case e.Type == primemock.EventCheckpointState && e.CheckpointID == ck && e.State == prime.CheckpointDurable:
			durable = e.Time
		case e.Type == primemock.EventSandboxDeleted && e.SandboxID == template && !durable.IsZero():
			return e.Time.Sub(durable), true
		}
	}
	if durable.IsZero() {
		return 0, false
	}
	return end.Sub(durable), false
}

// billedCell renders templateBilled: "—" for per member, a "+" when the
// template was still billed when the apply returned.
func (f *setupFigures) billedCell() string {
	switch {
	case !f.once:
		return "—"
	case f.templateEnded:
		return secs(f.templateBilled)
	}
	return secs(f.templateBilled) + "+ (until destroy)"
}

func countCheckpoints(ctx context.Context, url string) (int, error) {
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: soak.APIKey, BaseURL: url}})
	if err != nil {
		return 0, err
	}
	cks, err := c.ListCheckpoints(ctx, prime.ListCheckpointsOptions{})
	return len(cks), err
}

// setupOnceSection writes the report's section.
func setupOnceSection(b *strings.Builder, pairs []*setupPair, c benchConfig) {
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "## Setup once, fan out\n\n")
	fmt.Fprintf(b, "The same evaluation set up two ways in one invocation, on the same mock settings (latency %s, boot %s = "+
		"restore %s, apply %s, gateway lag %s; checkpoint freeze %s + upload %s, pause %s): a setup of `sleep %d` at sleep_scale "+
		"%g (**%s** of wall time each) that then writes a marker, an egress lock, and an agent step on every member that "+
		"reads the marker. *Per member*: the fleet, the setup on every member (at most %d at once: `prime_fleet_command`'s "+
		"default `max_concurrency`), `prime_fleet_egress_policy` after it, the agent. *Once*: a template, the setup in it, "+
		"`prime_sandbox_checkpoint` (`DURABLE`, then the template deleted: `source_after = \"delete\"`, the template "+
		"`retire_after_checkpoint`), the fleet restored from it with the lists in its `egress` block, the agent. "+
		"Reproduce with `make bench-setup-once SETUP_N=%s`.\n\n",
		c.latency, c.boot, c.boot, c.apply, c.gatewayLag, primemock.DefaultCheckpointFreezeDelay, primemock.DefaultCheckpointDurableDelay,
		primemock.DefaultPauseDelay, c.setupSeconds, c.setupScale, secs(pairs[0].setupWall), setupParallelism, joinInts(c.setupNs))
	b.WriteString("| N | setup | setup executions | apply | floor | apply / floor | agents that read the marker | restricted before the agent | requests per member | second plan empty | left after destroy (sandboxes / checkpoints) | template billed after its checkpoint |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |\n")
	for _, p := range pairs {
		for _, f := range []*setupFigures{p.perMember, p.once} {
			fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %.2f | %d / %d | %d / %d | %.1f | %t | %d / %d | %s |\n", f.n, f.mode(), f.setups,
				secs(f.apply.res.Duration), secs(f.floor), f.apply.res.Duration.Seconds()/f.floor.Seconds(), f.agentsOK, f.n,
				f.lockedFirst, f.n, f.requestsPerMember(), f.planEmpty, f.liveAfterDestroy, f.checkpointsLeft, f.billedCell())
		}
	}
	b.WriteString("\nTargets (side by side, one invocation): (1) the setup-once apply ≤ the per-member apply − (N−1)/P × setup time " +
		"(P = setups at once); (2) the setup-once apply ≤ 1.5 × its own floor; (3) the template billed after its " +
		"checkpoint is `DURABLE`: 0 s (PASS below 1 s: the delete request and its wait).\n\n")
	b.WriteString("| N | (N−1)/P × setup | per-member apply − that | setup-once apply | (1) | setup-once apply / floor | (2) | template billed after its checkpoint | (3) |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | --- |\n")
	for _, p := range pairs {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %.2f | %s | %s | %s |\n", p.n, secs(p.savedBound), secs(p.targetAgainstPer),
			secs(p.once.apply.res.Duration), passMark(p.passAgainstPer()), p.onceRatio(), passMark(p.onceRatio() <= 1.5),
			p.once.billedCell(), passMark(p.once.templateEnded && p.once.templateBilled < time.Second))
	}
	b.WriteString("\nFloors: per member = boot + gateway lag + ⌈N/P⌉ × setup + apply; once = boot + gateway lag + setup + " +
		"checkpoint freeze + upload + restore + gateway lag + apply (the template's delete, which the checkpoint's create " +
		"waits for, is immediate on the mock). The template's billed time runs from its checkpoint's `DURABLE` to its " +
		"delete in the mock's log (a paused template, as before `source_after = \"delete\"`, was billed at the disk " +
		"rate from then until destroy). Setup executions count the setup command's starts in the mock's event log; \"restricted before " +
		"the agent\" counts agent steps that started with a restricting generation enforced; requests per member count every " +
		"API and gateway request of the apply. Target (1) credits per-member setup with perfect packing of N setups into P " +
		"slots and charges setup once nothing for its one setup: setup once pays that setup, the checkpoint and the restore " +
		"on top, so (1) holds only when per-member setup loses more than that to its ⌈N/P⌉ waves and its per-member commands. " +
		"Neither floor counts the agent step (one command per member) or the per-member cost of creating and locking N " +
		"sandboxes, which the fleet path's figures above measure.\n\n")
	last := pairs[len(pairs)-1].once
	fmt.Fprintf(b, "Where the setup-once apply at N=%d spends its time (the mock's events, from the apply's start; "+
		"`command_started` without a role is each sandbox's gateway probe):\n\n%s\n", last.n, timelineTable(last.timeline, last.apply.res.Duration))
}

func passMark(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Markers of the setup-once section in BENCHMARKS.md: a run of only the
// setup-once pair replaces what is between them (or appends them), and
// leaves the rest of the report as it was.
const (
	setupOnceBegin = "<!-- BEGIN setup-once -->"
	setupOnceEnd   = "<!-- END setup-once -->"
)

// splice puts section between the markers begin and end of doc, or
// appends it with them.
func splice(doc, begin, end, section string) string {
	block := begin + "\n" + section + end + "\n"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return strings.TrimRight(doc, "\n") + "\n\n" + block
	}
	return doc[:i] + block + strings.TrimLeft(doc[j+len(end):], "\n")
}

// writeSectionsOnly splices the setup-once and recovery sections that ran
// into the report file.
func writeSectionsOnly(path string, rep *report, c benchConfig) error {
	old, err := os.ReadFile(path) //nolint:gosec // G304: the report the user named
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc := string(old)
	if len(rep.setupOnce) > 0 {
		var b strings.Builder
		setupOnceSection(&b, rep.setupOnce, c)
		doc = splice(doc, setupOnceBegin, setupOnceEnd, b.String())
	}
	if len(rep.recovery) > 0 {
		var b strings.Builder
		recoverySection(&b, rep.recovery, c)
		doc = splice(doc, recoveryBegin, recoveryEnd, b.String())
	}
	//nolint:gosec // BENCHMARKS.md is a documentation file of the repository, readable by all.
	return os.WriteFile(path, []byte(doc), 0o644)
}
