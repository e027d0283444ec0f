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

// sdkDefaultBody is the body prime-sandboxes 0.2.39 sends for
// CreateSandboxRequest(name="n", docker_image="img") before it adds
// idempotency_key: model_dump(exclude_none=True) of the model's defaults.
var sdkDefaultBody = map[string]any{
	"name": "n", "docker_image": "img", "start_command": "tail -f /dev/null",
	"cpu_cores": 1.0, "memory_gb": 1.0, "disk_size_gb": 5.0, "gpu_count": 0.0,
	"timeout_minutes": 60.0, "labels": []any{}, "guaranteed": false,
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

func TestCreateSendsTheSDKDefaults(t *testing.T) {
	yes, no := true, false
	cpu, gpus, timeout := 2.5, 1, -1
	gpuType := "H100_80GB"
	tests := []struct {
		name string
		req  CreateSandboxRequest
		want map[string]any // without idempotency_key
	}{
		{"minimal: exactly the SDK's default body, no vm key", CreateSandboxRequest{Name: "n", DockerImage: "img"}, sdkDefaultBody},
		{"vm true: no default start command", CreateSandboxRequest{Name: "n", DockerImage: "img", VM: &yes},
			with(withoutKeys(sdkDefaultBody, "start_command"), "vm", true)},
		{"vm false: the tail default", CreateSandboxRequest{Name: "n", DockerImage: "img", VM: &no},
			with(sdkDefaultBody, "vm", false)},
		{"explicit values are kept", CreateSandboxRequest{
			Name: "n", DockerImage: "img", VM: &yes, CPUCores: &cpu, GPUCount: &gpus, GPUType: &gpuType, TimeoutMinutes: &timeout,
			Labels: []string{"a"}, StartCommand: ArgvCommand("/bin/x", "y"),
		}, with(sdkDefaultBody, "vm", true, "cpu_cores", 2.5, "gpu_count", 1.0, "gpu_type", gpuType, "timeout_minutes", -1.0,
			"labels", []any{"a"}, "start_command", map[string]any{"executable": "/bin/x", "args": []any{"y"}})},
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

// The SDK's string-command rule applies to explicit commands only: the
// default string is filled in after validation, and an explicit string with
// vm unset is refused before anything is sent.
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
	if r.VM != nil {
		t.Error("ApplySDKCreateDefaults must leave vm unset")
	}
	ApplySDKCreateDefaults(&r) // idempotent
	if r.StartCommand == nil || *r.StartCommand.Shell != DefaultShellCommand || *r.CPUCores != DefaultCPUCores {
		t.Errorf("defaults = %+v", r)
	}
}
