package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
	"github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb/commandsessionpbconnect"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell"
)

// TestMain lets the test binary act as prime-mock itself: a child started
// with runAsMain set runs main(), so the signal test exercises the real
// process, signal handling and exit status without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv(runAsMain) == "1" {
		os.Args = append([]string{"prime-mock"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const runAsMain = "PRIME_MOCK_TEST_RUN_MAIN"

// allFlags sets every knob flag to a value other than its default; want is
// what GET /_mock/config must then report.
var allFlags = []string{
	"-boot-delay", "20ms", "-apply-delay", "30ms", "-image-build-delay", "40ms", "-never-apply",
	"-latency", "1ms", "-latency-jitter", "2ms", "-fail-rate", "0.0001", "-throttle-rate", "0.0002",
	"-retry-after", "3s", "-api-key", "k", "-seed", "7", "-token-ttl", "5m",
	"-gateway-lag", "0", "-keepalive-interval", "150ms",
	"-sleep-scale", "0.5", "-read-file-limit", "2048", "-upload-fail-rate", "0.0003", "-download-fail-rate", "0.0004",
	"-job-batch-unsupported", "-egress-put-answer", "minimal", "-rate-limits=false", "-rate-limit-scale", "2",
	"-clock-rate", "60", "-validation-errors", "errors", "-team-member", "t1=k", "-team-member", "t1=k2",
	"-checkpoint-freeze-delay", "11ms", "-checkpoint-durable-delay", "12ms", "-checkpoint-fail-rate", "0.25",
	"-restore-delay", "13ms", "-pause-delay", "14ms", "-resume-delay", "15ms", "-resume-limit", "4",
	"-image-without-vm", "me/a:1,me/b:2", "-image-without-vm", "c:3", "-vm-build-delay", "16ms", "-network-default-allow",
}

var allFlagsConfig = map[string]any{
	"boot_delay": "20ms", "apply_delay": "30ms", "image_build_delay": "40ms", "never_apply": true,
	"latency": "1ms", "latency_jitter": "2ms", "fail_rate": 0.0001, "throttle_rate": 0.0002,
	"retry_after": "3s", "seed": 7.0, "token_ttl": "5m0s", "gateway_lag": "0s", "keepalive_interval": "150ms",
	"sleep_scale": 0.5, "read_file_limit": 2048.0, "upload_fail_rate": 0.0003, "download_fail_rate": 0.0004,
	"job_batch_unsupported": true, "egress_put_answer": "minimal", "rate_limits": false, "rate_limit_scale": 2.0,
	"clock_rate": 60.0, "validation_errors": "errors", "team_members": map[string]any{"t1": []any{"k", "k2"}},
	"checkpoint_freeze_delay": "11ms", "checkpoint_durable_delay": "12ms", "checkpoint_fail_rate": 0.25,
	"restore_delay": "13ms", "pause_delay": "14ms", "resume_delay": "15ms", "resume_limit": 4.0,
	"images_without_vm": []any{"me/a:1", "me/b:2", "c:3"}, "vm_build_delay": "16ms", "network_default_allow": true,
	// -gateway-outage is left out here (an outage would stop the Connect
	// command below); TestRunGatewayOutageFlag covers it.
	"gateway_outage": "0s",
}

// getConfig reads GET /_mock/config.
func getConfig(t *testing.T, client *http.Client, base string) map[string]any {
	t.Helper()
	resp, err := client.Get(base + "/_mock/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cfg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestExecutableServesAndStopsOnSIGINT(t *testing.T) {
	cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0"}, allFlags...)...)
	cmd.Env = append(os.Environ(), runAsMain+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})

	// The first stdout line announces the address.
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() { // drain, so the child never blocks on a full pipe
		}
		done <- cmd.Wait()
	}()
	var first string
	select {
	case first = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatalf("no first line; stderr: %s", stderr.String())
	}
	base, ok := strings.CutPrefix(first, "listening on ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line = %q", first)
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/sandbox", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || list["total"] != 0.0 {
		t.Fatalf("list: %d %v %v", resp.StatusCode, list, err)
	}
	// Every knob arrived.
	cfg := getConfig(t, http.DefaultClient, base)
	if len(cfg) != len(allFlagsConfig) {
		t.Errorf("config has %d knobs, the test sets %d: %v", len(cfg), len(allFlagsConfig), cfg)
	}
	for k, want := range allFlagsConfig {
		if !reflect.DeepEqual(cfg[k], want) {
			t.Errorf("%s = %#v, want %#v (from the flag)", k, cfg[k], want)
		}
	}
	// HTTP/2 without TLS (prior knowledge) is served too.
	h2 := &http.Transport{Protocols: new(http.Protocols)}
	h2.Protocols.SetUnencryptedHTTP2(true)
	if resp, err := (&http.Client{Transport: h2}).Get(base + "/_mock/stats"); err != nil || resp.ProtoMajor != 2 {
		t.Errorf("HTTP/2 prior knowledge: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The API key arrived: a wrong key is refused.
	req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/sandbox", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A command running over Connect when the signal arrives: the mock
	// stops it, and its stream ends with not_found instead of being cut.
	streamErr := startLongCommand(t, base)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-streamErr; connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("the running command's stream after SIGINT: %v, want not_found", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGINT")
	}
}

// startLongCommand creates a VM, starts "sleep 3600" over Connect and
// returns the stream's final error once it ends.
func startLongCommand(t *testing.T, base string) <-chan error {
	t.Helper()
	api := func(method, path string) map[string]any {
		req, _ := http.NewRequest(method, base+"/api/v1"+path, strings.NewReader(`{"name":"n","docker_image":"i"}`))
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %v %v", method, path, resp.StatusCode, out, err)
		}
		return out
	}
	id := api("POST", "/sandbox")["id"].(string)
	auth := api("POST", "/sandbox/"+id+"/auth")
	client := commandsessionpbconnect.NewCommandSessionClient(http.DefaultClient,
		auth["gateway_url"].(string)+"/"+auth["user_ns"].(string)+"/"+auth["job_id"].(string))
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		for {
			req := connect.NewRequest(&commandsessionpb.StartRequest{
				Command: &commandsessionpb.CommandSpec{Cmd: "/bin/bash", Args: []string{"-c", "echo up; sleep 3600"}},
			})
			req.Header().Set("Authorization", "Bearer "+auth["token"].(string))
			stream, err := client.Start(context.Background(), req)
			if err != nil {
				errc <- err
				return
			}
			got := false
			for stream.Receive() {
				if !got && string(stream.Msg().GetEvent().GetData().GetStdout()) == "up\n" {
					got = true
					close(started)
				}
			}
			err = stream.Err()
			stream.Close()
			// Until the sandbox runs and the gateway knows it, retry as the
			// SDK's reachability wait does.
			if !got && (connect.CodeOf(err) == connect.CodeUnavailable || connect.CodeOf(err) == connect.CodeNotFound) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if !got {
				close(started)
			}
			errc <- err
			return
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the command never started")
	}
	return errc
}

func TestRunRejectsBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{
		{"-fail-rate", "2"}, {"-nope"}, {"extra"}, {"-gateway-lag", "-1s"}, {"-keepalive-interval", "0"},
		{"-sleep-scale", "0"}, {"-read-file-limit", "0"}, {"-upload-fail-rate", "1.5"}, {"-download-fail-rate", "-1"},
		{"-gateway-outage", "-1s"}, {"-egress-put-answer", "nope"}, {"-rate-limit-scale", "0"},
		{"-checkpoint-fail-rate", "1.5"}, {"-resume-limit", "-1"}, {"-pause-delay", "-1s"},
	} {
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
	if err := run(context.Background(), []string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestHelpListsTheShellSubset: -h documents what the mock's shell runs
// and what it refuses, after the flags, and points to the conformance
// table, which exists.
func TestHelpListsTheShellSubset(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := errOut.String()
	for _, want := range []string{"Usage of prime-mock", "-boot-delay", shell.Subset, "prime-mock does not support",
		"docs/guides/prime-mock.md", "-rate-limits=false", "/_mock/clock"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h output lacks %q:\n%s", want, help)
		}
	}
	if _, err := os.Stat("../../templates/guides/prime-mock.md.tmpl"); err != nil {
		t.Errorf("-h points to a conformance table that is not there: %v", err)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, &bytes.Buffer{})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on http://") {
		t.Fatalf("first line %q, %v", line, err)
	}
	// Without flags, the knobs are the documented defaults.
	cfg := getConfig(t, http.DefaultClient, strings.TrimSpace(strings.TrimPrefix(line, "listening on ")))
	for k, want := range map[string]any{
		"boot_delay": "100ms", "apply_delay": "50ms", "image_build_delay": "200ms", "never_apply": false,
		"latency": "0s", "latency_jitter": "0s", "fail_rate": 0.0, "throttle_rate": 0.0, "retry_after": "1s",
		"token_ttl": "10m0s", "gateway_lag": "300ms", "keepalive_interval": "2s",
		"sleep_scale": 1.0, "read_file_limit": 10485760.0, "upload_fail_rate": 0.0, "download_fail_rate": 0.0,
		"gateway_outage": "0s", "job_batch_unsupported": false,
	} {
		if cfg[k] != want {
			t.Errorf("default %s = %#v, want %#v", k, cfg[k], want)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

// TestRunGatewayOutageFlag: -gateway-outage fails the gateway from the
// start, for that long; the rest of the API answers.
func TestRunGatewayOutageFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-gateway-outage", "1h"}, pw, &bytes.Buffer{})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	left, err := time.ParseDuration(getConfig(t, http.DefaultClient, base)["gateway_outage"].(string))
	if err != nil || left <= 59*time.Minute {
		t.Errorf("gateway_outage = %s %v, want about 1h", left, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/gateway/ns/job/read-file?path=/f", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a gateway request during the outage: %d, want 503", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/sandbox", nil)
	req.Header.Set("Authorization", "Bearer k")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the API during the outage: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
