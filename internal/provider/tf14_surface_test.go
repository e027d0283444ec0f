package provider

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
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
		"prime_sandbox": {"id"}, "prime_egress_policy": {"sandbox_id"}, "prime_sandbox_fleet": {"label", "sandbox_ids"},
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
