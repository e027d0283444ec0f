package examples_test

import (
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// checkSetupOnce follows a setup_mode = "once" evaluation in the mock's
// event log: each of the templates (member key "template"; one per setup
// run) ran the setup's steps (setupSteps of them, open egress:
// checkFleetProtocol) and no agent; every
// other sandbox was restored from a checkpoint, ran no setup step, and ran
// agentSteps agent steps, the first only after its lists were enforced
// (checkFleetProtocol checks each step's enforced generation; this checks
// that there was a restricting write before it).
func checkSetupOnce(traces []*sandboxTrace, member map[*sandboxTrace]string, wantTemplates, setupSteps, agentSteps int) error {
	var problems []string
	templates := 0
	for _, tr := range traces {
		setups, agents := tr.count()
		if member[tr] == "template" {
			templates++
			if setups != setupSteps || agents != 0 {
				problems = append(problems, fmt.Sprintf("template %s: %d setup and %d agent steps, want %d and 0", tr.id, setups, agents, setupSteps))
			}
			continue
		}
		if setups != 0 || agents != agentSteps {
			problems = append(problems, fmt.Sprintf("member %s (%s): %d setup and %d agent steps, want 0 and %d (the setup ran once, in the template)",
				member[tr], tr.id, setups, agents, agentSteps))
		}
		restored, locked := false, false
		for _, e := range tr.events {
			switch {
			case e.Type == primemock.EventSandboxRestored:
				restored = true
			case e.Type == primemock.EventPolicyApplied && restrictsEgress(tr.policyAt(e.Generation)):
				locked = true
			case e.Type == primemock.EventCommandStarted && isStep(e) && !locked:
				problems = append(problems, fmt.Sprintf("member %s: %q started before its lists were enforced", member[tr], e.Command))
			}
		}
		if !restored {
			problems = append(problems, fmt.Sprintf("member %s (%s) was not restored from a checkpoint", member[tr], tr.id))
		}
	}
	if templates != wantTemplates {
		problems = append(problems, fmt.Sprintf("%d templates, want %d", templates, wantTemplates))
	}
	if len(problems) > 0 {
		return fmt.Errorf("setup once:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}
