package prime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Networks: a create always carries rules (an empty list included), the
// 204s of delete and member removal are success, members are PUT with
// their tags; bad rules are refused before any request.
func TestNetworkCalls(t *testing.T) {
	f := newFakeAPI()
	network := map[string]any{"id": "net-1", "name": "tools", "rules": nil, "members": []any{map[string]any{"sandbox_id": "sbx-1", "tags": []string{"agent"}}}}
	f.mux.HandleFunc("POST /api/v1/sandbox/networks", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 201, network) })
	f.mux.HandleFunc("GET /api/v1/sandbox/networks/{id}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, network) })
	f.mux.HandleFunc("GET /api/v1/sandbox/networks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"networks": []any{network}})
	})
	noContent := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
	f.mux.HandleFunc("DELETE /api/v1/sandbox/networks/{id}", noContent)
	f.mux.HandleFunc("DELETE /api/v1/sandbox/networks/{id}/members/{sid}", noContent)
	f.mux.HandleFunc("PUT /api/v1/sandbox/networks/{id}/rules", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, network) })
	f.mux.HandleFunc("PUT /api/v1/sandbox/networks/{id}/members/{sid}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{}) })
	team := "team-9"
	c, _ := newTestClient(t, f, func(o *Options) { o.Config.TeamID = &team })
	ctx := context.Background()

	n, err := c.CreateNetwork(ctx, CreateNetworkRequest{Name: "tools"})
	if err != nil || n.ID != "net-1" || n.Rules == nil || len(n.Members) != 1 {
		t.Fatalf("CreateNetwork = %+v, %v", n, err)
	}
	if m, ok := n.Member("sbx-1"); !ok || m.Tags[0] != "agent" {
		t.Fatalf("member %+v", m)
	}
	if body := f.requests("POST", "/api/v1/sandbox/networks")[0].body; body != `{"name":"tools","team_id":"team-9","rules":[]}` {
		t.Fatalf("create body %s: rules must be sent explicitly, the team in the body", body)
	}
	if _, err := c.CreateNetwork(ctx, CreateNetworkRequest{Name: "x", Rules: []NetworkRule{{From: "agents", To: "*", Ports: []int{1}}}}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("bad selector: %v", err)
	}
	if _, err := c.GetNetwork(ctx, "net-1"); err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListNetworks(ctx, ""); err != nil || len(list) != 1 {
		t.Fatalf("ListNetworks = %v, %v", list, err)
	}
	if q := f.requests("GET", "/api/v1/sandbox/networks")[0].query; q != "team_id=team-9" {
		t.Fatalf("list query %q", q)
	}
	rules := []NetworkRule{{From: "tag:agent", To: "tag:tools", Ports: []int{8080}}}
	if err := c.ReplaceNetworkRules(ctx, "net-1", rules); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceNetworkRules(ctx, "net-1", nil); err != nil {
		t.Fatal(err)
	}
	puts := f.requests("PUT", "/api/v1/sandbox/networks/net-1/rules")
	if puts[0].body != `{"rules":[{"from":"tag:agent","to":"tag:tools","ports":[8080]}]}` || puts[1].body != `{"rules":[]}` {
		t.Fatalf("rules bodies %q", puts)
	}
	if err := c.PutNetworkMember(ctx, "net-1", "sbx-2", nil); err != nil {
		t.Fatal(err)
	}
	if body := f.requests("PUT", "/api/v1/sandbox/networks/net-1/members/sbx-2")[0].body; body != `{"tags":[]}` {
		t.Fatalf("member body %s", body)
	}
	if err := c.PutNetworkMember(ctx, "net-1", "sbx-2", []string{"bad tag"}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("bad tag: %v", err)
	}
	if err := c.RemoveNetworkMember(ctx, "net-1", "sbx-2"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNetwork(ctx, "net-1"); err != nil {
		t.Fatal(err)
	}
}

// Volumes: the team is a body key on create and a query parameter on get,
// update, delete and list; an owner/name reference stays two segments;
// publish returns the checkpoint to wait on.
func TestVolumeCalls(t *testing.T) {
	f := newFakeAPI()
	vol := map[string]any{"name": "data", "team_id": "team-9", "size_gb": 10, "visibility": "PRIVATE", "created_at": "2026-07-17T00:00:00Z"}
	f.mux.HandleFunc("POST /api/v1/sandbox/volumes", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 201, vol) })
	f.mux.HandleFunc("GET /api/v1/sandbox/volumes/{ref...}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, vol) })
	f.mux.HandleFunc("GET /api/v1/sandbox/volumes", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"volumes": []any{vol}})
	})
	f.mux.HandleFunc("PATCH /api/v1/sandbox/volumes/{ref...}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, vol) })
	f.mux.HandleFunc("DELETE /api/v1/sandbox/volumes/{ref...}", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{"success": true}) })
	f.mux.HandleFunc("POST /api/v1/sandbox/{id}/volumes/{name}/publish", func(w http.ResponseWriter, r *http.Request) {
		ck := checkpointJSON("ck-pub", CheckpointPending)
		ck["merge"] = MergePending
		writeJSON(w, 200, ck)
	})
	team := "team-9"
	c, _ := newTestClient(t, f, func(o *Options) { o.Config.TeamID = &team })
	ctx := context.Background()

	v, err := c.CreateVolume(ctx, CreateVolumeRequest{Name: "data", SizeGB: 10})
	if err != nil || v.SizeGB != 10 || v.CreatedAt.IsZero() {
		t.Fatalf("CreateVolume = %+v, %v", v, err)
	}
	if body := f.requests("POST", "/api/v1/sandbox/volumes")[0].body; body != `{"name":"data","team_id":"team-9","size_gb":10}` {
		t.Fatalf("create body %s", body)
	}
	for _, bad := range []CreateVolumeRequest{{Name: "Data", SizeGB: 1}, {Name: "d", SizeGB: 101}, {Name: "d"}} {
		if _, err := c.CreateVolume(ctx, bad); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := c.GetVolume(ctx, "me/data", ""); err != nil {
		t.Fatal(err)
	}
	if r := f.requests("GET", "/api/v1/sandbox/volumes/me/data"); len(r) != 1 || r[0].query != "team_id=team-9" {
		t.Fatalf("get by owner/name: %q", r)
	}
	if _, err := c.ListVolumes(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if q := f.requests("GET", "/api/v1/sandbox/volumes")[0].query; q != "team_id=other" {
		t.Fatalf("an explicit team wins: %q", q)
	}
	size, public := 20, VolumePublic
	if _, err := c.UpdateVolume(ctx, "data", UpdateVolumeRequest{SizeGB: &size, Visibility: &public}, ""); err != nil {
		t.Fatal(err)
	}
	if r := f.requests("PATCH", "/api/v1/sandbox/volumes/data")[0]; r.body != `{"size_gb":20,"visibility":"PUBLIC"}` || r.query != "team_id=team-9" {
		t.Fatalf("patch %+v", r)
	}
	odd := "public"
	for _, bad := range []UpdateVolumeRequest{{}, {Visibility: &odd}} {
		if _, err := c.UpdateVolume(ctx, "data", bad, ""); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := c.DeleteVolume(ctx, "data", ""); err != nil {
		t.Fatal(err)
	}
	ck, err := c.PublishVolume(ctx, "sbx-1", "data")
	if err != nil || ck.ID != "ck-pub" || deref(ck.Merge) != MergePending {
		t.Fatalf("PublishVolume = %+v, %v", ck, err)
	}
	if r := f.requests("POST", "/api/v1/sandbox/sbx-1/volumes/data/publish"); len(r) != 1 || r[0].body != "" {
		t.Fatalf("publish %q", r)
	}
}

// Images: paging counts logical images, so a page longer than its limit
// still moves the offset by the limit; vm-build returns the build to poll;
// the build wait ends on COMPLETED and fails on FAILED.
func TestImageCalls(t *testing.T) {
	f := newFakeAPI()
	row := func(name, kind, status string) map[string]any {
		return map[string]any{"id": name + kind, "artifactType": kind, "imageName": name, "imageTag": "1", "status": status,
			"visibility": "PRIVATE", "createdAt": "2026-07-17T00:00:00Z", "ownerType": "personal"}
	}
	f.mux.HandleFunc("GET /api/v1/images", func(w http.ResponseWriter, r *http.Request) {
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		total := 3
		switch offset {
		case 0: // two logical images, three rows
			writeJSON(w, 200, map[string]any{"data": []any{row("a", "CONTAINER", "COMPLETED"), row("a", ArtifactVM, "COMPLETED"), row("b", "CONTAINER", "COMPLETED")}, "totalCount": total, "offset": 0, "limit": 2})
		default:
			writeJSON(w, 200, map[string]any{"data": []any{row("c", ArtifactVM, "BUILDING")}, "totalCount": total, "offset": offset, "limit": 2})
		}
	})
	var polls atomic.Int32
	f.mux.HandleFunc("POST /api/v1/images/{name}/{tag}/vm-build", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"success": true, "message": "started", "buildId": "b-" + r.PathValue("name"), "artifactBuildId": "ab-1"})
	})
	f.mux.HandleFunc("GET /api/v1/images/build/{id}", func(w http.ResponseWriter, r *http.Request) {
		n := polls.Add(1)
		switch {
		case r.PathValue("id") == "b-bad":
			writeJSON(w, 200, map[string]any{"build_id": "b-bad", "status": "FAILED", "error_message": "not linux/amd64"})
		case n < 3:
			writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "status": "BUILDING"})
		default:
			writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "status": "COMPLETED"})
		}
	})
	c, _ := newTestClient(t, f, nil)
	ctx := testContext(t)

	items, err := c.ListImages(ctx, ListImagesOptions{Limit: 2, TeamID: "t1"})
	if err != nil || len(items) != 4 {
		t.Fatalf("ListImages = %d rows, %v", len(items), err)
	}
	reqs := f.requests("GET", "/api/v1/images")
	if len(reqs) != 2 || reqs[1].query != "limit=2&offset=2&teamId=t1" {
		t.Fatalf("pages %q", reqs)
	}
	if vm, ok := VMArtifact(items, "a", "1"); !ok || !ImageArtifactReady(vm.Status) {
		t.Fatalf("a's VM artifact: %+v %v", vm, ok)
	}
	if _, ok := VMArtifact(items, "b", "1"); ok {
		t.Fatal("b has no VM artifact")
	}
	if vm, ok := VMArtifact(items, "c", "1"); !ok || ImageArtifactReady(vm.Status) {
		t.Fatalf("c's VM artifact is building: %+v", vm)
	}

	b, err := c.RequestVMBuild(ctx, "b", "1", VMBuildRequest{})
	if err != nil || b.BuildID != "b-b" {
		t.Fatalf("RequestVMBuild = %+v, %v", b, err)
	}
	if body := f.requests("POST", "/api/v1/images/b/1/vm-build")[0].body; body != `{"teamId":null,"ownerScope":null}` {
		t.Fatalf("vm-build body %s", body)
	}
	if _, err := c.RequestVMBuild(ctx, "me/b", "1", VMBuildRequest{}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("an owner in the name: %v", err)
	}
	var seen []string
	build, err := c.WaitForImageBuild(ctx, b.BuildID, WaitImageBuildOptions{
		Schedule:   Backoff{Initial: 5 * time.Millisecond, Max: 5 * time.Millisecond},
		OnProgress: func(b ImageBuild) { seen = append(seen, b.Status) },
	})
	if err != nil || build.Status != ImageBuildCompleted || strings.Join(seen, ",") != "BUILDING,COMPLETED" {
		t.Fatalf("WaitForImageBuild = %+v, %v (%v)", build, err, seen)
	}
	_, err = c.WaitForImageBuild(ctx, "b-bad", WaitImageBuildOptions{})
	var failed *ImageBuildFailedError
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "b-bad is FAILED: not linux/amd64") {
		t.Fatalf("failed build: %v", err)
	}
}

// SSH sessions: a public key goes out, a private key never does; close is
// a DELETE whose answer may be anything.
func TestSSHSessionCalls(t *testing.T) {
	f := newFakeAPI()
	f.mux.HandleFunc("POST /api/v1/sandbox/{id}/ssh-session", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"session_id": "s-1", "sandbox_id": r.PathValue("id"), "host": "ssh.example", "port": 2222,
			"expires_at": "2026-07-17T00:15:00", "ttl_seconds": 900})
	})
	f.mux.HandleFunc("DELETE /api/v1/sandbox/{id}/ssh-session/{sid}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"success": true})
	})
	c, _ := newTestClient(t, f, nil)
	ctx := context.Background()
	s, err := c.CreateSSHSession(ctx, "sbx-1", CreateSSHSessionRequest{PublicKey: "ssh-ed25519 AAAAC3Nz me@host\n"})
	if err != nil || s.Port != 2222 || s.ExpiresAt.IsZero() || s.TTLSeconds != 900 {
		t.Fatalf("CreateSSHSession = %+v, %v", s, err)
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(f.requests("POST", "/api/v1/sandbox/sbx-1/ssh-session")[0].body), &body)
	if body["public_key"] != "ssh-ed25519 AAAAC3Nz me@host" || body["ttl_seconds"] != nil {
		t.Fatalf("body %v", body)
	}
	if _, err := c.CreateSSHSession(ctx, "sbx-1", CreateSSHSessionRequest{PublicKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----"}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("a private key: %v", err)
	}
	long := 3601
	if _, err := c.CreateSSHSession(ctx, "sbx-1", CreateSSHSessionRequest{PublicKey: "ssh-ed25519 AAAA", TTLSeconds: &long}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("ttl: %v", err)
	}
	if n := len(f.requests("POST", "/api/v1/sandbox/sbx-1/ssh-session")); n != 1 {
		t.Fatalf("%d creates sent, want only the valid one", n)
	}
	if err := c.CloseSSHSession(ctx, "sbx-1", s.SessionID); err != nil {
		t.Fatal(err)
	}
}
