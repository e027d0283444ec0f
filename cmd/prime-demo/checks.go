package main

// The checks: the protocol's order on each sandbox's timeline, and day two's.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

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
