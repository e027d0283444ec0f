package main

// The configuration's outputs: each row's scenario, result and expected reward, and the reward table.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

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

func readOutputs(ctx context.Context, ws *tfcli.Workspace) (*outputs, error) {
	o := &outputs{}
	for name, v := range map[string]any{
		"sandbox_ids": &o.SandboxIDs, "scenarios": &o.Scenarios, "results": &o.Results,
		"expected_reachability": &o.Expected,
	} {
		if err := outputJSON(ctx, ws, name, v); err != nil {
			return nil, err
		}
	}
	if err := outputJSON(ctx, ws, "results", &o.Raw); err != nil {
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

func outputJSON(ctx context.Context, ws *tfcli.Workspace, name string, v any) error {
	res := ws.Run(ctx, "output", "-json", name)
	if err := res.Check(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return json.Unmarshal([]byte(res.Output), v) // `output` loads no provider, so prints no warning
}
