package prime

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/primeintellect/terraform-provider-prime/internal/commandsession/commandsessionpb"
)

func TestNewJobID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewJobID()
		if !jobIDPattern.MatchString(id) || seen[id] {
			t.Fatalf("NewJobID() = %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
	j := Job{SandboxID: "sb", ID: "0123abcd"}
	if j.StdoutPath() != "/tmp/job_0123abcd.stdout.log" || j.StderrPath() != "/tmp/job_0123abcd.stderr.log" ||
		j.ExitPath() != "/tmp/job_0123abcd.exit" || j.PGIDPath() != "/tmp/job_0123abcd.pgid" {
		t.Errorf("paths %s %s %s %s", j.StdoutPath(), j.StderrPath(), j.ExitPath(), j.PGIDPath())
	}
}

func TestStartJobCommandAndEnvironment(t *testing.T) {
	const secret = "tok-secret-9876"
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, rec := g.client(nil)
	job := Job{SandboxID: "sb-1", ID: "0123abcd"}
	err := c.StartJob(context.Background(), job, JobRequest{
		Command: "python train.py --out 'my dir'", WorkingDir: "/work/my repo",
		Env: map[string]string{"MODE": "fast"}, SensitiveEnv: map[string]string{"API_TOKEN": secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartJob(context.Background(), Job{SandboxID: "sb-1", ID: "89abcdef"}, JobRequest{Command: "sleep 1"}); err != nil {
		t.Fatal(err)
	}
	checkCommands(t, commandsSent(g), []string{
		`nohup setsid sh -c 'echo $$ > /tmp/job_0123abcd.pgid; (cd '"'"'/work/my repo'"'"' && python train.py --out '"'"'my dir'"'"') > /tmp/job_0123abcd.stdout.log 2> /tmp/job_0123abcd.stderr.log; echo $? > /tmp/job_0123abcd.exit' < /dev/null > /dev/null 2>&1 &`,
		`nohup setsid sh -c 'echo $$ > /tmp/job_89abcdef.pgid; (sleep 1) > /tmp/job_89abcdef.stdout.log 2> /tmp/job_89abcdef.stderr.log; echo $? > /tmp/job_89abcdef.exit' < /dev/null > /dev/null 2>&1 &`,
	})
	g.mu.Lock()
	b := g.commands[0]
	g.mu.Unlock()
	if b.Env["API_TOKEN"] != secret || b.Env["MODE"] != "fast" || b.WorkingDir != nil || b.Timeout <= 25*time.Second || b.Timeout > 30*time.Second {
		t.Errorf("command %+v: want the environment passed through the command, no cwd (the wrapper cds), a 30 s deadline", b)
	}
	if strings.Contains(b.Command, secret) || strings.Contains(rec.all(), secret) {
		t.Error("the secret reached the command line or the debug log")
	}
	if err := c.StartJob(context.Background(), Job{SandboxID: "sb-1", ID: "NOTHEX12"}, JobRequest{Command: "x"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("bad id: err = %v", err)
	}
	if err := c.StartJob(context.Background(), job, JobRequest{Command: "x", Env: map[string]string{"A-B": "1"}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("bad env key: err = %v", err)
	}
}

// A start whose fate is unknown says so; a start that cannot have run
// does not.
func TestStartJobOutcomes(t *testing.T) {
	const secret = "tok-secret-9876"
	tests := []struct {
		name     string
		status   string // control plane
		err      error  // the stream's end after the start event; nil: exit 127
		mayRun   bool
		notInMsg string
	}{
		{name: "unavailable after the start: the gateway may have run it", status: StatusRunning,
			err: connect.NewError(connect.CodeUnavailable, errors.New("upstream failed with TOKEN="+secret)), mayRun: true, notInMsg: secret},
		{name: "not_found on a TERMINATED sandbox: refused", status: StatusTerminated,
			err: connect.NewError(connect.CodeNotFound, errors.New("sandbox not found"))},
		{name: "non-zero exit of the starting line", status: StatusRunning, mayRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sb-1", &fakeSandbox{status: tt.status})
			g.onCommand = func(int, fakeCommand) (int, string, string, error) {
				if tt.err != nil {
					return 0, "", "", tt.err
				}
				return 127, "", "sh: setsid: not found", nil
			}
			c, rec := g.client(nil)
			err := c.StartJob(context.Background(), Job{SandboxID: "sb-1", ID: "0123abcd"},
				JobRequest{Command: "run", SensitiveEnv: map[string]string{"TOKEN": secret}})
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrCommandMayStillRun) != tt.mayRun {
				t.Errorf("err = %v; ErrCommandMayStillRun %v, want %v", err, !tt.mayRun, tt.mayRun)
			}
			if !strings.Contains(err.Error(), "starting job 0123abcd in sandbox sb-1") {
				t.Errorf("err = %v; want it to name the job", err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(rec.all(), secret) {
				t.Errorf("the secret leaked: %v\n%s", err, rec.all())
			}
			if n := g.count("Start"); n != 1 {
				t.Errorf("%d starts: a start is never repeated", n)
			}
		})
	}
}

func TestJobExistsAndOutput(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.onCommand = func(_ int, b fakeCommand) (int, string, string, error) {
		switch {
		case strings.HasPrefix(b.Command, "test -e /tmp/job_0123abcd"):
			return 0, "", "", nil
		case strings.HasPrefix(b.Command, "test -e"):
			return 1, "", "", nil
		case strings.HasPrefix(b.Command, "tail"):
			// max 4: tail -c 5 gives 5 bytes of a longer log, 3 of a short one.
			return 0, "12345", "err", nil
		}
		return 0, "", "", connect.NewError(connect.CodeInternal, errors.New("unexpected"))
	}
	c, rec := g.client(nil)
	job := Job{SandboxID: "sb-1", ID: "0123abcd"}
	if ok, err := c.JobExists(context.Background(), job); err != nil || !ok {
		t.Fatalf("exists = %v, %v", ok, err)
	}
	if ok, err := c.JobExists(context.Background(), Job{SandboxID: "sb-1", ID: "ffffffff"}); err != nil || ok {
		t.Fatalf("exists = %v, %v", ok, err)
	}
	stdout, stderr, outCut, errCut, err := c.JobOutput(context.Background(), job, 4)
	if err != nil || stdout != "2345" || stderr != "err" || !outCut || errCut {
		t.Fatalf("JobOutput = %q %q %v %v %v", stdout, stderr, outCut, errCut, err)
	}
	checkCommands(t, commandsSent(g), []string{
		"test -e /tmp/job_0123abcd.pgid || test -e /tmp/job_0123abcd.stdout.log || test -e /tmp/job_0123abcd.exit",
		"test -e /tmp/job_ffffffff.pgid || test -e /tmp/job_ffffffff.stdout.log || test -e /tmp/job_ffffffff.exit",
		"tail -c 5 -- /tmp/job_0123abcd.stdout.log 2>/dev/null; tail -c 5 -- /tmp/job_0123abcd.stderr.log 1>&2 2>/dev/null",
	})
	if strings.Contains(rec.all(), "12345") {
		t.Error("a job's output reached the debug log")
	}
}

// JobOutput keeps a VM's bytes as they came: a tail may start inside a
// character, and the caller decides how to show it.
func TestJobOutputRawBytesOverConnect(t *testing.T) {
	g := newFakeGateway(t)
	g.add("vm-1", &fakeSandbox{})
	g.onStart = func(_ context.Context, _ int, _ *pb.StartRequest, send func(*pb.CommandSessionEvent) error) error {
		return sendAll(send, evStart(7), evStdout("\xa9tail"), evEnd(0))
	}
	c, _ := g.client(nil)
	stdout, _, cut, _, err := c.JobOutput(context.Background(), Job{SandboxID: "vm-1", ID: "0123abcd"}, 4)
	if err != nil || stdout != "tail" || !cut {
		t.Fatalf("stdout %q cut %v err %v; want the last 4 raw bytes and the cut seen on 5", stdout, cut, err)
	}
}

// stopShell is a fake sandbox shell for StopJob: a process group that ends
// after `lives` kill -0 checks following SIGTERM (never, when negative).
type stopShell struct {
	mu       sync.Mutex
	g        *fakeGateway
	lives    int
	termSent bool
}

func (s *stopShell) exec(_ int, b fakeCommand) (int, string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case b.Command == "kill -TERM -- -4242":
		s.termSent = true
		return 0, "", "", nil
	case b.Command == "kill -0 -- -4242":
		if s.lives == 0 {
			return 1, "", "kill: (-4242) - No such process", nil
		}
		s.lives--
		return 0, "", "", nil
	case b.Command == "kill -KILL -- -4242":
		return 0, "", "", nil
	case strings.HasPrefix(b.Command, "test -s /tmp/job_0123abcd.exit || echo "):
		return 0, "", "", nil
	}
	return 99, "", "unexpected command", nil
}

// dedupe collapses repeated commands (the number of liveness checks
// depends on timing).
func dedupe(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// TestStopJob is load-proof: a group that ends on SIGTERM gets a grace
// of 20 s, whose checks (paced by the grace: the first at 1 s, the next
// 2 s later) leave 17 s to the one that sees it gone, where 150 ms once
// failed under -race on a loaded machine; the SIGKILL case, whose grace
// must run out, does not count the liveness checks that fit in it.
func TestStopJob(t *testing.T) {
	job := Job{SandboxID: "sb-1", ID: "0123abcd"}
	tests := []struct {
		name     string
		exit     string // exit file content; "" none
		pgid     string // pgid file content; "" none
		lives    int
		grace    time.Duration // 150 ms when 0
		want     StopResult
		commands []string
		// uncounted: liveness checks (kill -0) are left out of the
		// comparison, their number being up to the clock.
		uncounted bool
	}{
		{name: "ends on SIGTERM", pgid: "4242\n", lives: 1, grace: 20 * time.Second, want: StopResult{Signal: "SIGTERM"}, commands: []string{
			"kill -TERM -- -4242", "kill -0 -- -4242", "test -s /tmp/job_0123abcd.exit || echo 143 > /tmp/job_0123abcd.exit"}},
		{name: "needs SIGKILL", pgid: "4242\n", lives: -1, want: StopResult{Signal: "SIGKILL"}, uncounted: true, commands: []string{
			"kill -TERM -- -4242", "kill -KILL -- -4242", "test -s /tmp/job_0123abcd.exit || echo 137 > /tmp/job_0123abcd.exit"}},
		{name: "already exited: nothing sent", exit: "0\n", pgid: "4242\n", want: StopResult{AlreadyExited: true}},
		{name: "never started", want: StopResult{NotStarted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sb-1", &fakeSandbox{})
			if tt.exit != "" {
				g.putFile("sb-1", job.ExitPath(), []byte(tt.exit))
			}
			if tt.pgid != "" {
				g.putFile("sb-1", job.PGIDPath(), []byte(tt.pgid))
			}
			sh := &stopShell{g: g, lives: tt.lives}
			g.onCommand = sh.exec
			c, _ := g.client(nil)
			grace := tt.grace
			if grace == 0 {
				grace = 150 * time.Millisecond
			}
			res, err := c.StopJob(context.Background(), job, grace)
			if err != nil {
				t.Fatal(err)
			}
			if *res != tt.want {
				t.Errorf("result %+v, want %+v", *res, tt.want)
			}
			sent := dedupe(commandsSent(g))
			if tt.uncounted {
				sent = slices.DeleteFunc(sent, func(c string) bool { return c == "kill -0 -- -4242" })
			}
			checkCommands(t, sent, tt.commands)
		})
	}
}

func TestStopJobRefusesABadPGID(t *testing.T) {
	job := Job{SandboxID: "sb-1", ID: "0123abcd"}
	for _, content := range []string{"1\n", "0", "-5", "abc"} {
		g := newFakeGateway(t)
		g.add("sb-1", &fakeSandbox{})
		g.putFile("sb-1", job.PGIDPath(), []byte(content))
		c, _ := g.client(nil)
		if _, err := c.StopJob(context.Background(), job, time.Millisecond); err == nil || !strings.Contains(err.Error(), "not a process group id") {
			t.Errorf("pgid %q: err = %v", content, err)
		}
		if n := g.count("Start"); n != 0 {
			t.Errorf("pgid %q: %d commands sent; kill -- -1 must never go out", content, n)
		}
	}
}

// A sandbox that is gone runs nothing any more: stopping succeeds.
func TestStopJobOnAGoneSandbox(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{status: StatusTerminated})
	g.onFile = func(_ int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		writeJSON(w, http.StatusBadGateway, map[string]any{"error": "sandbox_not_found"})
		return true
	}
	c, _ := g.client(nil)
	res, err := c.StopJob(context.Background(), Job{SandboxID: "sb-1", ID: "0123abcd"}, time.Second)
	if err != nil || !res.SandboxGone {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

func TestParseExitCode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		code int
		ok   bool
	}{{"0\n", 0, true}, {"137\n", 137, true}, {" 3 ", 3, true}, {"", 0, false}, {"\n", 0, false}, {"12x", 0, false}} {
		if code, ok := parseExitCode(tt.in); code != tt.code || ok != tt.ok {
			t.Errorf("parseExitCode(%q) = %d, %v", tt.in, code, ok)
		}
	}
}

func TestLastBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		out  string
		long bool
	}{{"abc", 3, "abc", false}, {"abcd", 3, "bcd", true}, {"", 3, "", false}} {
		if out, long := lastBytes(tt.in, tt.n); out != tt.out || long != tt.long {
			t.Errorf("lastBytes(%q, %d) = %q, %v", tt.in, tt.n, out, long)
		}
	}
}
