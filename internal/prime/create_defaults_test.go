package prime

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"sync/atomic"
	"testing"
)

// defaultBody is the body the client sends for CreateSandboxRequest{Name:
// "n", DockerImage: "img"} before it adds idempotency_key: the defaults it
// always sends, and nothing else. No vm (every sandbox is a VM; an omitted
// vm is accepted by every SDK version, an explicit false answered 410), no
// guaranteed (a container option, retired), no start_command (the 0.2.39
// SDK's "tail -f /dev/null" must not be sent: a VM whose start process
// exits stops), no arch (the platform's default, amd64).
var defaultBody = map[string]any{
	"name": "n", "docker_image": "img",
	"cpu_cores": 1.0, "memory_gb": 1.0, "disk_size_gb": 5.0, "gpu_count": 0.0,
	"timeout_minutes": 60.0, "labels": []any{},
}

func withoutKeys(m map[string]any, drop ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, k := range drop {
		delete(out, k)
	}
	return out
}

func with(m map[string]any, kv ...any) map[string]any {
	out := withoutKeys(m)
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestCreateSendsTheDefaults(t *testing.T) {
	cpu, gpus, timeout := 4, 1, -1
	gpuType, arch := "H100_80GB", ArchARM64
	tests := []struct {
		name string
		req  CreateSandboxRequest
		want map[string]any // without idempotency_key
	}{
		{"minimal: the defaults, no vm, no start command", CreateSandboxRequest{Name: "n", DockerImage: "img"}, defaultBody},
		{"explicit values are kept", CreateSandboxRequest{
			Name: "n", DockerImage: "img", CPUCores: &cpu, GPUCount: &gpus, GPUType: &gpuType, TimeoutMinutes: &timeout,
			Labels: []string{"a"}, StartCommand: ArgvCommand("/bin/x", "y"), Arch: &arch,
		}, with(defaultBody, "cpu_cores", 4.0, "gpu_count", 1.0, "gpu_type", gpuType, "timeout_minutes", -1.0,
			"labels", []any{"a"}, "start_command", map[string]any{"executable": "/bin/x", "args": []any{"y"}}, "arch", "arm64")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewDecoder(r.Body).Decode(&body)
				writeJSON(w, 200, sandboxJSON("sbx-1"))
			}), nil)
			if _, err := c.CreateSandbox(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			key, _ := body["idempotency_key"].(string)
			if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(key) {
				t.Errorf("idempotency_key = %#v, want 32 hex characters", body["idempotency_key"])
			}
			got := withoutKeys(body, "idempotency_key")
			for k, w := range tt.want {
				if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
					t.Errorf("%s = %#v (present %t), want %#v", k, g, ok, w)
				}
			}
			for k, g := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("unexpected key %s = %#v", k, g)
				}
			}
		})
	}
}

// A string start command (the containers' shell form) is refused before
// anything is sent, and the defaults never add one.
func TestCreateValidatesBeforeDefaults(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, 200, sandboxJSON("sbx-1"))
	}), nil)
	_, err := c.CreateSandbox(context.Background(), CreateSandboxRequest{Name: "n", DockerImage: "img", StartCommand: ShellCommand("sleep 1")})
	if !errors.Is(err, ErrInvalidRequest) || calls.Load() != 0 {
		t.Fatalf("err = %v after %d requests, want a local ErrInvalidRequest", err, calls.Load())
	}
	r := CreateSandboxRequest{Name: "n", DockerImage: "img"}
	ApplySDKCreateDefaults(&r)
	ApplySDKCreateDefaults(&r) // idempotent
	if r.StartCommand != nil || r.Arch != nil || *r.CPUCores != DefaultCPUCores || *r.TimeoutMinutes != DefaultTimeoutMinutes {
		t.Errorf("defaults = %+v", r)
	}
}
