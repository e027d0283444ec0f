package shell

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell/shelltest"
)

// waitFile waits (bounded) for a file to hold a complete line.
func (b *shellBox) waitFile(p string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	data, err := b.m.fs.WaitFor(ctx, p, func(d []byte, exists bool) bool { return exists && strings.HasSuffix(string(d), "\n") })
	if err != nil {
		b.t.Fatalf("waiting for %s: %v", p, err)
	}
	return string(data)
}

func (b *shellBox) pids() []int {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	var out []int
	for pid := range b.m.procs {
		out = append(out, int(pid))
	}
	sort.Ints(out)
	return out
}

// TestShellProcesses: "$$" is the shell's pid (a subshell keeps it, sh -c
// has its own), "exit" in a subshell leaves only the subshell, and pids
// count up per machine.
func TestShellProcesses(t *testing.T) {
	b := newShellBox(t)
	stdout, stderr, code := b.run("echo $$; ( echo $$; exit 3 ); echo $?; sh -c 'echo $$; exit 4'; echo $?; bash -lc 'echo $$'")
	lines := strings.Fields(stdout)
	if code != 0 || stderr != "" || len(lines) != 6 {
		t.Fatalf("%q %q %d", stdout, stderr, code)
	}
	if lines[0] != "1000" || lines[1] != lines[0] || lines[2] != "3" || lines[4] != "4" {
		t.Errorf("pids and statuses: %v", lines)
	}
	sh, _ := strconv.Atoi(lines[3])
	bash, _ := strconv.Atoi(lines[5])
	if sh <= 1000 || bash <= sh {
		t.Errorf("sh -c and bash -c pids %d %d, want new ones after 1000", sh, bash)
	}
	if left := b.pids(); len(left) != 0 {
		t.Errorf("processes left: %v", left)
	}
	// A subshell's redirections hold for the whole list; exit inside it is
	// recorded by the next command.
	_, _, _ = b.run("( echo out; echo err >&2; exit 5 ) > /tmp/o 2> /tmp/e; echo $? > /tmp/x")
	if b.file("/tmp/o") != "out\n" || b.file("/tmp/e") != "err\n" || b.file("/tmp/x") != "5\n" {
		t.Errorf("subshell files: %q %q %q", b.file("/tmp/o"), b.file("/tmp/e"), b.file("/tmp/x"))
	}
	// sh reads a script file or its stdin; options it does not know fail.
	_ = b.m.fs.WriteFile("/tmp/s.sh", []byte("echo from file\n"), 0o755)
	if stdout, _, code := b.run("sh /tmp/s.sh; bash < /tmp/s.sh"); code != 0 || stdout != "from file\nfrom file\n" {
		t.Errorf("sh FILE: %q %d", stdout, code)
	}
	if _, stderr, code := b.run("sh -x -c true"); code != 2 || !strings.Contains(stderr, "-x") {
		t.Errorf("sh -x: %q %d", stderr, code)
	}
	// nohup and setsid run their command.
	if stdout, _, _ := b.run("nohup echo hi; setsid sh -c 'echo $$'; nohup"); !strings.HasPrefix(stdout, "hi\n") {
		t.Errorf("nohup, setsid: %q", stdout)
	}
}

// TestShellBackgroundAndKill: "&" returns at once (status 0, "$!" the
// child's pid), the child keeps running after the request's script ends,
// and kill signals a process, a group, or only tests with -0.
func TestShellBackgroundAndKill(t *testing.T) {
	b := newShellBox(t)
	stdout, stderr, code := b.run("sleep 3600 & echo $? $!")
	fields := strings.Fields(stdout)
	if code != 0 || stderr != "" || len(fields) != 2 || fields[0] != "0" {
		t.Fatalf("start: %q %q %d", stdout, stderr, code)
	}
	pid := fields[1]
	if _, stderr, code := b.run("kill -0 " + pid); code != 0 {
		t.Fatalf("kill -0 of the sleeper: %d %q", code, stderr)
	}
	if _, _, code := b.run("kill -TERM " + pid); code != 0 {
		t.Fatal("kill failed")
	}
	if d := b.waitBackground(); strconv.Itoa(int(d.pid)) != pid || d.out.Exit != 143 || d.out.Signal != SigTERM {
		t.Errorf("the sleeper ended %+v", d)
	}
	for _, tc := range []struct {
		script, stderr string
		exit           int
	}{
		{"kill " + pid, "bash: line 1: kill: (" + pid + ") - No such process\n", 1},
		{"kill -0 -- -4242", "bash: line 1: kill: (-4242) - No such process\n", 1},
		{"kill -0 $$", "", 0},
		{"kill -HUP $$", "bash: line 1: kill: HUP: prime-mock delivers only TERM, KILL and 0\n", 1},
		{"kill -NOPE 1", "bash: line 1: kill: NOPE: invalid signal specification\n", 1},
		{"kill x", "bash: line 1: kill: x: arguments must be process or job IDs\n", 1},
		{"kill", "bash: line 1: kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n", 2},
		{"kill -s KILL $$; echo never", "", 137},
		{"kill -9 $$", "", 137},
		{"trap 'echo trapped' TERM; kill $$; echo after", "", 0},
	} {
		_, stderr, code := b.run(tc.script)
		if stderr != tc.stderr || code != tc.exit {
			t.Errorf("%q: stderr %q exit %d, want %q %d", tc.script, stderr, code, tc.stderr, tc.exit)
		}
	}
	// A list in the background runs as a whole; its output to the
	// request's streams is dropped, its files are written.
	stdout, _, _ = b.run("echo a > /tmp/l && echo b >> /tmp/l && echo lost &")
	if stdout != "" {
		t.Errorf("background output reached the request: %q", stdout)
	}
	if d := b.waitBackground(); d.out.Exit != 0 || b.file("/tmp/l") != "a\nb\n" {
		t.Errorf("background list: %+v %q", d, b.file("/tmp/l"))
	}
}

// TestShellSDKBackgroundJob runs start_background_job's exact command: the
// job's output and status land in its canonical files.
func TestShellSDKBackgroundJob(t *testing.T) {
	b := newShellBox(t)
	b.m.hooks.SleepScale = func() float64 { return 0.0001 } // "sleep 1800" takes 0.18 s
	cmd := shelltest.SDKJobCommand("0a1b2c3d", `echo "$GREETING"; pwd; echo oops >&2; sleep 1800; exit 3`, "/tmp", [][2]string{{"GREETING", "it's me"}})
	stdout, stderr, code := b.run(cmd)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("start: %q %q %d", stdout, stderr, code)
	}
	if got := b.waitFile("/tmp/job_0a1b2c3d.exit"); got != "3\n" {
		t.Errorf("exit file %q", got)
	}
	if got := b.file("/tmp/job_0a1b2c3d.stdout.log"); got != "it's me\n/tmp\n" {
		t.Errorf("stdout log %q", got)
	}
	if got := b.file("/tmp/job_0a1b2c3d.stderr.log"); got != "oops\n" {
		t.Errorf("stderr log %q", got)
	}
	if d := b.waitBackground(); d.out.Exit != 0 || d.err != nil {
		t.Errorf("the job's sh: %+v", d)
	}
}

// TestShellWrapperJobKilled: the provider's setsid wrapper records the
// group's pgid; "kill -TERM -- -PGID" stops the sh and its subshell, so the
// exit file is never written.
func TestShellWrapperJobKilled(t *testing.T) {
	b := newShellBox(t)
	if _, stderr, code := b.run(shelltest.WrapperJobCommand("feedface", "echo started; sleep 3600", "/tmp")); code != 0 {
		t.Fatal(stderr)
	}
	pgid := strings.TrimSpace(b.waitFile("/tmp/job_feedface.pgid"))
	b.waitFile("/tmp/job_feedface.stdout.log")
	// The sh leads its group: its pid is the pgid; its subshell is in it.
	b.m.mu.Lock()
	var group []uint32
	for _, p := range b.m.procs {
		if strconv.Itoa(int(p.pgid)) == pgid {
			group = append(group, p.pid)
		}
	}
	leader := b.m.procs[uint32(mustAtoi(t, pgid))]
	b.m.mu.Unlock()
	if leader == nil || len(group) != 2 {
		t.Fatalf("group %s: %v (leader %v)", pgid, group, leader)
	}
	if _, stderr, code := b.run("kill -TERM -- -" + pgid); code != 0 {
		t.Fatalf("kill: %q", stderr)
	}
	if d := b.waitBackground(); d.out.Signal != SigTERM || d.out.Exit != 143 {
		t.Errorf("the job's sh ended %+v, want SIGTERM", d)
	}
	// The sh is reported first; its subshell ends at its own next step.
	gone := false
	for deadline := time.Now().Add(10 * time.Second); !gone && time.Now().Before(deadline); {
		if _, _, code := b.run("kill -0 -- -" + pgid + " 2>/dev/null"); code == 1 {
			gone = true
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !gone {
		t.Error("the group is still there")
	}
	if b.exists("/tmp/job_feedface.exit") {
		t.Errorf("the exit file was written: %q", b.file("/tmp/job_feedface.exit"))
	}
	if got := b.file("/tmp/job_feedface.stdout.log"); got != "started\n" {
		t.Errorf("stdout log %q", got)
	}
	// Killing only the subshell lets the sh record its status.
	if _, stderr, code := b.run(shelltest.WrapperJobCommand("cafebabe", "sleep 3600", "/tmp")); code != 0 {
		t.Fatal(stderr)
	}
	pgid = strings.TrimSpace(b.waitFile("/tmp/job_cafebabe.pgid"))
	b.m.mu.Lock()
	var sub uint32
	for _, p := range b.m.procs {
		if strconv.Itoa(int(p.pgid)) == pgid && strconv.Itoa(int(p.pid)) != pgid {
			sub = p.pid
		}
	}
	b.m.mu.Unlock()
	if sub == 0 {
		t.Fatal("no subshell in the group")
	}
	if _, _, code := b.run("kill " + strconv.Itoa(int(sub))); code != 0 {
		t.Fatal("kill of the subshell failed")
	}
	if got := b.waitFile("/tmp/job_cafebabe.exit"); got != "143\n" {
		t.Errorf("exit file after the subshell was killed: %q", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
