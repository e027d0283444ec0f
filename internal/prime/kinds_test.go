package prime

import (
	"reflect"
	"testing"
	"time"
)

// What the client knows a sandbox's egress policy to be: the egress-policy
// endpoint's word (a read or an accepted write) is never replaced by a
// sandbox object's lists, which may be only the create-time ones (a
// restore is created without lists and locked afterwards).
func TestKnownEgressPrefersThePolicyEndpoint(t *testing.T) {
	lock := EgressPolicy{Allowlist: []string{"example.com"}}
	born := EgressPolicy{Allowlist: []string{"pypi.org"}}
	open := Sandbox{ID: "sb-1", Status: StatusRunning}
	bornObject := Sandbox{ID: "sb-1", Status: StatusRunning, NetworkAllowlist: born.Allowlist}
	for _, tc := range []struct {
		name     string
		steps    func(k *sandboxKinds)
		want     EgressPolicy
		wantSure bool
	}{
		{"object without lists", func(k *sandboxKinds) { k.remember(open) }, OpenEgressPolicy(), false},
		{"object with create-time lists", func(k *sandboxKinds) { k.remember(bornObject) }, born, false},
		{"this client's create", func(k *sandboxKinds) { k.rememberCreated(bornObject, time.Now()) }, born, true},
		{"restore locked, then its object", func(k *sandboxKinds) {
			k.rememberCreated(open, time.Now())
			k.observePolicy("sb-1", lock)
			k.remember(open)
		}, lock, true},
		{"policy read before the object", func(k *sandboxKinds) {
			k.observePolicy("sb-1", lock)
			k.remember(bornObject)
		}, lock, true},
		{"a later read wins", func(k *sandboxKinds) {
			k.remember(bornObject)
			k.observePolicy("sb-1", lock)
			k.observePolicy("sb-1", OpenEgressPolicy())
		}, OpenEgressPolicy(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{}
			tc.steps(&c.kinds)
			got, ok := c.Known("sb-1")
			if !ok || !reflect.DeepEqual(got.Egress, tc.want) || got.EgressSure != tc.wantSure {
				t.Fatalf("Known = %+v, %v; want egress %+v, sure %t", got, ok, tc.want, tc.wantSure)
			}
		})
	}
}
