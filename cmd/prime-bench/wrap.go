package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Peak RSS of the provider process. Terraform starts the provider through a
// symlink named terraform-provider-prime that points at this binary, with
// wrapTargetEnv naming the real provider. The wrapper runs the provider as
// its child with the same stdin, stdout (the go-plugin handshake line goes
// straight to Terraform), stderr, arguments and environment, forwards
// signals, and when the child exits appends the child's ru_maxrss
// (wait4(2) rusage: the kernel's high-water mark of its resident set, the
// VmHWM /proc/PID/status shows just before exit, in KiB) to wrapLogEnv's
// file. Unlike polling /proc, nothing between two samples can be missed,
// and the wrapper's own memory is not counted.
const (
	wrapTargetEnv = "PRIME_BENCH_WRAP_TARGET"
	wrapLogEnv    = "PRIME_BENCH_RSS_LOG"
)

// rssRecord is one provider process's life.
type rssRecord struct {
	PID      int       `json:"pid"`
	MaxRSSKB int64     `json:"maxrss_kb"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	ExitCode int       `json:"exit_code"`
	// CPUMS is the provider's user+system CPU time in milliseconds.
	CPUMS int64 `json:"cpu_ms"`
	// Live: the wrapper was killed before the provider exited, and this is
	// its last sample (End is when it was taken).
	Live bool `json:"live,omitempty"`
}

func wrapProvider(target, logPath string) int {
	cmd := exec.Command(target, os.Args[1:]...) //nolint:gosec,noctx // runs the provider binary the benchmark named, as Terraform would; lives as long as Terraform wants
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	env := []string{}
	for _, kv := range os.Environ() {
		if len(kv) >= len(wrapTargetEnv) && (kv[:len(wrapTargetEnv)] == wrapTargetEnv || kv[:len(wrapLogEnv)] == wrapLogEnv) {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	// Catch (not ignore: an ignored signal stays ignored across exec) what
	// Terraform or a user may send, and pass it on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		_, _ = os.Stderr.WriteString("prime-bench wrapper: " + err.Error() + "\n")
		return 1
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	// Terraform kills the process it started (this wrapper) when the
	// provider has not exited 2 s after it asked it to; a provider that
	// ends a 3,000-member apply takes longer than that on a loaded machine,
	// and then no record reached the log. So the wrapper also keeps a live
	// record of the child, VmHWM (a high-water mark: a later sample never
	// misses the peak) and CPU time, which readRSS takes when the final one
	// is missing.
	live := liveRecordPath(logPath, cmd.Process.Pid)
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(liveSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				writeLiveRecord(live, cmd.Process.Pid, start)
			}
		}
	}()
	_ = cmd.Wait()
	close(stopSampling)
	<-sampled
	rec := rssRecord{PID: cmd.Process.Pid, Start: start, End: time.Now(), ExitCode: cmd.ProcessState.ExitCode(),
		CPUMS: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Milliseconds()}
	rec.MaxRSSKB = maxRSSKB(cmd.ProcessState)
	if logPath != "" {
		if f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil { //nolint:gosec // the log path the benchmark chose
			b, _ := json.Marshal(rec)
			_, _ = f.Write(append(b, '\n'))
			_ = f.Close()
		}
		_ = os.Remove(live)
	}
	if rec.ExitCode < 0 {
		return 1
	}
	return rec.ExitCode
}

// liveSampleEvery is how often the wrapper records a running provider.
const liveSampleEvery = 250 * time.Millisecond

// liveRecordPath is where the wrapper keeps a running provider's record.
func liveRecordPath(logPath string, pid int) string {
	return fmt.Sprintf("%s.live-%d", logPath, pid)
}

// writeLiveRecord records the running child pid (End is now): its VmHWM
// and CPU time so far, from /proc.
func writeLiveRecord(path string, pid int, start time.Time) {
	if path == "" {
		return
	}
	rec := rssRecord{PID: pid, Start: start, End: time.Now(), ExitCode: -1, MaxRSSKB: procHWM(pid),
		CPUMS: processCPU(pid).Milliseconds(), Live: true}
	b, _ := json.Marshal(rec)
	tmp := path + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}

// procHWM is a process's VmHWM in KiB from /proc/PID/status (0 when it
// cannot be read).
func procHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)) //nolint:gosec // G703: a number under /proc
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// readRSS reads the records of provider processes that ended after since:
// the final ones, and the live ones of providers whose wrapper was killed
// before it could write one.
func readRSS(path string, since time.Time) []rssRecord {
	var out []rssRecord
	done := map[int]bool{}
	if b, err := os.ReadFile(path); err == nil { //nolint:gosec // the log path the benchmark chose
		dec := json.NewDecoder(bytesReader(b))
		for {
			var r rssRecord
			if err := dec.Decode(&r); err != nil {
				break
			}
			done[r.PID] = true
			if !r.End.Before(since) {
				out = append(out, r)
			}
		}
	}
	lives, _ := filepath.Glob(path + ".live-*")
	for _, l := range lives {
		if strings.HasSuffix(l, ".tmp") {
			continue
		}
		b, err := os.ReadFile(l) //nolint:gosec // a record the wrapper wrote
		var r rssRecord
		if err != nil || json.Unmarshal(b, &r) != nil || done[r.PID] || r.End.Before(since) {
			continue
		}
		out = append(out, r)
	}
	return out
}
