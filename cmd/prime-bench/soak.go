package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

func soakMain(args []string) error {
	fs := flag.NewFlagSet("prime-bench soak", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding terraform-provider-prime and prime-mock")
	terraform := fs.String("terraform", envOr("TF_CLI", "terraform"), "Terraform CLI")
	n := fs.Int("n", 100, "sandboxes (each with a policy) in the fault-injected run")
	p := fs.Int("parallelism", 20, "terraform -parallelism of the fault-injected and never-apply runs")
	failRate := fs.Float64("fail-rate", 0.10, "mock: probability of an injected 503")
	throttleRate := fs.Float64("throttle-rate", 0.05, "mock: probability of an injected 429")
	latency := fs.Duration("latency", 5*time.Millisecond, "mock: latency per API request")
	jitter := fs.Duration("jitter", 20*time.Millisecond, "mock: latency jitter [0, jitter)")
	boot := fs.Duration("boot", time.Second, "mock: boot delay (fault-injected and never-apply runs)")
	apply := fs.Duration("apply", 500*time.Millisecond, "mock: egress apply delay")
	neverN := fs.Int("never-apply-n", 20, "sandboxes in the never-apply run")
	policyTimeout := fs.String("policy-timeout", "3s", "timeouts.create of the policies in the never-apply run")
	killN := fs.Int("kill-n", 20, "sandboxes in the kill and interrupt runs")
	killBoot := fs.Duration("kill-boot", 2*time.Second, "mock boot delay in the kill and interrupt runs")
	killP := fs.Int("kill-parallelism", 10, "terraform -parallelism of the kill and interrupt runs")
	runsFlag := fs.String("runs", "fault,never-apply,kill,interrupt", "scenarios to run, comma-separated")
	rateLimits := fs.Bool("rate-limits", false, "mock: enforce the platform's published rate limits (429s) beside the injected ones")
	strictKill := fs.Bool("strict-kill", false, "fail the SIGKILL run when sandboxes leak (by default leaks are measured and reported)")
	seed := fs.Int64("seed", 0, "mock random seed (0: time-based, printed)")
	workdir := fs.String("workdir", "", "work directory (default: a temporary one, removed unless -keep or a failure)")
	keep := fs.Bool("keep", false, "keep the work directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	dir := *workdir
	if dir == "" {
		d, err := os.MkdirTemp("", "prime-soak-")
		if err != nil {
			return err
		}
		dir = d
	}
	provider, err := filepath.Abs(filepath.Join(*bin, "terraform-provider-prime"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(provider); err != nil {
		return fmt.Errorf("provider binary: %w (run make build)", err)
	}

	mockArgs := []string{
		"-fail-rate", strconv.FormatFloat(*failRate, 'g', -1, 64),
		"-throttle-rate", strconv.FormatFloat(*throttleRate, 'g', -1, 64),
		"-latency", latency.String(), "-latency-jitter", jitter.String(),
		"-boot-delay", boot.String(), "-apply-delay", apply.String(),
		"-seed", strconv.FormatInt(*seed, 10), "-rate-limits=" + strconv.FormatBool(*rateLimits),
	}
	mock, err := soak.StartMockProcess(filepath.Join(*bin, "prime-mock"), mockArgs...)
	if err != nil {
		return err
	}
	defer mock.Close()
	fmt.Printf("prime-mock %s (pid %d) at %s; replay with -seed %d\nwork directory %s\n",
		strings.Join(mockArgs, " "), mock.PID(), mock.URL, *seed, dir)

	r := &soak.Runner{
		Terraform:   *terraform,
		ProviderDir: filepath.Dir(provider),
		WorkRoot:    dir,
		Mock:        mock,
		Parallelism: *p,
		Knobs: primemock.ConfigPatch{
			BootDelay: soak.D(*boot), ApplyDelay: soak.D(*apply),
			Latency: soak.D(*latency), LatencyJitter: soak.D(*jitter),
			FailRate: soak.F64(*failRate), ThrottleRate: soak.F64(*throttleRate),
		},
		Logf: func(format string, args ...any) {
			fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		},
	}
	ctx := context.Background()
	var reports []*soak.Report
	for _, name := range strings.Split(*runsFlag, ",") {
		var rep *soak.Report
		switch strings.TrimSpace(name) {
		case "fault":
			rep = r.FaultRun(ctx, *n)
		case "never-apply":
			rep = r.NeverApplyRun(ctx, *neverN, *policyTimeout)
		case "kill", "interrupt":
			sig := syscall.SIGKILL
			if strings.TrimSpace(name) == "interrupt" {
				sig = syscall.SIGINT
			}
			kr := *r
			kr.Parallelism = *killP
			kr.Knobs.BootDelay = soak.D(*killBoot)
			rep = kr.KillRun(ctx, *killN, sig, *strictKill)
		case "":
			continue
		default:
			return fmt.Errorf("unknown scenario %q (fault, never-apply, kill, interrupt)", name)
		}
		fmt.Print("\n" + rep.String() + "\n")
		reports = append(reports, rep)
	}

	failed := 0
	fmt.Println("==== soak summary")
	for _, rep := range reports {
		verdict := "PASS"
		if !rep.Passed() {
			verdict = "FAIL"
			failed++
		}
		fmt.Printf("  %s  %s (%s)\n", verdict, rep.Name, rep.Duration.Round(100*time.Millisecond))
		for _, c := range rep.Failures() {
			fmt.Printf("        failed: %s: %s\n", c.Name, c.Detail)
		}
	}
	if failed > 0 || *keep {
		fmt.Printf("work directory kept: %s (terraform.log in each scenario's directory)\n", dir)
	} else if *workdir == "" {
		_ = os.RemoveAll(dir)
	}
	if failed > 0 {
		fmt.Printf("SOAK FAIL: %d of %d scenarios failed\n", failed, len(reports))
		return fmt.Errorf("%d of %d soak scenarios failed", failed, len(reports))
	}
	fmt.Printf("SOAK PASS: %d scenarios\n", len(reports))
	return nil
}
