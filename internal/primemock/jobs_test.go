package primemock_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/shell/shelltest"
)

const jobBatchPath = "/api/v1/sandbox/background-jobs/status:batchGet"

func jobRefs(pairs ...string) map[string]any {
	var jobs []map[string]any
	for i := 0; i+1 < len(pairs); i += 2 {
		jobs = append(jobs, map[string]any{"sandbox_id": pairs[i], "job_id": pairs[i+1]})
	}
	return map[string]any{"jobs": jobs}
}

// byJob indexes a batch answer's statuses and errors by job id, failing
// when a job is in both lists or twice.
func byJob(t *testing.T, body map[string]any) (map[string]map[string]any, map[string]map[string]any) {
	t.Helper()
	statuses, errs := map[string]map[string]any{}, map[string]map[string]any{}
	for _, v := range body["statuses"].([]any) {
		m := v.(map[string]any)
		statuses[m["job_id"].(string)] = m
	}
	for _, v := range body["errors"].([]any) {
		m := v.(map[string]any)
		if statuses[m["job_id"].(string)] != nil || errs[m["job_id"].(string)] != nil {
			t.Errorf("job %s answered twice", m["job_id"])
		}
		errs[m["job_id"].(string)] = m
	}
	return statuses, errs
}

func (h *harness) backgroundEvents(id, typ, contains string) []primemock.Event {
	var out []primemock.Event
	for _, e := range h.srv.Events() {
		if e.SandboxID == id && e.Type == typ && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, contains) {
			out = append(out, e)
		}
	}
	return out
}

// TestBackgroundJobsOnVMs starts jobs with the SDK's exact command over
// Connect, reads them as get_background_job and get_background_jobs do,
// and stops the provider's wrapper with a group kill.
func TestBackgroundJobsOnVMs(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: 10 * time.Millisecond, GatewayLag: -1, SleepScale: 0.0005})
	vm := h.ready(map[string]any{})
	s := h.session(vm)
	g := h.gateway(vm)

	for _, job := range []struct{ id, command string }{
		{"0000000a", "echo out; echo err >&2; exit 7"},
		{"0000000b", "sleep 1000000"},          // still running at the end
		{"0000000c", "sleep 1800; echo slept"}, // "30 minutes", 0.9 s of wall time
	} {
		res := s.run(shelltest.SDKJobCommand(job.id, job.command, "", nil))
		if res.err != nil || res.end.GetExitCode() != 0 || res.stdout != "" || res.stderr != "" {
			t.Fatalf("start_background_job %s: %+v %v", job.id, res.end, res.err)
		}
	}
	if got := h.waitFile(vm, "/tmp/job_0000000a.exit"); got != "7\n" {
		t.Errorf("job a's exit file %q", got)
	}
	if got := h.waitFile(vm, "/tmp/job_0000000c.exit"); got != "0\n" {
		t.Errorf("job c's exit file %q", got)
	}
	// Each job is one background process, reported with the script its sh
	// runs, so a test can count how often an agent started.
	for _, job := range []string{"echo out", "sleep 1000000", "echo slept"} {
		if n := len(h.backgroundEvents(vm, primemock.EventCommandStarted, job)); n != 1 {
			t.Errorf("%q started %d times", job, n)
		}
	}
	done := h.backgroundEvents(vm, primemock.EventCommandExecuted, "echo out")
	if len(done) != 1 || done[0].ExitCode != 0 || done[0].PID < 1000 || !strings.HasPrefix(done[0].Command, "(echo out;") {
		t.Errorf("job a's process: %+v", done)
	}

	// get_background_job: read-file the exit file, then the logs' tails
	// (a VM ignores the window and omits its keys).
	if a := g.readFile("/tmp/job_0000000a.exit", "", "").must(t, 200); a.json["content"] != "7\n" {
		t.Errorf("exit file %s", a.body)
	}
	a := g.readFile("/tmp/job_0000000a.stdout.log", "-10485760", "10485760").must(t, 200)
	keysOf(t, "VM log tail", a.json, "content", "size")
	if a.json["content"] != "out\n" {
		t.Errorf("stdout log %s", a.body)
	}
	if a := g.readFile("/tmp/job_0000000a.stderr.log", "-10485760", "10485760").must(t, 200); a.json["content"] != "err\n" {
		t.Errorf("stderr log %s", a.body)
	}

	// get_background_jobs: one batch across sandboxes; every job in one list.
	gone := h.ready(map[string]any{})
	h.req("DELETE", "/api/v1/sandbox/"+gone, nil).must(t, 200)
	other := h.reqKey("another-key", "POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "i"}).must(t, 201).body["id"].(string)
	ans := h.req("POST", jobBatchPath, jobRefs(vm, "0000000a", vm, "0000000b", vm, "0000000c",
		"cnope", "0000000e", other, "00000010", gone, "00000011")).must(t, 200)
	keysOf(t, "batch answer", ans.body, "statuses", "errors")
	statuses, errs := byJob(t, ans.body)
	if st := statuses["0000000a"]; st == nil || st["completed"] != true || st["exit_code"] != 7.0 || st["sandbox_id"] != vm {
		t.Errorf("job a: %v", st)
	}
	if st := statuses["0000000b"]; st == nil || st["completed"] != false {
		t.Errorf("job b: %v", st)
	} else {
		keysOf(t, "a running job", st, "sandbox_id", "job_id", "completed")
	}
	if st := statuses["0000000c"]; st == nil || st["completed"] != true || st["exit_code"] != 0.0 {
		t.Errorf("job c: %v", st)
	}
	// Every sandbox is a VM: NOT_VM (the code containers got) never comes.
	for job, code := range map[string]string{"0000000e": "NOT_FOUND", "00000010": "FORBIDDEN", "00000011": "NOT_RUNNING"} {
		if e := errs[job]; e == nil || e["code"] != code || e["message"] == "" {
			t.Errorf("job %s: %v, want %s", job, e, code)
		} else {
			keysOf(t, "a batch error", e, "sandbox_id", "job_id", "code", "message")
		}
	}
	if len(statuses)+len(errs) != 6 {
		t.Errorf("%d answers for 6 jobs", len(statuses)+len(errs))
	}

	// The provider's wrapper: its own group, a pgid file; a group kill
	// stops the sh and its subshell before the exit file is written.
	res := s.run(shelltest.WrapperJobCommand("0000000d", "echo up; sleep 1000000", "/tmp"))
	if res.err != nil || res.end.GetExitCode() != 0 {
		t.Fatalf("wrapper start: %v %v", res.end, res.err)
	}
	pgid := strings.TrimSpace(h.waitFile(vm, "/tmp/job_0000000d.pgid"))
	h.waitFile(vm, "/tmp/job_0000000d.stdout.log")
	if res := s.run("kill -TERM -- -" + pgid); res.err != nil || res.end.GetExitCode() != 0 || res.stderr != "" {
		t.Fatalf("kill: %+v %q %v", res.end, res.stderr, res.err)
	}
	ended := h.waitFor("the wrapper's end", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandExecuted && e.Transport == primemock.TransportBackground && e.SandboxID == vm &&
			strings.Contains(e.Command, "job_0000000d")
	})
	if ended.ExitCode != 143 || !ended.Signalled || ended.Signal != "SIGTERM" || pgidOf(ended) != pgid {
		t.Errorf("the wrapper ended %+v", ended)
	}
	if sig := h.backgroundEvents(vm, primemock.EventCommandSignalled, "job_0000000d"); len(sig) != 1 || sig[0].Signal != "SIGTERM" {
		t.Errorf("command_signalled: %+v", sig)
	}
	if _, found := h.srv.ReadFile(vm, "/tmp/job_0000000d.exit"); found {
		t.Error("the killed wrapper wrote its exit file")
	}
	if got, _ := h.srv.ReadFile(vm, "/tmp/job_0000000d.stdout.log"); string(got) != "up\n" {
		t.Errorf("the wrapper's log %q", got)
	}
	// The client then records the status itself, and the batch reads it.
	s.run("echo 143 > /tmp/job_0000000d.exit")
	st, _ := byJob(t, h.req("POST", jobBatchPath, jobRefs(vm, "0000000d")).must(t, 200).body)
	if st["0000000d"]["exit_code"] != 143.0 {
		t.Errorf("after the client wrote the exit file: %v", st)
	}

	// A sandbox that stops ends its background processes.
	h.req("DELETE", "/api/v1/sandbox/"+vm, nil).must(t, 200)
	e := h.waitFor("job b's end", func(e primemock.Event) bool {
		return e.Type == primemock.EventCommandExecuted && e.Transport == primemock.TransportBackground && strings.Contains(e.Command, "job_0000000b")
	})
	if e.ExitCode != -1 {
		t.Errorf("job b after the delete: %+v", e)
	}
}

func pgidOf(e primemock.Event) string { return strconv.Itoa(int(e.PID)) }

func TestJobBatchValidationAndUnsupported(t *testing.T) {
	h := newHarness(t, fastOptions())
	vm := h.ready(map[string]any{})
	var many []string
	for i := range 101 {
		many = append(many, vm, strings.Repeat("0", 6)+string(rune('a'+i/16%6))+string("0123456789abcdef"[i%16]))
	}
	for name, body := range map[string]any{
		"no jobs":       map[string]any{},
		"null":          map[string]any{"jobs": nil},
		"empty":         map[string]any{"jobs": []any{}},
		"101":           jobRefs(many...),
		"duplicate":     jobRefs(vm, "deadbeef", vm, "deadbeef"),
		"short id":      jobRefs(vm, "dead"),
		"not hex":       jobRefs(vm, "deadbeeg"),
		"no sandbox":    map[string]any{"jobs": []any{map[string]any{"job_id": "deadbeef"}}},
		"wrong type":    map[string]any{"jobs": []any{map[string]any{"sandbox_id": 1, "job_id": "deadbeef"}}},
		"not an object": "[]",
	} {
		a := h.req("POST", jobBatchPath, body)
		if a.status != 422 || a.body["detail"] == nil {
			t.Errorf("%s: %d %s, want 422 {detail}", name, a.status, a.raw)
		}
	}
	// Upper-case hex is a valid id; the same job id on two sandboxes is two jobs.
	other := h.ready(map[string]any{})
	st, _ := byJob(t, h.req("POST", jobBatchPath, jobRefs(vm, "DEADBEEF", other, "cafef00d")).must(t, 200).body)
	if len(st) != 2 || st["DEADBEEF"]["completed"] != false {
		t.Errorf("valid batch: %v", st)
	}
	if h.srv.Stats().Requests["POST /api/v1/sandbox/background-jobs/status:batchGet"] == 0 {
		t.Error("the batch is not counted under its route")
	}
	h.srv.Configure(func(o *primemock.Options) { o.JobBatchUnsupported = true })
	a := h.req("POST", jobBatchPath, jobRefs(vm, "deadbeef")).must(t, 404)
	keysOf(t, "unsupported", a.body, "detail")
	if a.body["detail"] != "Not Found" {
		t.Errorf("unsupported: %s", a.raw)
	}
	h.req("POST", "/_mock/config", map[string]any{"job_batch_unsupported": false}).must(t, 200)
	h.req("POST", jobBatchPath, jobRefs(vm, "deadbeef")).must(t, 200)
}
