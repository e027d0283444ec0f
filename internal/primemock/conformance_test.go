package primemock_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// sandboxKeys are the keys every Sandbox object carries: those the SDK's
// Sandbox model requires, plus vm and labels, which it would default (vm is
// always true: every sandbox is a VM).
var sandboxKeys = []string{
	"id", "name", "dockerImage", "cpuCores", "memoryGB", "diskSizeGB", "diskMountPath",
	"gpuCount", "status", "timeoutMinutes", "createdAt", "updatedAt", "vm", "labels",
}

// sdkTime matches the timestamps the SDK parses: UTC, at most 6 fraction digits.
var sdkTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)

func checkSandboxObject(t *testing.T, sb map[string]any) {
	t.Helper()
	for _, k := range sandboxKeys {
		if _, ok := sb[k]; !ok {
			t.Errorf("sandbox object lacks %q", k)
		}
	}
	for _, k := range []string{"labels"} {
		if _, ok := sb[k].([]any); !ok {
			t.Errorf("%s must be an array, got %#v", k, sb[k])
		}
	}
	if _, ok := sb["vm"].(bool); !ok {
		t.Errorf("vm must be a boolean, got %#v", sb["vm"])
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if s, _ := sb[k].(string); !sdkTime.MatchString(s) {
			t.Errorf("%s = %q is not a UTC RFC 3339 time with at most 6 fraction digits", k, s)
		}
	}
	for k := range sb {
		if strings.Contains(k, "_") {
			t.Errorf("sandbox object key %q is not camelCase", k)
		}
	}
}

func TestConformanceCreateDefaultsAndGet(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})

	// Only the required keys: every optional field takes the platform default.
	a := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "a", "docker_image": "python:3.12"}).must(t, 201)
	sb := a.body
	checkSandboxObject(t, sb)
	want := map[string]any{
		"name": "a", "dockerImage": "python:3.12", "cpuCores": 1.0, "memoryGB": 1.0, "diskSizeGB": 5.0,
		"gpuCount": 0.0, "timeoutMinutes": 60.0, "vm": true, "arch": "amd64", "status": "PENDING",
		"diskMountPath": "/sandbox-workspace", "startCommand": nil,
		"networkAllowlist": nil, "networkDenylist": nil, "startedAt": nil, "terminatedAt": nil,
	}
	for k, v := range want {
		if sb[k] != v {
			t.Errorf("%s = %#v, want %#v", k, sb[k], v)
		}
	}
	if l := sb["labels"].([]any); len(l) != 0 {
		t.Errorf("labels = %v, want []", l)
	}

	// Containers were retired: vm false is 410 with a detail, whatever
	// else the body says.
	gone := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "c", "docker_image": "alpine", "vm": false, "cpu_cores": 0.5}).must(t, 410)
	if d := detailText(gone); !strings.Contains(d, "retired") {
		t.Errorf("410 detail = %q, want it to say containers were retired", d)
	}
	// Whole vCPUs: a fraction is 422, a whole float (the 0.2.39 SDK sends
	// 1.0) is read as the integer; arch is echoed. Secrets come back masked.
	frac := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "f", "docker_image": "i", "cpu_cores": 1.5}).must(t, 422)
	if d := detailText(frac); !strings.Contains(d, "cpu_cores") {
		t.Errorf("422 detail = %q, want it to name cpu_cores", d)
	}
	c := h.req("POST", "/api/v1/sandbox", map[string]any{
		"name": "c", "docker_image": "alpine", "vm": true, "cpu_cores": 2.0, "arch": "arm64", "labels": []string{"x"},
		"secrets": map[string]string{"TOKEN": "hunter22"}, "environment_vars": map[string]string{"A": "b"},
	}).must(t, 201).body
	checkSandboxObject(t, c)
	if c["startCommand"] != nil || c["vm"] != true || c["cpuCores"] != 2.0 || c["memoryGB"] != 1.0 || c["arch"] != "arm64" {
		t.Errorf("VM with values: %v", c)
	}
	if got := c["secrets"].(map[string]any)["TOKEN"]; got != "***" {
		t.Errorf("secret not masked: %v", got)
	}
	if strings.Contains(h.req("GET", "/api/v1/sandbox/"+c["id"].(string), nil).raw, "hunter22") {
		t.Error("a secret value leaked in GET")
	}

	// A start command is the argv object.
	v := h.req("POST", "/api/v1/sandbox", map[string]any{
		"name": "v", "docker_image": "img",
		"start_command": map[string]any{"executable": "/bin/x", "args": []string{"a"}},
	}).must(t, 201).body
	if sc, _ := v["startCommand"].(map[string]any); sc["executable"] != "/bin/x" || len(sc["args"].([]any)) != 1 {
		t.Errorf("startCommand = %#v", v["startCommand"])
	}

	// GET returns the same object; unknown ids are 404 with a detail.
	g := h.req("GET", "/api/v1/sandbox/"+sb["id"].(string), nil).must(t, 200).body
	if g["id"] != sb["id"] || g["createdAt"] != sb["createdAt"] {
		t.Errorf("GET = %v", g)
	}
	nf := h.req("GET", "/api/v1/sandbox/nope", nil).must(t, 404)
	keysOf(t, "404", nf.body, "detail")

	// Validation is the SDK's create rules; the first broken one is named.
	bad := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "g", "docker_image": "i", "gpu_count": 1}).must(t, 422)
	if d := detailText(bad); !strings.Contains(d, "gpu_type") {
		t.Errorf("detail = %q, want it to name gpu_type", d)
	}
	// The 0.2.39 SDK's default create: no vm key, the default shell command
	// still serialised (its CreateSandboxRequest default), guaranteed false,
	// cpu_cores 1.0. The platform is said to drop legacy string commands, so
	// this is a VM without a command.
	sdkDefault := h.req("POST", "/api/v1/sandbox", map[string]any{
		"name": "sdk", "docker_image": "i", "start_command": "tail -f /dev/null", "cpu_cores": 1.0, "memory_gb": 1.0,
		"disk_size_gb": 5.0, "gpu_count": 0, "timeout_minutes": 60, "labels": []string{}, "guaranteed": false,
		"idempotency_key": "0123456789abcdef0123456789abcdef",
	}).must(t, 201).body
	if sdkDefault["vm"] != true || sdkDefault["startCommand"] != nil {
		t.Errorf("SDK default create: vm=%v startCommand=%#v, want a VM without a command", sdkDefault["vm"], sdkDefault["startCommand"])
	}
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "s", "docker_image": "i", "vm": true, "start_command": "echo"}).must(t, 201)
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "t", "docker_image": "i", "timeout_minutes": 0}).must(t, 422)
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "a", "docker_image": "i", "arch": "riscv"}).must(t, 422)
	h.req("POST", "/api/v1/sandbox", `{"name": "x",`).must(t, 422)
	h.req("POST", "/api/v1/sandbox", map[string]any{"name": "x", "docker_image": "i", "cpu_cores": "many"}).must(t, 422)
	// Unknown routes under /api/v1 are JSON 404s too.
	keysOf(t, "unknown route", h.req("GET", "/api/v1/nothing", nil).must(t, 404).body, "detail")
}

func TestConformanceCreateTimeListsCanonical(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	sb := h.req("POST", "/api/v1/sandbox", map[string]any{
		"name": "l", "docker_image": "i", "network_allowlist": []string{"Example.COM", "1.2.3.4", "bücher.de", "example.com."},
	}).must(t, 201).body
	want := []string{"example.com", "1.2.3.4/32", "xn--bcher-kva.de"}
	if got := strs(sb["networkAllowlist"]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("networkAllowlist = %v, want %v (canonical, deduplicated, in order)", got, want)
	}
	if sb["networkDenylist"] != nil {
		t.Errorf("networkDenylist = %v, want null", sb["networkDenylist"])
	}
	p := h.req("GET", "/api/v1/sandbox/"+sb["id"].(string)+"/egress-policy", nil).must(t, 200).body
	if p["generation"] != 0.0 || p["applied_generation"] != -1.0 || p["applied"] != false {
		t.Errorf("create-time lists are generation 0, unapplied: %v", p)
	}
	if got := strs(p["policy"].(map[string]any)["allowlist"]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("policy.allowlist = %v", got)
	}
	// The SDK's entry rule, its wording: the entry in single quotes.
	bad := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "l", "docker_image": "i", "network_denylist": []string{"ok.com", "a..com"}}).must(t, 422)
	if d := detailText(bad); d != "network_denylist: 'a..com' contains an empty label" {
		t.Errorf("detail %q", d)
	}
	// What the SDK lets through is stored, lowercased.
	loose := h.req("POST", "/api/v1/sandbox", map[string]any{"name": "l", "docker_image": "i", "network_denylist": []string{"A_B.com"}}).must(t, 201)
	if got := strs(loose.body["networkDenylist"]); fmt.Sprint(got) != "[a_b.com]" {
		t.Errorf("networkDenylist = %v", got)
	}
}

func TestConformanceList(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	var ids []string
	for i := range 5 {
		labels := []string{"all"}
		if i%2 == 0 {
			labels = append(labels, "even")
		}
		if i == 0 {
			labels = append(labels, "first")
		}
		ids = append(ids, h.create(map[string]any{"name": fmt.Sprint("s", i), "labels": labels}))
	}
	page := h.req("GET", "/api/v1/sandbox?page=1&per_page=2", nil).must(t, 200).body
	keysOf(t, "list envelope", page, "sandboxes", "total", "page", "perPage", "hasNext")
	if page["total"] != 5.0 || page["page"] != 1.0 || page["perPage"] != 2.0 || page["hasNext"] != true {
		t.Errorf("page 1 = %v", page)
	}
	items := page["sandboxes"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["id"] != ids[0] {
		t.Errorf("page 1 items = %v", items)
	}
	checkSandboxObject(t, items[0].(map[string]any))
	last := h.req("GET", "/api/v1/sandbox?page=3&per_page=2", nil).must(t, 200).body
	if len(last["sandboxes"].([]any)) != 1 || last["hasNext"] != false {
		t.Errorf("page 3 = %v", last)
	}
	empty := h.req("GET", "/api/v1/sandbox?page=9&per_page=2", nil).must(t, 200).body
	if s, ok := empty["sandboxes"].([]any); !ok || len(s) != 0 {
		t.Errorf("a page past the end must be an empty array: %v", empty["sandboxes"])
	}
	// Defaults and the per_page bounds (1 to 1,000, never cut).
	if d := h.req("GET", "/api/v1/sandbox", nil).must(t, 200).body; d["page"] != 1.0 || d["perPage"] != 50.0 {
		t.Errorf("defaults = page %v perPage %v", d["page"], d["perPage"])
	}
	if d := h.req("GET", "/api/v1/sandbox?per_page=1000", nil).must(t, 200).body; d["perPage"] != 1000.0 {
		t.Errorf("per_page=1000 answered perPage %v", d["perPage"])
	}
	h.req("GET", "/api/v1/sandbox?per_page=1001", nil).must(t, 422)
	h.req("GET", "/api/v1/sandbox?per_page=0", nil).must(t, 422)
	h.req("GET", "/api/v1/sandbox?page=0", nil).must(t, 422)

	// labels are ALL-of.
	count := func(q string) int {
		return int(h.req("GET", "/api/v1/sandbox?"+q, nil).must(t, 200).body["total"].(float64))
	}
	if n := count("labels=all&labels=even"); n != 3 {
		t.Errorf("labels=all&labels=even matched %d, want 3", n)
	}
	if n := count("labels=even&labels=first"); n != 1 {
		t.Errorf("labels=even&labels=first matched %d, want 1", n)
	}
	if n := count("labels=nope"); n != 0 {
		t.Errorf("labels=nope matched %d", n)
	}

	// is_active=true hides terminal sandboxes; false or absent does not.
	h.req("DELETE", "/api/v1/sandbox/"+ids[1], nil).must(t, 200)
	for q, want := range map[string]int{"is_active=true": 4, "is_active=false": 5, "": 5, "status=TERMINATED": 1, "status=PENDING": 4} {
		if n := count(q); n != want {
			t.Errorf("%q matched %d, want %d", q, n, want)
		}
	}
	user := h.req("GET", "/api/v1/sandbox/"+ids[0], nil).body["userId"].(string)
	if n := count("user_id=" + url.QueryEscape(user)); n != 5 {
		t.Errorf("user_id matched %d", n)
	}
	if n := count("user_id=someone-else"); n != 0 {
		t.Errorf("user_id=someone-else matched %d", n)
	}
	h.create(map[string]any{"team_id": "team-1"})
	if n := count("team_id=team-1"); n != 1 {
		t.Errorf("team_id matched %d", n)
	}
}

func TestConformanceDelete(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	id := h.create(map[string]any{})
	d := h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200).body
	if d["success"] != true || d["message"] == nil {
		t.Errorf("DELETE answer = %v", d)
	}
	// A retried DELETE must look like success.
	if d := h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200).body; d["success"] != true {
		t.Errorf("repeat DELETE = %v", d)
	}
	g := h.req("GET", "/api/v1/sandbox/"+id, nil).must(t, 200).body
	if g["status"] != "TERMINATED" || g["terminatedAt"] == nil {
		t.Errorf("after DELETE: status %v terminatedAt %v", g["status"], g["terminatedAt"])
	}
	keysOf(t, "unknown DELETE", h.req("DELETE", "/api/v1/sandbox/nope", nil).must(t, 404).body, "detail")
}

func TestConformanceBulkDelete(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	a, b := h.create(map[string]any{}), h.create(map[string]any{"labels": []string{"x", "y"}})
	c := h.create(map[string]any{"labels": []string{"x"}})
	res := h.req("DELETE", "/api/v1/sandbox", map[string]any{"sandbox_ids": []string{a, "nope"}, "all_users": false}).must(t, 200).body
	keysOf(t, "bulk delete", res, "succeeded", "failed", "message")
	if got := strs(res["succeeded"]); len(got) != 1 || got[0] != a {
		t.Errorf("succeeded = %v", got)
	}
	failed := res["failed"].([]any)
	if len(failed) != 1 {
		t.Fatalf("failed = %v", failed)
	}
	f := failed[0].(map[string]any)
	keysOf(t, "failed entry", f, "sandbox_id", "error")
	if f["sandbox_id"] != "nope" {
		t.Errorf("failed entry = %v", f)
	}
	for k, v := range f {
		if _, ok := v.(string); !ok {
			t.Errorf("failed[%s] = %#v is not a string", k, v)
		}
	}
	if _, ok := res["message"].(string); !ok {
		t.Errorf("message = %#v", res["message"])
	}
	// By labels (ALL-of): only b carries both.
	res = h.req("DELETE", "/api/v1/sandbox", map[string]any{"labels": []string{"x", "y"}, "all_users": false}).must(t, 200).body
	if got := strs(res["succeeded"]); len(got) != 1 || got[0] != b {
		t.Errorf("label delete succeeded = %v, want [%s]", got, b)
	}
	if s := h.req("GET", "/api/v1/sandbox/"+c, nil).body["status"]; s != "PENDING" {
		t.Errorf("c was deleted by a label delete it does not match: %v", s)
	}
	h.req("DELETE", "/api/v1/sandbox", map[string]any{"all_users": false}).must(t, 422)
}

func TestConformanceBatchStatus(t *testing.T) {
	h := newHarness(t, primemock.Options{BootDelay: time.Hour})
	id := h.create(map[string]any{})
	res := h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{id, "nope"}}).must(t, 200).body
	keysOf(t, "batch", res, "statuses", "errors")
	st := res["statuses"].([]any)
	if len(st) != 1 {
		t.Fatalf("statuses = %v", st)
	}
	keysOf(t, "status entry", st[0].(map[string]any), "sandbox_id", "status", "error_type", "error_message", "pending_image_build_id")
	if s := st[0].(map[string]any); s["sandbox_id"] != id || s["status"] != "PENDING" {
		t.Errorf("status entry = %v", s)
	}
	errs := res["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("errors = %v", errs)
	}
	e := errs[0].(map[string]any)
	keysOf(t, "error entry", e, "sandbox_id", "code", "message")
	if e["sandbox_id"] != "nope" || e["code"] != "NOT_FOUND" {
		t.Errorf("error entry = %v", e)
	}
	// Only unknown ids: still 200, never a top-level 404.
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{"x"}}).must(t, 200)

	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint("id-", i)
	}
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": many}).must(t, 422)
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": many[:100]}).must(t, 200)
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{}}).must(t, 422)
	h.req("POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{id, id}}).must(t, 422)
}

func TestConformanceEgressPolicy(t *testing.T) {
	// A long boot keeps the fresh VM PENDING, so its bookkeeping is stable.
	slow := newHarness(t, primemock.Options{BootDelay: time.Hour})
	id := slow.create(map[string]any{})
	p := slow.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200).body
	keysOf(t, "egress status", p, "policy", "generation", "applied_generation", "applied")
	pol := p["policy"].(map[string]any)
	keysOf(t, "policy", pol, "allowlist", "denylist")
	if pol["allowlist"] != nil || fmt.Sprint(pol["denylist"]) != "[]" || p["generation"] != 0.0 || p["applied_generation"] != -1.0 || p["applied"] != false {
		t.Errorf("fresh VM = %v", p)
	}
	// A PUT before RUNNING is refused (running or paused sandboxes only);
	// the policy is unchanged.
	slow.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": []string{"a.com"}, "denylist": nil}).must(t, 409)
	if p := slow.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200).body; p["generation"] != 0.0 {
		t.Errorf("a refused PUT changed the policy: %v", p)
	}

	h := newHarness(t, primemock.Options{BootDelay: 20 * time.Millisecond, ApplyDelay: 20 * time.Millisecond})
	id = h.runningVM()
	p = h.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200).body
	if p["generation"] != 0.0 || p["applied_generation"] != -1.0 || p["applied"] != false {
		t.Errorf("RUNNING untouched VM: want the SDK fixture's generation 0, applied_generation -1, applied false: %v", p)
	}
	if !h.reachable(id, "example.com") {
		t.Error("an untouched VM must be open")
	}

	put := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{
		"allowlist": []string{"Example.COM", "1.2.3.4", "bücher.de"}, "denylist": nil,
	}).must(t, 202).body
	keysOf(t, "PUT answer", put, "policy", "generation", "applied_generation", "applied")
	want := []string{"example.com", "1.2.3.4/32", "xn--bcher-kva.de"}
	pol = put["policy"].(map[string]any)
	if fmt.Sprint(strs(pol["allowlist"])) != fmt.Sprint(want) || pol["denylist"] != nil {
		t.Errorf("stored policy = %v, want allowlist %v", pol, want)
	}
	if put["generation"] != 1.0 || put["applied_generation"] != -1.0 || put["applied"] != false {
		t.Errorf("PUT answer = %v", put)
	}
	h.waitEvent(primemock.EventPolicyApplied, id, 1)
	p = h.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).must(t, 200).body
	if p["generation"] != 1.0 || p["applied_generation"] != 1.0 || p["applied"] != true {
		t.Errorf("after apply = %v", p)
	}
	sb := h.req("GET", "/api/v1/sandbox/"+id, nil).body
	if fmt.Sprint(strs(sb["networkAllowlist"])) != fmt.Sprint(want) || sb["networkDenylist"] != nil {
		t.Errorf("the sandbox object mirrors the desired policy: %v / %v", sb["networkAllowlist"], sb["networkDenylist"])
	}
	vmp := sb["advancedConfigs"].(map[string]any)["vmEgressPolicy"].(map[string]any)
	if vmp["generation"] != 1.0 || vmp["accepted"] != true {
		t.Errorf("advancedConfigs.vmEgressPolicy = %v", vmp)
	}

	// An unchanged policy is still a new generation; applied goes false
	// until the data plane catches up, applied_generation stays put.
	again := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": want, "denylist": nil}).must(t, 202).body
	if again["generation"] != 2.0 || again["applied_generation"] != 1.0 || again["applied"] != false {
		t.Errorf("repeat PUT = %v", again)
	}

	// Exactly one list; valid entries; a detail naming the entry.
	for _, body := range []map[string]any{
		{"allowlist": []string{"a.com"}, "denylist": []string{"b.com"}},
		{"allowlist": nil, "denylist": nil},
		{},
	} {
		h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", body).must(t, 422)
	}
	for _, entry := range []string{"a..com", "http://x.com", "*", "::1", "x.com:443"} {
		bad := h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": []string{"ok.com", entry}, "denylist": nil}).must(t, 422)
		if d := detailText(bad); !strings.HasPrefix(d, "allowlist: '"+entry+"'") {
			t.Errorf("detail %q does not name %q", d, entry)
		}
	}
	// Both keys are required; 256 entries are the limit.
	h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": []string{"a.com"}}).must(t, 422)
	many := make([]string, 257)
	for i := range many {
		many[i] = "a.com"
	}
	if d := detailText(h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": nil, "denylist": many}).must(t, 422)); d != "denylist supports at most 256 entries" {
		t.Errorf("257 entries: %v", d)
	}
	if g := h.req("GET", "/api/v1/sandbox/"+id+"/egress-policy", nil).body["generation"]; g != 2.0 {
		t.Errorf("rejected PUTs changed the generation: %v", g)
	}

	// Unknown ids are 404; terminal 409.
	for _, m := range []string{"GET", "PUT"} {
		h.req(m, "/api/v1/sandbox/nope/egress-policy", map[string]any{"allowlist": []string{"a.com"}, "denylist": nil}).must(t, 404)
	}
	h.req("DELETE", "/api/v1/sandbox/"+id, nil).must(t, 200)
	h.req("PUT", "/api/v1/sandbox/"+id+"/egress-policy", map[string]any{"allowlist": nil, "denylist": []string{}}).must(t, 409)
}

func TestConformanceLogsErrorContextAuth(t *testing.T) {
	fixed := time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, primemock.Options{Now: func() time.Time { return fixed }})
	id := h.running(map[string]any{})
	logs := h.req("GET", "/api/v1/sandbox/"+id+"/logs", nil).must(t, 200).body
	keysOf(t, "logs", logs, "logs")
	if s, _ := logs["logs"].(string); !strings.Contains(s, "running") {
		t.Errorf("logs = %q", s)
	}
	h.req("GET", "/api/v1/sandbox/nope/logs", nil).must(t, 404)

	ec := h.req("GET", "/api/v1/sandbox/"+id+"/error-context", nil).must(t, 200).body
	if ec["status"] != "RUNNING" {
		t.Errorf("error-context = %v", ec)
	}
	h.req("GET", "/api/v1/sandbox/nope/error-context", nil).must(t, 404)

	auth := h.req("POST", "/api/v1/sandbox/"+id+"/auth", nil).must(t, 200).body
	keysOf(t, "auth", auth, "gateway_url", "token", "user_ns", "job_id", "expires_at")
	if gw := auth["gateway_url"].(string); !strings.HasPrefix(gw, h.ts.URL+"/") {
		t.Errorf("gateway_url %q is not derived from the request's host %s", gw, h.ts.URL)
	}
	exp, err := time.Parse(time.RFC3339, auth["expires_at"].(string))
	if err != nil || !regexp.MustCompile(`^[^.]*Z$`).MatchString(auth["expires_at"].(string)) {
		t.Errorf("expires_at %q: want RFC 3339 without a fraction (%v)", auth["expires_at"], err)
	}
	if !exp.Equal(fixed.Add(10 * time.Minute)) {
		t.Errorf("expires_at %s, want the 10 min default after %s", exp, fixed)
	}
	h.req("POST", "/api/v1/sandbox/nope/auth", nil).must(t, 404)
}

func TestConformanceAuthentication(t *testing.T) {
	h := newHarness(t, primemock.Options{})
	keysOf(t, "401", h.reqKey("", "GET", "/api/v1/sandbox", nil).must(t, 401).body, "detail")
	h.reqKey("", "POST", "/api/v1/sandbox/status:batchGet", map[string]any{"sandbox_ids": []string{"a"}}).must(t, 401)
	h.reqKey("anything", "GET", "/api/v1/sandbox", nil).must(t, 200)

	strict := newHarness(t, primemock.Options{APIKey: "right"})
	strict.reqKey("wrong", "GET", "/api/v1/sandbox", nil).must(t, 401)
	strict.reqKey("right", "GET", "/api/v1/sandbox", nil).must(t, 200)
	// Introspection needs no key.
	strict.reqKey("", "GET", "/_mock/stats", nil).must(t, 200)
	strict.reqKey("", "GET", "/_mock/events", nil).must(t, 200)
}
