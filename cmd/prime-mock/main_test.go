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
	"strings"
	"syscall"
	"testing"
	"time"
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

func TestExecutableServesAndStopsOnSIGINT(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-boot-delay", "20ms", "-api-key", "k", "-seed", "1")
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
	// The knobs arrived: a wrong key is refused.
	req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/sandbox", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
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

func TestRunRejectsBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{{"-fail-rate", "2"}, {"-nope"}, {"extra"}} {
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
	if err := run(context.Background(), []string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
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
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}
