package main

// The setup-once part of the demo (examples/demo/setup_once.tf): one
// template runs the setup with the network open, its checkpoint is taken
// and the template paused, and every member is restored from it and
// restricted before its agent. Checked in the platform's event log next to
// the per-member rows: the setup ran once, on the template; every member
// was restored, ran no setup, and had its lists enforced before its agent
// started; every member's result shows the setup's files and the
// allowlist's reach.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// onceOutputs is examples/demo's setup_once output.
type onceOutputs struct {
	TemplateID   string             `json:"template_id"`
	CheckpointID string             `json:"checkpoint_id"`
	MemberIDs    map[string]string  `json:"member_ids"`
	Results      map[string]*result `json:"results"`
}

// onceReward is what a setup-once member's agent earns: its allowlist is
// example.com alone, so one page of two.
const onceReward = 0.5

func readOnceOutputs(ctx context.Context, ws *tfcli.Workspace) (*onceOutputs, error) {
	var o onceOutputs
	if err := outputJSON(ctx, ws, "setup_once", &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// sandboxes are the template, then the members in key order.
func (o *onceOutputs) sandboxes() []sandbox {
	out := []sandbox{{name: "once-template", id: o.TemplateID}}
	for _, k := range sortedKeys(o.MemberIDs) {
		out = append(out, sandbox{name: "once-" + k, id: o.MemberIDs[k]})
	}
	return out
}

// countSetups counts the setup's executions (started) on the given
// sandboxes.
func countSetups(events []primemock.Event, ids map[string]bool) int {
	n := 0
	for _, e := range events {
		if ids[e.SandboxID] && e.Type == primemock.EventCommandStarted && stepOf(e) == stepSetup {
			n++
		}
	}
	return n
}

// checkSetupOnce prints, and returns as an error, what setup once must
// show: one setup execution, on the template (against one per per-member
// row), the template paused only after its checkpoint was DURABLE, and on
// every member: restored from the checkpoint, no setup, a restricting
// policy enforced before its agent's job started (once), under it.
func checkSetupOnce(events []primemock.Event, o *onceOutputs, perMember []sandbox) error {
	var problems []error
	fail := func(name string, err error) {
		fmt.Printf("  FAIL  %-14s %v\n", name, err)
		problems = append(problems, fmt.Errorf("setup once, %s: %w", name, err))
	}
	rowIDs := map[string]bool{}
	for _, sb := range perMember {
		rowIDs[sb.id] = true
	}
	onceIDs := map[string]bool{o.TemplateID: true}
	for _, id := range o.MemberIDs {
		onceIDs[id] = true
	}
	perMemberSetups := countSetups(events, rowIDs)
	if n := countSetups(events, onceIDs); n != 1 {
		fail("setup", fmt.Errorf("the setup ran %d times for %d members, want once (on the template)", n, len(o.MemberIDs)))
	} else if countSetups(events, map[string]bool{o.TemplateID: true}) != 1 {
		fail("setup", errors.New("the setup ran on a member, not on the template"))
	} else {
		fmt.Printf("  ok    %-14s the setup ran once, on the template, for %d members (per member: %d runs for %d sandboxes)\n",
			"setup", len(o.MemberIDs), perMemberSetups, len(perMember))
	}
	if err := checkTemplatePaused(events, o); err != nil {
		fail("template", err)
	} else {
		fmt.Printf("  ok    %-14s paused once its checkpoint %s was DURABLE\n", "template", o.CheckpointID)
	}
	tls := timelines(events)
	for _, k := range sortedKeys(o.MemberIDs) {
		name := "once-" + k
		tl := tls[o.MemberIDs[k]]
		if tl == nil {
			fail(name, errors.New("no events"))
			continue
		}
		gen, err := tl.checkRestoredLocked()
		if err == nil {
			err = checkOnceResult(o.Results[k])
		}
		if err != nil {
			fail(name, err)
			continue
		}
		fmt.Printf("  ok    %-14s restored from the checkpoint, restricted (generation %d) before its agent; setup's files there, reward %.2g\n",
			name, gen, onceReward)
	}
	return errors.Join(problems...)
}

// checkTemplatePaused: the template's pause was requested only after the
// checkpoint was DURABLE.
func checkTemplatePaused(events []primemock.Event, o *onceOutputs) error {
	durable, paused := int64(-1), int64(-1)
	for _, e := range events {
		switch {
		case e.Type == primemock.EventCheckpointState && e.CheckpointID == o.CheckpointID && e.State == prime.CheckpointDurable && durable < 0:
			durable = e.Seq
		case e.Type == primemock.EventPauseRequested && e.SandboxID == o.TemplateID && paused < 0:
			paused = e.Seq
		}
	}
	switch {
	case durable < 0:
		return fmt.Errorf("checkpoint %s never became DURABLE", o.CheckpointID)
	case paused < 0:
		return errors.New("the template was not paused")
	case paused < durable:
		return errors.New("the template's pause was requested before its checkpoint was DURABLE")
	}
	return nil
}

// checkRestoredLocked: the member was restored from a checkpoint, ran no
// setup, and its agent's job started once, with a restricting generation
// enforced that was enforced before it; it returns that generation. The
// lists are the create's (generation 0) where the platform takes them with
// a restore, else a write right after it.
func (tl *timeline) checkRestoredLocked() (int64, error) {
	restored, lockGen, lockApplied, agentStart, agents := false, int64(-1), -1, -1, 0
	if tl.born != nil && !tl.born.IsOpen() {
		lockGen = 0
	}
	for i, e := range tl.events {
		switch {
		case e.Type == primemock.EventSandboxRestored:
			restored = true
		case e.Type == primemock.EventPolicyPut && e.Policy != nil && !e.Policy.IsOpen() && lockGen < 0:
			lockGen = e.Generation
		case e.Type == primemock.EventPolicyApplied && lockGen >= 0 && e.Generation >= lockGen && lockApplied < 0:
			lockApplied = i
		case e.Type == primemock.EventCommandStarted && stepOf(e) == stepSetup:
			return -1, errors.New("a setup step ran on a member: the setup belongs to the template")
		case e.Type == primemock.EventCommandStarted && stepOf(e) == stepAgent:
			agents++
			agentStart = i
			if open, known := tl.openAt(e.AppliedGeneration); open || !known {
				return -1, fmt.Errorf("the agent started with generation %d enforced, which does not restrict", e.AppliedGeneration)
			}
		}
	}
	switch {
	case !restored:
		return -1, errors.New("not restored from a checkpoint")
	case lockGen < 0 || lockApplied < 0:
		return -1, errors.New("its lists were never enforced")
	case agents != 1:
		return -1, fmt.Errorf("the agent started %d times, want once", agents)
	case agentStart < lockApplied:
		return -1, fmt.Errorf("the agent started before its lists (generation %d) were enforced", lockGen)
	}
	return lockGen, nil
}

// checkOnceResult: the member's agent found the setup's files (they came
// with the checkpoint) and reached what its allowlist lets through.
func checkOnceResult(r *result) error {
	switch {
	case r == nil:
		return errors.New("its agent wrote no result")
	case !r.SetupRan:
		return errors.New("the setup's files are missing: the member was not restored from the set-up template")
	case !r.Reached[routeHost] || !r.Reached["example.com"] || r.Reached["google.com"]:
		return fmt.Errorf("reached %v, want the route and example.com only", r.Reached)
	case r.Reward != onceReward:
		return fmt.Errorf("reward %v, want %v", r.Reward, onceReward)
	}
	return nil
}

// checkNoCheckpoints: destroy left no checkpoint stored (the template's,
// nor the one its pause took).
func checkNoCheckpoints(ctx context.Context, mockURL string) error {
	c, err := prime.New(prime.Options{Config: prime.Config{APIKey: "demo-key", BaseURL: mockURL}})
	if err != nil {
		return err
	}
	cks, err := c.ListCheckpoints(ctx, prime.ListCheckpointsOptions{})
	if err != nil {
		return err
	}
	if len(cks) > 0 {
		ids := make([]string, 0, len(cks))
		for _, ck := range cks {
			ids = append(ids, ck.ID+" "+ck.State)
		}
		sort.Strings(ids)
		return fmt.Errorf("%d checkpoints left after destroy: %v", len(cks), ids)
	}
	return nil
}
