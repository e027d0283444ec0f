package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The served provider (through the read-state wrapper) offers the list
// resources, the actions and the resource identities, with schemas the
// framework accepts; without the wrapper forwarding them Terraform would
// see the RPCs as unimplemented.
func TestServedProviderOffersTerraform14Surface(t *testing.T) {
	ctx := context.Background()
	srv := NewProtocol6Server(New("test")())()
	if _, ok := srv.(tfprotov6.ListResourceServer); !ok {
		t.Fatal("the served provider hides the list resource RPCs")
	}
	if _, ok := srv.(tfprotov6.ActionServer); !ok {
		t.Fatal("the served provider hides the action RPCs")
	}
	schema, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range schema.Diagnostics {
		t.Errorf("schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	for _, want := range []string{"prime_sandbox", "prime_sandbox_fleet"} {
		if schema.ListResourceSchemas[want] == nil {
			t.Errorf("no %s list resource", want)
		}
	}
	for _, want := range []string{"prime_sandbox_exec", "prime_fleet_exec", "prime_sandbox_sweep"} {
		if _, ok := schema.ActionSchemas[want]; !ok {
			t.Errorf("no %s action", want)
		}
	}
	ids, err := srv.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ids.Diagnostics {
		t.Errorf("identity schema diagnostic: %s: %s", d.Summary, d.Detail)
	}
	got := map[string][]string{}
	for name, s := range ids.IdentitySchemas {
		for _, a := range s.IdentityAttributes {
			got[name] = append(got[name], a.Name)
		}
		slices.Sort(got[name])
	}
	want := map[string][]string{
		"prime_sandbox": {"id"}, "prime_egress_policy": {"sandbox_id"}, "prime_sandbox_fleet": {"id", "label", "sandbox_ids"},
		"prime_sandbox_checkpoint": {"id"}, "prime_sandbox_network": {"id"}, "prime_volume": {"name", "team_id"},
	}
	for name, attrs := range want {
		if !slices.Equal(got[name], attrs) {
			t.Errorf("%s identity = %v, want %v", name, got[name], attrs)
		}
	}
	if len(got) != len(want) {
		t.Errorf("identities %v, want exactly %v", got, want)
	}
}

// An exec action's env_wo can be set (the framework alone refuses any
// write-only value in an action's configuration), and the action's own
// checks still report.
func TestServedProviderTakesWriteOnlyActionValues(t *testing.T) {
	ctx := context.Background()
	srv := NewProtocol6Server(New("test")())().(tfprotov6.ActionServer)
	schema, err := NewProtocol6Server(New("test")())().GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schema.ActionSchemas["prime_sandbox_exec"].Schema.ValueType().(tftypes.Object)
	config := func(env map[string]tftypes.Value) *tfprotov6.DynamicValue {
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			vals[name] = tftypes.NewValue(at, nil)
		}
		strMap := tftypes.Map{ElementType: tftypes.String}
		vals["sandbox_id"] = tftypes.NewValue(tftypes.String, "sb-1")
		vals["command"] = tftypes.NewValue(tftypes.String, "echo $TOKEN")
		vals["env_wo"] = tftypes.NewValue(strMap, map[string]tftypes.Value{"TOKEN": tftypes.NewValue(tftypes.String, "s3cret")})
		if env != nil {
			vals["env"] = tftypes.NewValue(strMap, env)
		}
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	resp, err := srv.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: "prime_sandbox_exec", Config: config(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("env_wo refused: %s: %s", d.Summary, d.Detail)
	}
	resp, err = srv.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: "prime_sandbox_exec",
		Config: config(map[string]tftypes.Value{"TOKEN": tftypes.NewValue(tftypes.String, "a")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Detail, `"TOKEN" is also set in env`) {
		t.Fatalf("the action's own check is gone: %+v", resp.Diagnostics)
	}
}
