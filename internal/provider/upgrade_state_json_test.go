package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestStateFitsType(t *testing.T) {
	member := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "cpu": tftypes.Number}}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"id":      tftypes.String,
		"ok":      tftypes.Bool,
		"n":       tftypes.Number,
		"tags":    tftypes.Map{ElementType: tftypes.String},
		"hosts":   tftypes.List{ElementType: tftypes.String},
		"ports":   tftypes.Set{ElementType: tftypes.Number},
		"members": tftypes.Map{ElementType: member},
		"pair":    tftypes.Tuple{ElementTypes: []tftypes.Type{tftypes.String, tftypes.Number}},
		"any":     tftypes.DynamicPseudoType,
	}}
	for _, tt := range []struct {
		name, js string
		want     bool
	}{
		{"every kind", `{"id":"a","ok":true,"n":-1.5e3,"tags":{"k\"ey":"v"},"hosts":["x","y"],"ports":[1,2],` +
			`"members":{"a":{"id":"s1","cpu":2},"b":{"id":"s2","cpu":null}},"pair":["p",1]}`, true},
		{"white space and nulls", " {\n \"id\" : null , \"members\" : { } , \"hosts\" : [ ] }\n", true},
		{"attributes left out (null)", `{}`, true},
		{"a null state", `null`, true},
		{"an attribute the schema lacks", `{"id":"a","gone":1}`, false},
		{"an attribute a member lacks", `{"members":{"a":{"id":"s1","old":true}}}`, false},
		{"an escaped attribute name", `{"i\u0064":"a"}`, false},
		{"a number as a string", `{"n":"12"}`, false},
		{"a string as a number", `{"id":12}`, false},
		{"a list as an object", `{"hosts":{"a":"b"}}`, false},
		{"an object as a string", `{"members":{"a":"s1"}}`, false},
		{"a bool as a string", `{"ok":"true"}`, false},
		{"a short tuple", `{"pair":["p"]}`, false},
		{"a long tuple", `{"pair":["p",1,2]}`, false},
		{"a dynamic value", `{"any":{"value":"x","type":"string"}}`, false},
		{"not an object", `["a"]`, false},
		{"two values", `{} {}`, false},
		{"not JSON", `{"id":"a"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := stateFitsType([]byte(tt.js), typ); got != tt.want {
				t.Errorf("stateFitsType(%s) = %t, want %t", tt.js, got, tt.want)
			}
		})
	}
}

// upgradeStub answers GetProviderSchema and counts the UpgradeResourceState
// calls that reach the framework.
type upgradeStub struct {
	frameworkServer
	schema *tfprotov6.Schema
	calls  *int
}

func (s upgradeStub) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{ResourceSchemas: map[string]*tfprotov6.Schema{"prime_thing": s.schema}}, nil
}

func (s upgradeStub) UpgradeResourceState(context.Context, *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	*s.calls++
	return &tfprotov6.UpgradeResourceStateResponse{}, nil
}

// A state at the schema's version that fits it goes back as it came;
// every other state goes to the framework.
func TestUpgradeResourceStatePassesCurrentStatesThrough(t *testing.T) {
	schema := &tfprotov6.Schema{Version: 2, Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{
		{Name: "id", Type: tftypes.String, Computed: true},
	}}}
	calls := 0
	s := &jsonReadStateServer{frameworkServer: upgradeStub{schema: schema, calls: &calls}}
	current := []byte(`{"id":"sbx-1"}`)
	for _, tt := range []struct {
		name      string
		req       tfprotov6.UpgradeResourceStateRequest
		framework bool
	}{
		{"current and fitting", tfprotov6.UpgradeResourceStateRequest{TypeName: "prime_thing", Version: 2, RawState: &tfprotov6.RawState{JSON: current}}, false},
		{"an older version", tfprotov6.UpgradeResourceStateRequest{TypeName: "prime_thing", Version: 1, RawState: &tfprotov6.RawState{JSON: current}}, true},
		{"an attribute the schema lacks", tfprotov6.UpgradeResourceStateRequest{TypeName: "prime_thing", Version: 2, RawState: &tfprotov6.RawState{JSON: []byte(`{"id":"sbx-1","old":1}`)}}, true},
		{"flatmap", tfprotov6.UpgradeResourceStateRequest{TypeName: "prime_thing", Version: 2, RawState: &tfprotov6.RawState{Flatmap: map[string]string{"id": "sbx-1"}}}, true},
		{"an unknown type", tfprotov6.UpgradeResourceStateRequest{TypeName: "prime_other", Version: 0, RawState: &tfprotov6.RawState{JSON: current}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := calls
			resp, err := s.UpgradeResourceState(context.Background(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if went := calls > before; went != tt.framework {
				t.Fatalf("went to the framework: %t, want %t", went, tt.framework)
			}
			if !tt.framework && (resp.UpgradedState == nil || !bytes.Equal(resp.UpgradedState.JSON, current) || len(resp.UpgradedState.MsgPack) != 0) {
				t.Errorf("upgraded state %+v, want the JSON sent", resp.UpgradedState)
			}
		})
	}
}

// Every resource type of the provider: a state with every attribute set
// (two elements in every collection), written as Terraform writes state,
// passes through, and decodes to the value the framework's own upgrade
// gives. A schema kind the scanner does not know would fall back to the
// framework on every plan; this test says which.
func TestUpgradeResourceStatePassesEveryResourceTypeThrough(t *testing.T) {
	ctx := context.Background()
	fw := providerserver.NewProtocol6(New("test")())().(frameworkServer)
	s := &jsonReadStateServer{frameworkServer: fw}
	schemas, err := fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for name, schema := range schemas.ResourceSchemas {
		t.Run(name, func(t *testing.T) {
			typ := schema.ValueType()
			full := sampleValue(typ, 0)
			v, ok := jsonValue(full)
			if !ok {
				t.Fatal("no JSON for the sample")
			}
			js, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !stateFitsType(js, typ) {
				t.Fatalf("a full %s state does not pass through: %s", name, js)
			}
			req := &tfprotov6.UpgradeResourceStateRequest{TypeName: name, Version: schema.Version, RawState: &tfprotov6.RawState{JSON: js}}
			ours, err := s.UpgradeResourceState(ctx, req)
			if err != nil || ours.UpgradedState == nil {
				t.Fatalf("pass-through: %v %+v", err, ours)
			}
			theirs, err := fw.UpgradeResourceState(ctx, req)
			if err != nil || theirs.UpgradedState == nil || len(theirs.Diagnostics) != 0 {
				t.Fatalf("framework: %v %+v", err, theirs)
			}
			a, errA := ours.UpgradedState.Unmarshal(typ)
			b, errB := theirs.UpgradedState.Unmarshal(typ)
			if errA != nil || errB != nil || !a.Equal(b) {
				t.Errorf("pass-through and framework differ (%v, %v)", errA, errB)
			}
		})
	}
}

// sampleValue is a known, non-null value of typ: two elements in every
// collection, nested ones included.
func sampleValue(typ tftypes.Type, depth int) tftypes.Value {
	switch t := typ.(type) {
	case tftypes.Object:
		attrs := map[string]tftypes.Value{}
		for k, at := range t.AttributeTypes {
			attrs[k] = sampleValue(at, depth+1)
		}
		return tftypes.NewValue(t, attrs)
	case tftypes.Map:
		return tftypes.NewValue(t, map[string]tftypes.Value{"a": sampleValue(t.ElementType, depth+1), "b": sampleValue(t.ElementType, depth+2)})
	case tftypes.List:
		return tftypes.NewValue(t, []tftypes.Value{sampleValue(t.ElementType, depth+1), sampleValue(t.ElementType, depth+2)})
	case tftypes.Set:
		return tftypes.NewValue(t, []tftypes.Value{sampleValue(t.ElementType, depth+1), sampleValue(t.ElementType, depth+2)})
	case tftypes.Tuple:
		elems := make([]tftypes.Value, len(t.ElementTypes))
		for i, et := range t.ElementTypes {
			elems[i] = sampleValue(et, depth+1)
		}
		return tftypes.NewValue(t, elems)
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, fmt.Sprintf("s%d", depth))
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, big.NewFloat(float64(depth)+0.5))
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, depth%2 == 0)
	}
	return tftypes.NewValue(typ, nil)
}
