package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/soak"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// The provider's transfer commands (internal/prime/transfer.go) are told
// apart from the probes, the agent and the destroy's removal.
func TestClassifyCommand(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{gatewayProbe, cmdProbe},
		{soak.ResultCommand, cmdAgent},
		{"mkdir -p -- /", cmdMkdir},
		{"mkdir -p -- /srv/data", cmdMkdir},
		{"mkdir -p -- /task && tar -xf /.prime-upload-01b6ecca719b9704.tar -C /task; s=$?; rm -f -- /.prime-upload-01b6ecca719b9704.tar; exit $s", cmdUnpack},
		{"mv -f -- /etc/.prime-upload-0123456789abcdef /etc/app.conf && chmod 644 -- /etc/app.conf", cmdUnpack},
		{"rm -f -- /.prime-upload-0123456789abcdef.tar", cmdCleanup},
		{"rm -rf -- /task", cmdRemove},
		{"mkdir -p /task && echo hi", cmdOther},
		{"echo done", cmdOther},
	} {
		if got := classifyCommand(tc.cmd, soak.ResultCommand); got != tc.want {
			t.Errorf("classifyCommand(%q) = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}

// The apply's gateway requests split into the upload, the read, the
// agent and the probes; Start calls that ran nothing count as probes.
func TestSplitGateway(t *testing.T) {
	unpack := "mkdir -p -- /task && tar -xf /.prime-upload-aa.tar -C /task; s=$?; rm -f -- /.prime-upload-aa.tar; exit $s"
	started := func(ms int, sb, cmd string) primemock.Event {
		return primemock.Event{Type: primemock.EventCommandStarted, Time: at(ms), SandboxID: sb, Command: cmd, Transport: "connect"}
	}
	executed := func(ms int, sb, cmd string) primemock.Event {
		return primemock.Event{Type: primemock.EventCommandExecuted, Time: at(ms), SandboxID: sb, Command: cmd, Transport: "connect"}
	}
	ph := phase{
		requests: map[string]int{startRoute: 10, uploadRoute: 2, downloadRoute: 2},
		events: []primemock.Event{
			started(0, "a", gatewayProbe), started(5, "b", gatewayProbe),
			started(100, "a", "mkdir -p -- /"), started(120, "b", "mkdir -p -- /"),
			{Type: primemock.EventFileUploaded, Time: at(200), SandboxID: "a", Size: 1000},
			{Type: primemock.EventFileUploaded, Time: at(210), SandboxID: "b", Size: 1000},
			started(300, "a", unpack), executed(310, "a", unpack), started(320, "b", unpack), executed(330, "b", unpack),
			started(400, "a", soak.ResultCommand), executed(401, "a", soak.ResultCommand),
			started(402, "b", soak.ResultCommand), executed(450, "b", soak.ResultCommand),
			{Type: primemock.EventCommandStarted, Time: at(460), SandboxID: "b", Command: "sleep 1", Transport: "background"},
			{Type: primemock.EventFileDownloaded, Time: at(500), SandboxID: "a", Path: soak.ResultPath, Size: int64(len(soak.ResultContent))},
			{Type: primemock.EventFileDownloaded, Time: at(520), SandboxID: "b", Path: soak.ResultPath, Size: 3},
		},
	}
	g := splitGateway(ph, soak.ResultCommand)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"upload calls", g.uploadCalls(), 6}, {"read calls", g.readCalls(), 2}, {"agent", g.commands[cmdAgent], 2},
		{"probes (2 ran, 2 answered not_found)", g.probeCalls(), 4}, {"total", g.total(), 14},
		{"result reads", g.resultReads, 2}, {"result reads with the result", g.resultReadsOK, 1},
		{"bytes uploaded", int(g.uploadBytes), 2000},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if s := span(g.firstUpload, g.lastUnpack); s != 130*time.Millisecond {
		t.Errorf("upload span %s, want 130ms", s)
	}
	if s := span(g.lastAgent, g.lastResultRead); s != 70*time.Millisecond {
		t.Errorf("read span %s, want 70ms", s)
	}
	if s := span(time.Time{}, at(1)); s != 0 {
		t.Errorf("span from nothing = %s", s)
	}
}

func TestFileFloor(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		n, conc                int
		rtt                    time.Duration
		archive                int64
		bps                    float64
		floor, chain, transfer time.Duration
	}{
		// ⌈1000/32⌉ = 32 rounds × (1 upload + unpack + read) × 5 ms; 1000 MiB at 200 MiB/s.
		{"N=1000", 1000, 32, 5 * time.Millisecond, 1 << 20, 200 << 20, 10*time.Second + 480*time.Millisecond + 5*time.Second,
			480 * time.Millisecond, 5 * time.Second},
		{"N=200", 200, 32, 5 * time.Millisecond, 1 << 20, 200 << 20, 10*time.Second + 105*time.Millisecond + time.Second,
			105 * time.Millisecond, time.Second},
		// 64 MiB: 4 parts, so 6 calls a round; 12,800 MiB at 200 MiB/s.
		{"N=200, 64 MiB", 200, 32, 5 * time.Millisecond, 64 << 20, 200 << 20, 10*time.Second + 210*time.Millisecond + 64*time.Second,
			210 * time.Millisecond, 64 * time.Second},
		{"no throughput measured", 10, 32, time.Millisecond, 1 << 20, 0, 10*time.Second + 3*time.Millisecond, 3 * time.Millisecond, 0},
	} {
		floor, chain, transfer := fileFloor(10*time.Second, tc.n, tc.conc, tc.rtt, tc.archive, tc.bps)
		if floor != tc.floor || chain != tc.chain || transfer != tc.transfer {
			t.Errorf("%s: floor %s (chain %s, transfer %s), want %s (%s, %s)", tc.name, floor, chain, transfer, tc.floor, tc.chain, tc.transfer)
		}
	}
	if a := rssAllowance(1 << 20); a != 52*1024 {
		t.Errorf("allowance for 1 MiB = %d KiB, want 52 MiB", a)
	}
	p := &filePair{base: &fileFigures{apply: phase{rss: []rssRecord{{MaxRSSKB: 80 << 10}}}},
		files: &fileFigures{apply: phase{rss: []rssRecord{{MaxRSSKB: 70 << 10}, {MaxRSSKB: 95 << 10}}}}}
	if d := p.rssAbove(); d != 15<<10 {
		t.Errorf("rssAbove = %d KiB, want 15 MiB", d)
	}
	if s := signedKB(-716); s != "−0.7 MiB" {
		t.Errorf("signedKB(-716) = %q", s)
	}
	if s := signedKB(0); s != "+0.0 MiB" {
		t.Errorf("signedKB(0) = %q", s)
	}
}

func bgEvent(typ string, ms int, sb, id string) primemock.Event {
	cmd := "echo $$ > /tmp/job_" + id + ".pgid; (sleep 60 && echo done) > /tmp/job_" + id + ".stdout.log 2> /tmp/job_" +
		id + ".stderr.log; echo $? > /tmp/job_" + id + ".exit"
	return primemock.Event{Type: typ, Time: at(ms), SandboxID: sb, Command: cmd, Transport: "background"}
}

// Jobs are found by the exit file in their process's script; the wrapper
// command that started them (transport connect) is not a job.
func TestJobEventsOf(t *testing.T) {
	evs := []primemock.Event{
		{Type: primemock.EventCommandStarted, Time: at(0), SandboxID: "a", Transport: "connect",
			Command: "nohup setsid sh -c 'echo $$ > /tmp/job_0000000a.pgid; (sleep 60) > /tmp/job_0000000a.stdout.log 2> x; echo $? > /tmp/job_0000000a.exit' < /dev/null > /dev/null 2>&1 &"},
		bgEvent(primemock.EventCommandStarted, 10, "a", "0000000a"),
		bgEvent(primemock.EventCommandStarted, 30, "b", "0000000b"),
		{Type: primemock.EventCommandStarted, Time: at(40), SandboxID: "c", Transport: "background", Command: "sleep 5"},
		bgEvent(primemock.EventCommandExecuted, 15010, "a", "0000000a"),
		bgEvent(primemock.EventCommandExecuted, 15130, "b", "0000000b"),
		{Type: primemock.EventCommandStarted, Time: at(15900), SandboxID: "a", Transport: "connect",
			Command: "tail -c 65537 -- /tmp/job_0000000a.stdout.log 2>/dev/null; tail -c 65537 -- /tmp/job_0000000a.stderr.log 1>&2 2>/dev/null"},
		{Type: primemock.EventCommandStarted, Time: at(16000), SandboxID: "a", Transport: "connect",
			Command: "tail -c 65537 -- /tmp/job_0000000a.stdout.log 2>/dev/null"},
	}
	j := jobEventsOf(evs)
	if len(j.starts) != 2 || len(j.ends) != 2 || len(j.reads) != 1 {
		t.Fatalf("starts %v, ends %v, reads %v", j.starts, j.ends, j.reads)
	}
	first, last := j.window()
	if !first.Equal(at(10)) || !last.Equal(at(15130)) {
		t.Errorf("window %s → %s", first, last)
	}
	if s := spread(j.ends); s != 120*time.Millisecond {
		t.Errorf("end spread %s", s)
	}
	ds, missing := readDelays(j)
	if missing != 1 || len(ds) != 1 || ds[0] != 890*time.Millisecond {
		t.Errorf("read delays %v, %d missing; want [890ms], 1", ds, missing)
	}
}

// A job is seen at the end of the first answer that reported it
// completed, whatever the order of the records.
func TestSeenDelays(t *testing.T) {
	a, b, c := jobKey("sa", "0000000a"), jobKey("sb", "0000000b"), jobKey("sc", "0000000c")
	ends := map[string]time.Time{a: at(1000), b: at(1500), c: at(1900)}
	recs := []traceRec{
		{Path: jobBatchPath, Start: at(2990), End: at(3010), Jobs: []string{a, b, c}, Done: []string{a, b}},
		{Path: jobBatchPath, Start: at(1990), End: at(2008), Jobs: []string{a, b, c}, Done: []string{a}},
		{Path: jobBatchPath, Start: at(990), End: at(1004), Jobs: []string{a, b, c}},
	}
	ds, missing := seenDelays(ends, recs)
	slices.Sort(ds)
	if missing != 1 || !slices.Equal(ds, []time.Duration{1008 * time.Millisecond, 1510 * time.Millisecond}) {
		t.Errorf("delays %v, %d missing", ds, missing)
	}
	if last := lastSeen(ends, recs); !last.Equal(at(3010)) {
		t.Errorf("last seen %s, want the answer that ended at 3010 ms", last)
	}
	f := &jobFigures{firstAgent: at(0), lastStart: at(900), lastEnd: at(15950), lastSeen: at(16500), lastAgent: at(16800)}
	if st, lj, po, rd := f.jobSteps(); st != 900*time.Millisecond || lj != 15050*time.Millisecond || po != 550*time.Millisecond || rd != 300*time.Millisecond {
		t.Errorf("job steps %s %s %s %s", st, lj, po, rd)
	}
}

func TestPollRounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		starts []int
		want   []int
	}{
		{"none", nil, nil},
		{"ten chunks a second", []int{0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 1000, 1001, 1002, 2003, 2004}, []int{10, 3, 2}},
		{"unsorted", []int{2000, 0, 1000, 5, 1003}, []int{2, 2, 1}},
		{"a slow round's stragglers stay in it", []int{0, 300, 450, 1450}, []int{3, 1}},
	} {
		var ts []time.Time
		for _, ms := range tc.starts {
			ts = append(ts, at(ms))
		}
		if got := pollRounds(ts, 500*time.Millisecond); !slices.Equal(got, tc.want) {
			t.Errorf("%s: rounds %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		window time.Duration
		want   int
	}{{0, 1}, {999 * time.Millisecond, 1}, {time.Second, 2}, {15300 * time.Millisecond, 16}, {-time.Second, 0}} {
		if got := roundsIn(tc.window, time.Second); got != tc.want {
			t.Errorf("roundsIn(%s) = %d, want %d", tc.window, got, tc.want)
		}
	}
	for n, want := range map[int]float64{1: 1.2, 100: 1.2, 101: 2.4, 1000: 12} {
		if got := batchesPerRound(n); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("batchesPerRound(%d) = %g, want %g", n, got, want)
		}
	}
}

func TestParseJobBatch(t *testing.T) {
	req := `{"jobs":[{"sandbox_id":"s1","job_id":"0000000a"},{"sandbox_id":"s2","job_id":"0000000b"}]}`
	resp := `{"statuses":[{"sandbox_id":"s1","job_id":"0000000a","completed":true,"exit_code":0},` +
		`{"sandbox_id":"s2","job_id":"0000000b","completed":false}],"errors":[]}`
	jobs, done := parseJobBatch([]byte(req), []byte(resp))
	if !slices.Equal(jobs, []string{"s1/0000000a", "s2/0000000b"}) || !slices.Equal(done, []string{"s1/0000000a"}) {
		t.Errorf("jobs %v, done %v", jobs, done)
	}
	if jobs, done := parseJobBatch([]byte("<html>"), []byte("")); jobs != nil || done != nil {
		t.Errorf("garbage gave jobs %v, done %v", jobs, done)
	}
}

// The figures of the state: results read by the data source, the agent's
// results.
func TestStateCounts(t *testing.T) {
	state := []tfcli.StateResource{
		{Address: soak.ResultDataAddr, Values: map[string]any{"files": map[string]any{
			"0": map[string]any{"content": soak.ResultContent}, "1": map[string]any{"content": "{}"}, "2": map[string]any{"content": nil},
		}}},
		{Address: soak.AgentFleetAddr, Values: map[string]any{"results": map[string]any{
			"0": map[string]any{"exit_code": 0.0, "steps": []any{map[string]any{"stdout": "done\n"}}},
			"1": map[string]any{"exit_code": 1.0, "steps": []any{map[string]any{"stdout": "done\n"}}},
			"2": map[string]any{"exit_code": 0.0, "steps": []any{map[string]any{"stdout": ""}}},
			"3": map[string]any{"exit_code": 0.0, "steps": []any{map[string]any{"stdout": "done"}}},
		}}},
	}
	if n := resultsIn(state); n != 1 {
		t.Errorf("results read %d, want 1", n)
	}
	if n := agentResults(state); n != 2 {
		t.Errorf("agent results %d, want 2", n)
	}
	if n := resultsIn(nil); n != 0 {
		t.Errorf("results of no state %d", n)
	}
}

// The new runs' flags parse, and "" turns a run off.
func TestFileAndJobFlags(t *testing.T) {
	c := defaultConfig()
	if err := intList(&c.fileNs)(""); err != nil || c.fileNs != nil {
		t.Fatalf("-file-n \"\": %v, %v", c.fileNs, err)
	}
	if err := intList(&c.jobNs)("1000,200"); err != nil || !slices.Equal(c.jobNs, []int{1000, 200}) {
		t.Fatalf("-job-n 1000,200: %v, %v", c.jobNs, err)
	}
	if !strings.Contains(jobCommand(60), "sleep 60") {
		t.Errorf("job command %q", jobCommand(60))
	}
}

// The job pair compares the fastest run of each kind and judges the job
// runs' worst poll figures.
func TestJobPair(t *testing.T) {
	run := func(bg bool, round int, wall time.Duration, perRound int) *jobFigures {
		f := &jobFigures{n: 1000, background: bg, round: round, jobWall: 15 * time.Second}
		f.apply.res.Duration = wall
		if bg {
			f.statusInWindow, f.allowedRounds, f.rounds = perRound*16, 16, []int{perRound}
			f.seen = durStats{n: 1000, median: time.Duration(perRound) * 50 * time.Millisecond}
		}
		return f
	}
	p := &jobPair{n: 1000, runs: []*jobFigures{
		run(false, 1, 9*time.Second, 0), run(true, 1, 26*time.Second, 10),
		run(false, 2, 6*time.Second, 0), run(true, 2, 23*time.Second, 11),
	}}
	if d := p.added(); d != 17*time.Second {
		t.Errorf("added %s, want 23 s − 6 s", d)
	}
	if a := p.allowed(); a != 17*time.Second {
		t.Errorf("allowed %s", a)
	}
	if w := p.worstPerRound(); w.round != 2 || w.perRound() != 11 {
		t.Errorf("worst per round: run %d, %.1f", w.round, w.perRound())
	}
	if w := p.worstSeen(); w.round != 2 {
		t.Errorf("worst seen: run %d", w.round)
	}
	if len(p.baselines()) != 2 || len(p.jobRuns()) != 2 || fastest(nil) != nil {
		t.Error("runs by kind")
	}
}
