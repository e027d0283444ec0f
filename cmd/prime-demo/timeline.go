package main

// The timeline: the platform's events per sandbox, told apart by the configuration's paths and scripts.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

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

func compact(p *prime.EgressPolicy) string {
	b, _ := json.Marshal(p)
	return string(b)
}
