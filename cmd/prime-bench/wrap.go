package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
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
	_ = cmd.Wait()
	rec := rssRecord{PID: cmd.Process.Pid, Start: start, End: time.Now(), ExitCode: cmd.ProcessState.ExitCode(),
		CPUMS: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Milliseconds()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rec.MaxRSSKB = ru.Maxrss
	}
	if logPath != "" {
		if f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil { //nolint:gosec // the log path the benchmark chose
			b, _ := json.Marshal(rec)
			_, _ = f.Write(append(b, '\n'))
			_ = f.Close()
		}
	}
	if rec.ExitCode < 0 {
		return 1
	}
	return rec.ExitCode
}

// readRSS reads the records of provider processes that ended after since.
func readRSS(path string, since time.Time) []rssRecord {
	b, err := os.ReadFile(path) //nolint:gosec // the log path the benchmark chose
	if err != nil {
		return nil
	}
	var out []rssRecord
	dec := json.NewDecoder(bytesReader(b))
	for {
		var r rssRecord
		if err := dec.Decode(&r); err != nil {
			break
		}
		if !r.End.Before(since) {
			out = append(out, r)
		}
	}
	return out
}
