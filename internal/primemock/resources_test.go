package primemock_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// fastResources keeps every resource state short but observable.
func fastResources() primemock.Options {
	return primemock.Options{
		BootDelay: 10 * time.Millisecond, ApplyDelay: 5 * time.Millisecond, GatewayLag: 5 * time.Millisecond,
		ResourceOptions: primemock.ResourceOptions{
			CheckpointFreezeDelay: 10 * time.Millisecond, CheckpointDurableDelay: 20 * time.Millisecond,
			RestoreDelay: 10 * time.Millisecond, PauseDelay: 10 * time.Millisecond, ResumeDelay: 10 * time.Millisecond,
			VMBuildDelay: 20 * time.Millisecond,
		},
	}
}

// raw sends a request and returns the status and the body as text (a 204
// has none, which req would refuse).
func (h *harness) raw(method, path string, body string) (int, string) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, _ := http.NewRequest(method, h.ts.URL+path, rd)
	r.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := h.ts.Client().Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// checkpointOf takes a checkpoint of a sandbox and waits until it is in
// state.
func (h *harness) checkpointOf(id, state string) string {
	h.t.Helper()
	ck := h.req("POST", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(h.t, 202).body
	if ck["state"] != "PENDING" || ck["sandbox_id"] != id {
		h.t.Fatalf("checkpoint answer %v", ck)
	}
	ckID := ck["id"].(string)
	h.waitFor("checkpoint "+state, func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointState && e.CheckpointID == ckID && e.State == state
	})
	return ckID
}

// The setup-once flow on the wire: files a template wrote exist in every
// sandbox restored from its checkpoint, which outlives the template; a
// restore takes the checkpoint's image and disk size and refuses a body
// that names them.
func TestCheckpointRestoreCopiesTheFileSystem(t *testing.T) {
	h := newHarness(t, fastResources())
	tmpl := h.ready(map[string]any{"docker_image": "python:3.12", "disk_size_gb": 7})
	if r := h.session(tmpl).run("mkdir -p /opt/task && echo setup-ran > /opt/task/marker && echo 1 > /root/count"); r.err != nil || r.end.GetExitCode() != 0 {
		t.Fatalf("setup: %+v", r)
	}
	ckID := h.checkpointOf(tmpl, "DURABLE")
	got := h.req("GET", "/api/v1/sandbox/checkpoints/"+ckID, nil).must(t, 200).body
	if got["state"] != "DURABLE" || got["docker_image"] != "python:3.12" || got["stored_bytes"].(float64) <= 0 {
		t.Fatalf("checkpoint %v", got)
	}
	// The template is deleted: a DURABLE checkpoint outlives it.
	h.req("DELETE", "/api/v1/sandbox/"+tmpl, nil).must(t, 200)
	h.req("GET", "/api/v1/sandbox/checkpoints/"+ckID, nil).must(t, 200)

	var members []string
	for i := range 3 {
		a := h.req("POST", "/api/v1/sandbox", map[string]any{"name": fmt.Sprintf("m%d", i), "checkpoint_id": ckID}).must(t, 201).body
		if a["dockerImage"] != "python:3.12" || a["diskSizeGB"].(float64) != 7 {
			t.Fatalf("restored sandbox %v: want the checkpoint's image and disk", a)
		}
		members = append(members, a["id"].(string))
	}
	for _, id := range members {
		restored := h.waitEvent(primemock.EventSandboxRestored, id)
		running := h.waitEvent(primemock.EventGatewayReady, id)
		if restored.CheckpointID != ckID || restored.Seq > running.Seq {
			t.Fatalf("restore event %+v", restored)
		}
		r := h.session(id).run("cat /opt/task/marker /etc/hostname")
		if r.err != nil || r.stdout != "setup-ran\n"+id+"\n" {
			t.Fatalf("member %s: %q %v", id, r.stdout, r.err)
		}
	}
	// Each copy is private.
	h.session(members[0]).run("echo changed > /opt/task/marker")
	if r := h.session(members[1]).run("cat /opt/task/marker"); r.stdout != "setup-ran\n" {
		t.Fatalf("a member saw another's write: %q", r.stdout)
	}

	for body, want := range map[string]int{
		`{"name":"x","checkpoint_id":"` + ckID + `","docker_image":"python:3.12"}`: 422,
		`{"name":"x","checkpoint_id":"` + ckID + `","disk_size_gb":5}`:             422,
		`{"name":"x","checkpoint_id":"` + ckID + `","restore_memory":true}`:        409,
		`{"name":"x","docker_image":"i","restore_memory":true}`:                    422,
		`{"name":"x","checkpoint_id":"nope"}`:                                      404,
		`{"name":"x"}`:                                                             422,
	} {
		if code, text := h.raw("POST", "/api/v1/sandbox", body); code != want {
			t.Errorf("%s: %d %s, want %d", body, code, text, want)
		}
	}
	other := h.reqKey("someone-else", "POST", "/api/v1/sandbox", map[string]any{"name": "x", "checkpoint_id": ckID})
	if other.status != 404 {
		t.Fatalf("another account restored the checkpoint: %d %s", other.status, other.raw)
	}
}

// A checkpoint that is not DURABLE is discarded with its sandbox; one
// still uploading cannot be restored or deleted; a failing one is FAILED
// with an error and can then be deleted (204, no body).
func TestCheckpointDiscardFailureAndDelete(t *testing.T) {
	o := fastResources()
	o.CheckpointDurableDelay = time.Hour
	h := newHarness(t, o)
	id := h.running(map[string]any{})
	ckID := h.checkpointOf(id, "FROZEN")
	if code, text := h.raw("POST", "/api/v1/sandbox", `{"name":"x","checkpoint_id":"`+ckID+`"}`); code != 409 || !strings.Contains(text, "FROZEN") {
		t.Fatalf("restore from a FROZEN checkpoint: %d %s", code, text)
	}
	if code, _ := h.raw("DELETE", "/api/v1/sandbox/checkpoints/"+ckID, ""); code != 409 {
		t.Fatalf("delete while uploading: %d", code)
	}
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	h.waitFor("discarded", func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointDiscarded && e.CheckpointID == ckID
	})
	h.req("GET", "/api/v1/sandbox/checkpoints/"+ckID, nil).must(t, 404)
	batch := h.req("POST", "/api/v1/sandbox/checkpoints:batchGet", map[string]any{"checkpoint_ids": []string{ckID}}).must(t, 200).body
	if errs := batch["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("batchGet after the discard: %v", batch)
	}

	h.srv.Configure(func(o *primemock.Options) { o.CheckpointDurableDelay = 20 * time.Millisecond })
	failing := h.running(map[string]any{"name": "tmpl-" + primemock.MagicCheckpointFailName})
	failed := h.checkpointOf(failing, "FAILED")
	got := h.req("GET", "/api/v1/sandbox/checkpoints/"+failed, nil).must(t, 200).body
	if got["error"] == nil {
		t.Fatalf("a FAILED checkpoint without an error: %v", got)
	}
	if code, text := h.raw("DELETE", "/api/v1/sandbox/checkpoints/"+failed, ""); code != 204 || text != "" {
		t.Fatalf("delete: %d %q, want 204 and no body", code, text)
	}
	if code, _ := h.raw("DELETE", "/api/v1/sandbox/checkpoints/"+failed, ""); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	h.srv.Configure(func(o *primemock.Options) { o.CheckpointFailRate = 1 })
	h.checkpointOf(h.running(map[string]any{}), "FAILED")
}

// Lists: a sandbox's, the owner's with a cursor; batchGet's limits.
func TestCheckpointListsAndBatchLimits(t *testing.T) {
	h := newHarness(t, fastResources())
	id := h.running(map[string]any{})
	var ids []string
	for range 55 {
		ids = append(ids, h.req("POST", "/api/v1/sandbox/"+id+"/checkpoints", map[string]any{"ttl_seconds": 3600}).must(t, 202).body["id"].(string))
	}
	mine := h.req("GET", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 200).body["checkpoints"].([]any)
	if len(mine) != 55 || mine[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("sandbox list: %d, oldest first?", len(mine))
	}
	one := h.req("GET", "/api/v1/sandbox/"+id+"/checkpoints?checkpoint_id="+ids[3], nil).must(t, 200).body["checkpoints"].([]any)
	if len(one) != 1 {
		t.Fatalf("filtered list: %d", len(one))
	}
	page := h.req("GET", "/api/v1/sandbox/checkpoints", nil).must(t, 200).body
	cursor, ok := page["next_cursor"].(string)
	if len(page["checkpoints"].([]any)) != 50 || !ok {
		t.Fatalf("first page %d, cursor %v", len(page["checkpoints"].([]any)), page["next_cursor"])
	}
	page = h.req("GET", "/api/v1/sandbox/checkpoints?cursor="+cursor, nil).must(t, 200).body
	if len(page["checkpoints"].([]any)) != 5 || page["next_cursor"] != nil {
		t.Fatalf("last page %v", page)
	}
	if n := len(h.reqKey("other", "GET", "/api/v1/sandbox/checkpoints", nil).must(t, 200).body["checkpoints"].([]any)); n != 0 {
		t.Fatalf("another account listed %d checkpoints", n)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	for _, body := range []any{map[string]any{"checkpoint_ids": []string{}}, map[string]any{"checkpoint_ids": many},
		map[string]any{"checkpoint_ids": []string{"a", "a"}}, map[string]any{"checkpoint_ids": []string{strings.Repeat("a", 65)}}} {
		h.req("POST", "/api/v1/sandbox/checkpoints:batchGet", body).must(t, 422)
	}
	del := h.req("DELETE", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 200).body
	if len(del["deleted"].([]any))+len(del["errors"].([]any)) != 55 {
		t.Fatalf("delete all: %v", del)
	}
}

// Pause and resume: PAUSED only after the pause delay; commands are refused
// while paused; an egress policy written while paused is applied only
// after the resume; the pause leaves a memory checkpoint; a resume at the
// active-sandbox limit is refused and the sandbox stays PAUSED.
func TestPauseResumeAndPolicyOnResume(t *testing.T) {
	h := newHarness(t, fastResources())
	id := h.ready(map[string]any{})
	a := h.req("POST", "/api/v1/sandbox/"+id+"/pause", nil).must(t, 202).body
	if a["status"] != "RUNNING" {
		t.Fatalf("status right after the pause request: %v", a["status"])
	}
	h.req("POST", "/api/v1/sandbox/"+id+"/pause", nil).must(t, 202) // a repeat is accepted
	paused := h.waitEvent(primemock.EventSandboxPaused, id)
	if st := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body["status"]; st != "PAUSED" {
		t.Fatalf("status %v", st)
	}
	if r := h.session(id).run("true"); r.err == nil {
		t.Fatal("a command ran on a paused sandbox")
	}
	memCk := h.waitFor("pause checkpoint", func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointCreated && e.SandboxID == id && e.Memory
	})
	put := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": []string{"pypi.org"}, "denylist": nil})
	if put.status/100 != 2 {
		t.Fatalf("policy PUT on a paused sandbox: %d %s", put.status, put.raw)
	}
	h.req("POST", "/api/v1/sandbox/"+id+"/resume", nil).must(t, 202)
	resumed := h.waitEvent(primemock.EventSandboxResumed, id)
	applied := h.waitEvent(primemock.EventPolicyApplied, id, 1)
	if !(paused.Seq < resumed.Seq && resumed.Seq < applied.Seq) {
		t.Fatalf("order: paused %d, resumed %d, applied %d; the policy must apply after the resume", paused.Seq, resumed.Seq, applied.Seq)
	}
	h.waitFor("gateway again", func(e primemock.Event) bool {
		return e.Type == primemock.EventGatewayReady && e.SandboxID == id && e.Seq > resumed.Seq
	})
	if r := h.session(id).run("probe pypi.org && ! probe example.com"); r.err != nil || r.end.GetExitCode() != 0 {
		t.Fatalf("after resume: %+v", r)
	}

	h.waitFor("pause checkpoint durable", func(e primemock.Event) bool {
		return e.Type == primemock.EventCheckpointState && e.CheckpointID == memCk.CheckpointID && e.State == "DURABLE"
	})
	fork := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "fork", "checkpoint_id": memCk.CheckpointID, "restore_memory": true}).must(t, 201)
	h.waitEvent(primemock.EventSandboxRunning, fork.body["id"].(string))

	// At the limit: two sandboxes run, one is paused, the limit is 2.
	h.srv.Configure(func(o *primemock.Options) { o.ResumeLimit = 2 })
	h.req("POST", "/api/v1/sandbox/"+id+"/pause", nil).must(t, 202)
	h.waitFor("second pause", func(e primemock.Event) bool {
		return e.Type == primemock.EventSandboxPaused && e.SandboxID == id && e.Seq > resumed.Seq
	})
	h.running(map[string]any{})
	refused := h.req("POST", "/api/v1/sandbox/"+id+"/resume", nil).must(t, 409)
	if !strings.Contains(refused.raw, "limit") {
		t.Fatalf("refusal %s", refused.raw)
	}
	h.waitEvent(primemock.EventResumeRefused, id)
	if st := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body["status"]; st != "PAUSED" {
		t.Fatalf("after a refused resume: %v", st)
	}
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "c", "docker_image": "i", "vm": false}).must(t, 410)
}

// Networks: members reach each other at <id>.sandbox.internal only under a
// matching rule, per port and direction, whatever their egress lock; the
// shell's curl and probe check it, and every attempt is an event.
func TestNetworkReachability(t *testing.T) {
	h := newHarness(t, fastResources())
	agent, tools := h.ready(map[string]any{"name": "agent"}), h.ready(map[string]any{"name": "tools"})
	h.putPolicy(agent, []string{}, nil) // the agent's egress is locked down entirely
	n := h.req("POST", "/api/v1/sandbox/networks", map[string]any{"name": "eval", "rules": []any{}}).must(t, 201).body
	netID := n["id"].(string)
	h.req("PUT", "/api/v1/sandbox/networks/"+netID+"/members/"+agent, map[string]any{"tags": []string{"agent"}}).must(t, 200)
	h.req("PUT", "/api/v1/sandbox/networks/"+netID+"/members/"+tools, map[string]any{"tags": []string{"tools"}}).must(t, 200)
	curl := func(from, to string, port int) int {
		t.Helper()
		r := h.session(from).run(fmt.Sprintf("curl -sS http://%s.sandbox.internal:%d/health", to, port))
		if r.err != nil {
			t.Fatal(r.err)
		}
		return int(r.end.GetExitCode())
	}
	if curl(agent, tools, 8080) != 7 {
		t.Fatal("an empty rule set let the agent in")
	}
	h.req("PUT", "/api/v1/sandbox/networks/"+netID+"/rules", map[string]any{"rules": []any{
		map[string]any{"from": "tag:agent", "to": "tag:tools", "ports": []int{8080}},
	}}).must(t, 200)
	for _, tc := range []struct {
		from, to string
		port     int
		want     int
	}{{agent, tools, 8080, 0}, {agent, tools, 9090, 7}, {tools, agent, 8080, 7}} {
		if got := curl(tc.from, tc.to, tc.port); got != tc.want {
			t.Errorf("%s → %s:%d: exit %d, want %d", tc.from, tc.to, tc.port, got, tc.want)
		}
	}
	if r := h.session(agent).run("probe " + tools + ".sandbox.internal:8080 && ! probe example.com"); r.end.GetExitCode() != 0 {
		t.Fatalf("probe: %+v", r)
	}
	ev := h.waitFor("connect event", func(e primemock.Event) bool {
		return e.Type == primemock.EventNetworkConnect && e.SandboxID == agent && e.Allowed
	})
	if ev.Peer != tools || ev.Port != 8080 || ev.NetworkID != netID {
		t.Fatalf("event %+v", ev)
	}
	peer := h.req("GET", fmt.Sprintf("/_mock/sandbox/%s/peer?to=%s&port=9090", agent, tools), nil).must(t, 200).body
	if peer["reachable"] != false || !strings.Contains(peer["reason"].(string), "port 9090") {
		t.Fatalf("introspection %v", peer)
	}
	if allowed, _ := h.srv.PeerReachable(agent, tools, 8080); !allowed {
		t.Fatal("PeerReachable")
	}
	got := h.req("GET", "/api/v1/sandbox/networks/"+netID, nil).must(t, 200).body
	if len(got["members"].([]any)) != 2 || len(got["rules"].([]any)) != 1 {
		t.Fatalf("network %v", got)
	}
	if code, text := h.raw("DELETE", "/api/v1/sandbox/networks/"+netID+"/members/"+tools, ""); code != 204 || text != "" {
		t.Fatalf("remove member: %d %q", code, text)
	}
	if curl(agent, tools, 8080) != 7 {
		t.Fatal("a removed member is still reachable")
	}
	if code, _ := h.raw("DELETE", "/api/v1/sandbox/networks/"+netID, ""); code != 204 {
		t.Fatalf("delete network: %d", code)
	}
	h.req("GET", "/api/v1/sandbox/networks/"+netID, nil).must(t, 404)

	// Bad requests and foreign sandboxes.
	for _, body := range []any{
		map[string]any{"rules": []any{}},
		map[string]any{"name": "x", "rules": []any{map[string]any{"from": "agent", "to": "*", "ports": []int{1}}}},
		map[string]any{"name": "x", "rules": []any{map[string]any{"from": "*", "to": "*", "ports": []int{}}}},
		map[string]any{"name": "x", "rules": []any{map[string]any{"from": "*", "to": "*", "ports": []int{70000}}}},
	} {
		h.req("POST", "/api/v1/sandbox/networks", body).must(t, 422)
	}
	n2 := h.req("POST", "/api/v1/sandbox/networks", map[string]any{"name": "x", "rules": []any{}}).must(t, 201).body["id"].(string)
	theirs := h.reqKey("other", "POST", "/api/v1/sandbox", map[string]any{"name": "o", "docker_image": "i"}).must(t, 201).body["id"].(string)
	h.req("PUT", "/api/v1/sandbox/networks/"+n2+"/members/"+theirs, map[string]any{"tags": []string{}}).must(t, 404)
	if n := len(h.reqKey("other", "GET", "/api/v1/sandbox/networks", nil).must(t, 200).body["networks"].([]any)); n != 0 {
		t.Fatalf("another account listed %d networks", n)
	}
}

// A network created without a rules key: no member reaches another (the
// API's text), or every member every other with NetworkDefaultAllow (the
// guide's example).
func TestNetworkDefaultIsAKnob(t *testing.T) {
	for _, allow := range []bool{false, true} {
		o := fastResources()
		o.NetworkDefaultAllow = allow
		h := newHarness(t, o)
		a, b := h.running(map[string]any{}), h.running(map[string]any{})
		netID := h.req("POST", "/api/v1/sandbox/networks", map[string]any{"name": "n"}).must(t, 201).body["id"].(string)
		h.req("PUT", "/api/v1/sandbox/networks/"+netID+"/members/"+a, map[string]any{"tags": []string{}}).must(t, 200)
		h.req("PUT", "/api/v1/sandbox/networks/"+netID+"/members/"+b, map[string]any{"tags": []string{}}).must(t, 200)
		if got, _ := h.srv.PeerReachable(a, b, 22); got != allow {
			t.Errorf("NetworkDefaultAllow %v: reachable %v", allow, got)
		}
		explicit := h.req("POST", "/api/v1/sandbox/networks", map[string]any{"name": "e", "rules": []any{}}).must(t, 201).body["id"].(string)
		h.raw("DELETE", "/api/v1/sandbox/networks/"+netID+"/members/"+a, "")
		h.req("PUT", "/api/v1/sandbox/networks/"+explicit+"/members/"+a, map[string]any{"tags": []string{}}).must(t, 200)
		h.req("PUT", "/api/v1/sandbox/networks/"+explicit+"/members/"+b, map[string]any{"tags": []string{}}).must(t, 200)
		h.raw("DELETE", "/api/v1/sandbox/networks/"+netID, "")
		if got, _ := h.srv.PeerReachable(a, b, 22); got {
			t.Errorf("NetworkDefaultAllow %v: explicit empty rules allowed a connection", allow)
		}
	}
}

// Volumes: a sandbox attaches a private copy of the head; a publish makes
// one sandbox's writes the head for sandboxes created after it; volumes
// are not in checkpoints; sizes only grow.
func TestVolumesPublishAndAttach(t *testing.T) {
	h := newHarness(t, fastResources())
	h.req("POST", "/api/v1/sandbox/volumes", map[string]any{"name": "data", "size_gb": 10}).must(t, 201)
	h.req("POST", "/api/v1/sandbox/volumes", map[string]any{"name": "data", "size_gb": 10}).must(t, 409)
	writer := h.ready(map[string]any{"volumes": []any{map[string]any{"name": "data", "mount_path": "/data"}}})
	early := h.ready(map[string]any{"volumes": []any{map[string]any{"name": "data", "mount_path": "/mnt/d", "read_only": true}}})
	h.session(writer).run("echo hello > /data/greeting && echo root > /root/f")
	if r := h.session(early).run("cat /mnt/d/greeting"); r.end.GetExitCode() == 0 {
		t.Fatal("another attachment saw an unpublished write")
	}
	ck := h.req("POST", "/api/v1/sandbox/"+writer+"/volumes/data/publish", nil).must(t, 202).body
	if ck["merge"] != "pending" {
		t.Fatalf("publish answer %v", ck)
	}
	h.waitFor("new head", func(e primemock.Event) bool { return e.Type == primemock.EventVolumeHead && e.CheckpointID == ck["id"] })
	got := h.req("GET", "/api/v1/sandbox/checkpoints/"+ck["id"].(string), nil).must(t, 200).body
	if got["state"] != "DURABLE" || got["merge"] == "pending" {
		t.Fatalf("published checkpoint %v", got)
	}
	late := h.ready(map[string]any{"volumes": []any{map[string]any{"name": "data", "mount_path": "/srv/data"}}})
	if r := h.session(late).run("cat /srv/data/greeting"); r.stdout != "hello\n" {
		t.Fatalf("a sandbox created after the publish: %q", r.stdout)
	}
	if r := h.session(early).run("cat /mnt/d/greeting"); r.end.GetExitCode() == 0 {
		t.Fatal("a running sandbox saw a later publish")
	}
	h.req("POST", "/api/v1/sandbox/"+early+"/volumes/data/publish", nil).must(t, 409) // read-only
	h.req("POST", "/api/v1/sandbox/"+late+"/volumes/other/publish", nil).must(t, 404)

	rootCk := h.checkpointOf(writer, "DURABLE")
	files := h.req("GET", "/_mock/checkpoints/"+rootCk+"/files?path=/root", nil).must(t, 200)
	if !strings.Contains(files.raw, `"f"`) {
		t.Fatalf("the root file system is missing from the checkpoint: %s", files.raw)
	}
	h.req("GET", "/_mock/checkpoints/"+rootCk+"/files?path=/data", nil).must(t, 404)

	h.req("PATCH", "/api/v1/sandbox/volumes/data", map[string]any{"size_gb": 5}).must(t, 422)
	h.req("PATCH", "/api/v1/sandbox/volumes/data", map[string]any{"size_gb": 101}).must(t, 422)
	v := h.req("PATCH", "/api/v1/sandbox/volumes/data", map[string]any{"size_gb": 20, "visibility": "PUBLIC"}).must(t, 200).body
	if v["size_gb"].(float64) != 20 || v["visibility"] != "PUBLIC" {
		t.Fatalf("update %v", v)
	}
	owner := v["owner"].(string)
	h.reqKey("other", "PATCH", "/api/v1/sandbox/volumes/"+owner+"/data", map[string]any{"size_gb": 30}).must(t, 404)
	foreign := h.reqKey("other", "POST", "/api/v1/sandbox", map[string]any{"name": "o", "docker_image": "i",
		"volumes": []any{map[string]any{"name": owner + "/data", "mount_path": "/d", "read_only": true}}})
	foreign.must(t, 201) // a PUBLIC volume attaches by owner/name
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "i", "volumes": []any{map[string]any{"name": "nope", "mount_path": "/d"}}}).must(t, 404)
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "i", "volumes": []any{map[string]any{"name": "data", "mount_path": "rel"}}}).must(t, 422)
	if n := len(h.req("GET", "/api/v1/sandbox/volumes", nil).must(t, 200).body["volumes"].([]any)); n != 1 {
		t.Fatalf("%d volumes listed", n)
	}
	h.req("DELETE", "/api/v1/sandbox/volumes/data", nil).must(t, 200)
	h.req("GET", "/api/v1/sandbox/volumes/data", nil).must(t, 404)
}

// Images: a VM create from an image without a VM artifact fails with "VM
// image not found" until a vm-build completes; the list shows the artifact.
func TestImageVMArtifactAndBuild(t *testing.T) {
	o := fastResources()
	o.ImagesWithoutVM = []string{"u1/tools:1"}
	h := newHarness(t, o)
	refused := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "u1/tools:1"}).must(t, 400)
	if !strings.Contains(refused.raw, "VM image not found") {
		t.Fatalf("refusal %s", refused.raw)
	}
	rows := h.req("GET", "/api/v1/images", nil).must(t, 200).body["data"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["artifactType"] != "CONTAINER" {
		t.Fatalf("rows %v", rows)
	}
	h.req("POST", "/api/v1/images/nope/1/vm-build", map[string]any{}).must(t, 404)
	b := h.req("POST", "/api/v1/images/tools/1/vm-build", map[string]any{"teamId": nil, "ownerScope": nil}).must(t, 201).body
	buildID := b["buildId"].(string)
	if b["success"] != true || b["artifactBuildId"] == "" {
		t.Fatalf("vm-build %v", b)
	}
	if again := h.req("POST", "/api/v1/images/tools/1/vm-build", map[string]any{}).must(t, 200).body; again["buildId"] != buildID {
		t.Fatalf("a second request during the build started another: %v", again)
	}
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "u1/tools:1"}).must(t, 400)
	h.waitFor("build done", func(e primemock.Event) bool { return e.Type == primemock.EventImageBuild && e.State == "COMPLETED" })
	if st := h.req("GET", "/api/v1/images/build/"+buildID, nil).must(t, 200).body["status"]; st != "COMPLETED" {
		t.Fatalf("build %v", st)
	}
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "u1/tools:1"}).must(t, 201)
	h.req("POST", "/api/v1/images/tools/1/vm-build", map[string]any{}).must(t, 409)
	rows = h.req("GET", "/api/v1/images?limit=1", nil).must(t, 200).body["data"].([]any)
	if len(rows) != 2 || rows[1].(map[string]any)["artifactType"] != "VM_SANDBOX" || rows[1].(map[string]any)["status"] != "COMPLETED" {
		t.Fatalf("rows %v", rows)
	}
}

// A vm-build of an image named with MagicVMBuildFailName ends FAILED, with
// its message on the build and the list's VM row; the image stays without
// a usable VM artifact.
func TestImageVMBuildFails(t *testing.T) {
	o := fastResources()
	name := "legacy-" + primemock.MagicVMBuildFailName
	o.ImagesWithoutVM = []string{name + ":1"}
	h := newHarness(t, o)
	buildID := h.req("POST", "/api/v1/images/"+name+"/1/vm-build", map[string]any{}).must(t, 201).body["buildId"].(string)
	h.waitFor("build failed", func(e primemock.Event) bool { return e.Type == primemock.EventImageBuild && e.State == "FAILED" })
	b := h.req("GET", "/api/v1/images/build/"+buildID, nil).must(t, 200).body
	if b["status"] != "FAILED" || !strings.Contains(fmt.Sprint(b["errorMessage"]), "simulated by prime-mock") {
		t.Fatalf("build %v", b)
	}
	rows := h.req("GET", "/api/v1/images", nil).must(t, 200).body["data"].([]any)
	if len(rows) != 2 || rows[1].(map[string]any)["status"] != "FAILED" || rows[1].(map[string]any)["errorMessage"] == nil {
		t.Fatalf("rows %v", rows)
	}
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": name + ":1"}).must(t, 400)
}

// SSH sessions open on a running VM and close on request, on a pause, or
// with the sandbox.
func TestSSHSessions(t *testing.T) {
	h := newHarness(t, fastResources())
	id := h.running(map[string]any{})
	s := h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", map[string]any{"public_key": "ssh-ed25519 AAAA me"}).must(t, 200).body
	keysOf(t, "session", s, "session_id", "sandbox_id", "host", "port", "expires_at", "ttl_seconds")
	if s["ttl_seconds"].(float64) != 900 {
		t.Fatalf("default ttl %v", s["ttl_seconds"])
	}
	sid := s["session_id"].(string)
	h.req("DELETE", "/api/v1/sandbox/"+id+"/ssh-session/"+sid, nil).must(t, 200)
	h.req("DELETE", "/api/v1/sandbox/"+id+"/ssh-session/"+sid, nil).must(t, 404)
	h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", map[string]any{"public_key": "nope"}).must(t, 422)
	h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", map[string]any{"public_key": "ssh-ed25519 AAAA", "ttl_seconds": 3601}).must(t, 422)
	open := h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", map[string]any{"public_key": "ssh-ed25519 AAAA", "ttl_seconds": 60}).must(t, 200).body
	h.req("POST", "/api/v1/sandbox/"+id+"/pause", nil).must(t, 202)
	closed := h.waitFor("closed on pause", func(e primemock.Event) bool {
		return e.Type == primemock.EventSSHClosed && e.SessionID == open["session_id"]
	})
	if !strings.Contains(closed.Message, "paused") {
		t.Fatalf("close reason %q", closed.Message)
	}
	h.waitEvent(primemock.EventSandboxPaused, id)
	h.req("POST", "/api/v1/sandbox/"+id+"/ssh-session", map[string]any{"public_key": "ssh-ed25519 AAAA"}).must(t, 409)
}

// The resource knobs read back and change through /_mock/config.
func TestResourceKnobsInConfig(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	cfg := h.req("GET", "/_mock/config", nil).must(t, 200).body
	for k, want := range map[string]any{
		"checkpoint_freeze_delay": "50ms", "checkpoint_durable_delay": "100ms", "restore_delay": "100ms",
		"pause_delay": "50ms", "resume_delay": "50ms", "vm_build_delay": "200ms", "resume_limit": 0.0,
		"checkpoint_fail_rate": 0.0, "network_default_allow": false,
	} {
		if cfg[k] != want {
			t.Errorf("%s = %v, want %v", k, cfg[k], want)
		}
	}
	set := h.req("POST", "/_mock/config", map[string]any{"pause_delay": "1s", "resume_limit": 3, "images_without_vm": []string{"a:1"}, "network_default_allow": true}).must(t, 200).body
	if set["pause_delay"] != "1s" || set["resume_limit"] != 3.0 || strs(set["images_without_vm"])[0] != "a:1" || set["network_default_allow"] != true {
		t.Fatalf("after the patch %v", set)
	}
	h.req("POST", "/_mock/config", map[string]any{"checkpoint_fail_rate": 2}).must(t, 422)
	h.req("POST", "/_mock/config", map[string]any{"resume_limit": -1}).must(t, 422)
	if o := h.srv.Options(); o.PauseDelay != time.Second || o.ResumeLimit != 3 {
		t.Fatalf("options %+v", o.ResourceOptions)
	}
}

// Every resource event encodes its own keys after the common ones.
func TestResourceEventJSON(t *testing.T) {
	e := primemock.Event{Seq: 3, Type: primemock.EventNetworkConnect, SandboxID: "a", Peer: "b", Port: 8080, NetworkID: "n", Allowed: false, Message: "no rule"}
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `"type":"network_connect","sandbox_id":"a","network_id":"n","peer":"b","message":"no rule","port":8080,"allowed":false}`
	if !strings.HasSuffix(string(b), want) {
		t.Fatalf("%s\nwant suffix %s", b, want)
	}
}

// Every checkpoint of a deleted sandbox that is not DURABLE is discarded,
// however many there are.
func TestEveryPendingCheckpointIsDiscarded(t *testing.T) {
	o := fastResources()
	o.CheckpointDurableDelay = time.Hour
	h := newHarness(t, o)
	id := h.running(map[string]any{})
	var ids []string
	for range 4 {
		ids = append(ids, h.req("POST", "/api/v1/sandbox/"+id+"/checkpoints", nil).must(t, 202).body["id"].(string))
	}
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	for _, ck := range ids {
		h.req("GET", "/api/v1/sandbox/checkpoints/"+ck, nil).must(t, 404)
	}
}
