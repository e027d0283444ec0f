package provider

import (
	"context"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// stubServer answers GetProviderSchema and ReadResource only.
type stubServer struct {
	frameworkServer
	schema *tfprotov6.Schema
	state  tftypes.Value
}

func (s stubServer) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{ResourceSchemas: map[string]*tfprotov6.Schema{"prime_thing": s.schema}}, nil
}

func (s stubServer) ReadResource(context.Context, *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	dv, err := tfprotov6.NewDynamicValue(s.schema.ValueType(), s.state)
	return &tfprotov6.ReadResourceResponse{NewState: &dv}, err
}

// ReadResource's new state leaves as JSON that decodes to the value the
// framework encoded, for every kind of value the provider's schemas use.
func TestJSONReadStateServer(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"create": tftypes.String}}
	attrs := map[string]tftypes.Type{
		"id": tftypes.String, "count": tftypes.Number, "ratio": tftypes.Number, "huge": tftypes.Number,
		"ok": tftypes.Bool, "none": tftypes.Number,
		"list": tftypes.List{ElementType: tftypes.Number}, "set": tftypes.Set{ElementType: tftypes.String},
		"map": tftypes.Map{ElementType: tftypes.String}, "timeouts": obj,
	}
	var schemaAttrs []*tfprotov6.SchemaAttribute
	for name, typ := range attrs {
		schemaAttrs = append(schemaAttrs, &tfprotov6.SchemaAttribute{Name: name, Type: typ, Optional: true})
	}
	huge, _, _ := big.ParseFloat("123456789012345678901234567890.5", 10, 512, big.ToNearestEven)
	state := tftypes.NewValue(tftypes.Object{AttributeTypes: attrs}, map[string]tftypes.Value{
		"id":       tftypes.NewValue(tftypes.String, `a "quoted" <id> & ü`),
		"count":    tftypes.NewValue(tftypes.Number, big.NewFloat(42)),
		"ratio":    tftypes.NewValue(tftypes.Number, big.NewFloat(0.1)),
		"huge":     tftypes.NewValue(tftypes.Number, huge),
		"ok":       tftypes.NewValue(tftypes.Bool, true),
		"none":     tftypes.NewValue(tftypes.Number, nil),
		"list":     tftypes.NewValue(tftypes.List{ElementType: tftypes.Number}, []tftypes.Value{tftypes.NewValue(tftypes.Number, big.NewFloat(-3))}),
		"set":      tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "x"), tftypes.NewValue(tftypes.String, "y")}),
		"map":      tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"K": tftypes.NewValue(tftypes.String, "v")}),
		"timeouts": tftypes.NewValue(obj, nil),
	})
	schema := &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{Attributes: schemaAttrs}}
	s := &jsonReadStateServer{frameworkServer: stubServer{schema: schema, state: state}}

	resp, err := s.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "prime_thing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.NewState.MsgPack) != 0 || len(resp.NewState.JSON) == 0 {
		t.Fatalf("new state is not JSON-encoded: %+v", resp.NewState)
	}
	got, err := resp.NewState.Unmarshal(schema.ValueType())
	if err != nil {
		t.Fatalf("decoding %s: %v", resp.NewState.JSON, err)
	}
	// Numbers travel in decimal, as Terraform writes them to state: the
	// float64 0.1 arrives as the decimal 0.1, everything else unchanged.
	decimal, _, _ := big.ParseFloat("0.1", 10, 512, big.ToNearestEven)
	want, err := tftypes.Transform(state, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if p.Equal(tftypes.NewAttributePath().WithAttributeName("ratio")) {
			return tftypes.NewValue(tftypes.Number, decimal), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := want.Diff(got); err != nil || len(diffs) != 0 {
		t.Errorf("JSON %s decodes to a different value: %v %v", resp.NewState.JSON, diffs, err)
	}

	// An unknown value (which Terraform rejects anyway) keeps msgpack.
	s = &jsonReadStateServer{frameworkServer: stubServer{schema: schema, state: tftypes.NewValue(tftypes.Object{AttributeTypes: attrs}, tftypes.UnknownValue)}}
	if resp, _ := s.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "prime_thing"}); len(resp.NewState.MsgPack) == 0 {
		t.Errorf("unknown state: want msgpack kept, got %+v", resp.NewState)
	}
}
