package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// NeverApplyRun applies sandbox → setup → policy (short create timeout) →
// agent on a mock whose data plane never applies policies, and checks that
// the apply fails closed: no policy in state, nothing applied on the
// platform, no agent command executed.
func (r *Runner) NeverApplyRun(ctx context.Context, n int, policyTimeout string) *Report {
	rep := &Report{Name: fmt.Sprintf("never-apply fleet: N=%d sandbox → setup → policy (timeouts.create = %s) → agent, -parallelism=%d",
		n, policyTimeout, r.Parallelism)}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	ws, err := r.prepare(ctx, "never-apply", primemock.ConfigPatch{NeverApply: Bool(true)},
		Fleet{N: n, Setup: true, Agent: true, PolicyCreateTimeout: policyTimeout})
	if !rep.CheckErr("prepare workspace and mock", err) {
		return rep
	}
	r.knobsNote(ctx, rep)

	r.logf("never-apply run: terraform apply (N=%d), expected to fail", n)
	apply := ws.Run(ctx, r.tfArgs("apply")...)
	rep.Check("terraform apply fails", apply.Err == nil && apply.ExitCode == 1, "%s", apply.Describe())
	notEnforced := strings.Count(apply.Output, "Error: Egress policy not enforced")
	allErrors := strings.Count(apply.Output, "Error: ")
	rep.Check("every policy failed with \"Egress policy not enforced\"", notEnforced == n,
		"%d such errors for N = %d (%d errors in all)", notEnforced, n, allErrors)
	if notEnforced != n {
		rep.Note("apply output: %s", apply.Tail(3000))
	}

	state, err := ws.State(ctx)
	if rep.CheckErr("read state (terraform show -json)", err) {
		count := map[string]int{}
		for _, res := range state {
			count[res.Type]++
		}
		agents := 0
		for _, res := range state {
			if res.Type == "prime_sandbox_command" && strings.HasPrefix(res.Name, "agent") {
				agents++
			}
		}
		rep.Check("no policy in state", count["prime_egress_policy"] == 0, "%d prime_egress_policy in state", count["prime_egress_policy"])
		rep.Check("no agent command in state", agents == 0, "%d agent commands in state", agents)
		rep.Check("every sandbox and setup command in state", count["prime_sandbox"] == n && count["prime_sandbox_command"]-agents == n,
			"%d sandboxes, %d setup commands, N = %d", count["prime_sandbox"], count["prime_sandbox_command"]-agents, n)
	}

	evs, err := r.Mock.Events(ctx, 0)
	if rep.CheckErr("read /_mock/events", err) {
		applied, puts, agentRuns, setupRuns := 0, map[string]bool{}, 0, 0
		agentCmds, setupCmds := map[string]bool{}, map[string]bool{}
		for i := 0; i < n; i++ {
			agentCmds[AgentCommand(i)] = true
			setupCmds[SetupCommand(i)] = true
		}
		for _, e := range evs {
			switch e.Type {
			case primemock.EventPolicyApplied:
				applied++
			case primemock.EventPolicyPut:
				puts[e.SandboxID] = true
			case primemock.EventCommandExecuted:
				if agentCmds[e.Command] {
					agentRuns++
				}
				if setupCmds[e.Command] {
					setupRuns++
				}
			}
		}
		rep.Check("every policy was requested (PUT accepted) but none applied", len(puts) == n && applied == 0,
			"%d sandboxes got a PUT, %d policy_applied events", len(puts), applied)
		rep.Check("no agent command executed", agentRuns == 0, "%d command_executed events for agent commands", agentRuns)
		rep.Check("every setup command executed (they precede the policy)", setupRuns == n, "%d setup executions, N = %d", setupRuns, n)
		live := LiveSandboxes(evs)
		var notMinus1 []string
		for id := range live {
			if re, err := r.Mock.Reachable(ctx, id, "example.com"); err != nil || re.AppliedGeneration != -1 {
				notMinus1 = append(notMinus1, id)
			}
		}
		rep.Check("no applied generation on any sandbox (applied_generation = -1)", len(notMinus1) == 0 && len(live) == n,
			"%d live sandboxes, %d with an applied generation", len(live), len(notMinus1))
	}

	r.logf("never-apply run: terraform destroy")
	r.destroyAndCheck(ctx, ws, rep, 0)
	r.faultNote(ctx, rep)
	return rep
}
