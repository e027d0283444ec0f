// Command demo runs examples/demo end to end against prime-mock: start the
// mock on a free loopback port, apply the fleet through a dev_overrides CLI
// configuration, print the outputs and the platform's event timeline per
// sandbox, destroy everything and stop the mock. `make demo` runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
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
	absProvider, err := filepath.Abs(*providerDir)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "prime-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	if err := copyTF(*configDir, work); err != nil {
		return err
	}
	rc := filepath.Join(work, "dev.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "primeintellect/prime" = %q
  }
  direct {}
}
`, absProvider)), 0o600); err != nil {
		return err
	}

	banner("Starting prime-mock (an in-memory Prime API)")
	mock, url, err := startMock(ctx, *mockBin, "-addr", "127.0.0.1:0", "-boot-delay", *boot, "-apply-delay", *apply)
	if err != nil {
		return err
	}
	defer stopMock(mock)
	fmt.Println("prime-mock listening on", url)

	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"PRIME_API_BASE_URL="+url, "PRIME_API_KEY=demo-key",
	)
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
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = work, env, os.Stdout, os.Stderr
		return cmd.Run()
	}

	banner("terraform apply: sandboxes -> setup -> egress policies -> agent probes")
	start := time.Now()
	if err := terraform("apply", "-auto-approve", "-input=false", "-compact-warnings"); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	fmt.Printf("\napply took %s\n", time.Since(start).Round(10*time.Millisecond))

	banner("Outputs")
	if err := terraform("output"); err != nil {
		return err
	}
	names, err := sandboxNames(ctx, cli, work, env)
	if err != nil {
		return err
	}
	banner("What the platform saw, per sandbox (prime-mock /_mock/events)")
	if err := printTimeline(ctx, url, names); err != nil {
		return err
	}

	banner("terraform destroy")
	if err := terraform("destroy", "-auto-approve", "-input=false", "-compact-warnings"); err != nil {
		return fmt.Errorf("destroy: %w", err)
	}
	var stats struct {
		SandboxesCreated int `json:"sandboxes_created"`
		LiveSandboxes    int `json:"live_sandboxes"`
	}
	if err := getJSON(ctx, url+"/_mock/stats", &stats); err != nil {
		return err
	}
	fmt.Printf("\n%d sandboxes created, %d left running.\n", stats.SandboxesCreated, stats.LiveSandboxes)
	if stats.LiveSandboxes != 0 {
		return errors.New("sandboxes leaked")
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

// startMock runs prime-mock and reads its first line, "listening on URL".
func startMock(ctx context.Context, bin string, args ...string) (*exec.Cmd, string, error) {
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // G204: the mock binary make built
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting %s: %w (run make build first)", bin, err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("reading prime-mock's address: %w", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("unexpected first line from prime-mock: %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd, url, nil
}

func stopMock(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
	}
}

// sandboxNames maps sandbox IDs to the demo's scenario keys.
func sandboxNames(ctx context.Context, cli, dir string, env []string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, cli, "output", "-json", "sandbox_ids")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reading sandbox_ids: %w", err)
	}
	byKey := map[string]string{}
	if err := json.Unmarshal(out, &byKey); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for k, id := range byKey {
		names[id] = k
	}
	return names, nil
}

type event struct {
	Seq               int64           `json:"seq"`
	Time              time.Time       `json:"time"`
	Type              string          `json:"type"`
	SandboxID         string          `json:"sandbox_id"`
	Status            string          `json:"status"`
	Generation        int64           `json:"generation"`
	Policy            json.RawMessage `json:"policy"`
	Command           string          `json:"command"`
	ExitCode          int             `json:"exit_code"`
	AppliedGeneration int64           `json:"applied_generation"`
}

func printTimeline(ctx context.Context, url string, names map[string]string) error {
	var events []event
	var wrapped struct {
		Events []event `json:"events"`
	}
	raw, err := getRaw(ctx, url+"/_mock/events")
	if err != nil {
		return err
	}
	if json.Unmarshal(raw, &wrapped) == nil && wrapped.Events != nil {
		events = wrapped.Events
	} else if err := json.Unmarshal(raw, &events); err != nil {
		return fmt.Errorf("decoding events: %w", err)
	}
	bySandbox := map[string][]event{}
	for _, e := range events {
		bySandbox[e.SandboxID] = append(bySandbox[e.SandboxID], e)
	}
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return names[ids[i]] < names[ids[j]] })
	for _, id := range ids {
		evs := bySandbox[id]
		if len(evs) == 0 {
			continue
		}
		fmt.Printf("%s (%s)\n", names[id], id)
		t0 := evs[0].Time
		for _, e := range evs {
			// The PUT's own answer reports the open generation 0 as applied;
			// that is not news for the timeline.
			if e.Type == "policy_observed" && e.Generation == 0 {
				continue
			}
			fmt.Printf("  +%6.2fs  %s\n", e.Time.Sub(t0).Seconds(), describe(e))
		}
		fmt.Println()
	}
	return nil
}

func describe(e event) string {
	switch e.Type {
	case "policy_put":
		return fmt.Sprintf("egress policy written   generation %d  %s", e.Generation, compact(e.Policy))
	case "policy_applied":
		return fmt.Sprintf("egress policy enforced  generation %d", e.Generation)
	case "policy_observed":
		return fmt.Sprintf("provider saw it enforced (generation %d)", e.Generation)
	case "command_executed":
		return fmt.Sprintf("command  %-34q exit %d  (enforced policy: generation %d)", e.Command, e.ExitCode, e.AppliedGeneration)
	default:
		s := strings.ReplaceAll(e.Type, "_", " ")
		if e.Status != "" {
			s += "  " + e.Status
		}
		return s
	}
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func getRaw(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func getJSON(ctx context.Context, url string, v any) error {
	raw, err := getRaw(ctx, url)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
