package sandbox

import (
	"encoding/json"
	"testing"
)

func TestUpgradeVMOnlyStateJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]any
	}{
		{"vm sandbox", `{"id":"a","vm":true,"cpu_cores":2,"guaranteed":false,"start_command":null,"registry_credentials_id":null}`,
			map[string]any{"vm": true, "cpu_cores": 2.0, "guaranteed": nil, "start_command": nil, "registry_credentials_id": nil}},
		{"container", `{"id":"b","vm":false,"cpu_cores":0.5,"guaranteed":true,"start_command":"tail -f /dev/null","registry_credentials_id":"rc"}`,
			map[string]any{"vm": true, "cpu_cores": 1.0, "guaranteed": nil, "start_command": nil, "registry_credentials_id": nil}},
		{"fraction rounds up", `{"cpu_cores":1.5}`, map[string]any{"cpu_cores": 2.0}},
		{"unset", `{"cpu_cores":null,"vm":null}`, map[string]any{"cpu_cores": nil, "vm": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := upgradeVMOnlyStateJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s = %v, want %v (%s)", k, got[k], want, out)
				}
			}
		})
	}
	if _, err := upgradeVMOnlyStateJSON([]byte(`{"cpu_cores":"two"}`)); err == nil {
		t.Fatal("a cpu_cores that is not a number must fail the upgrade, not be guessed")
	}
}
