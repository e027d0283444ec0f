package provider

import (
	"context"
	"encoding/json"
	"math/big"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// NewProtocol6Server is providerserver.NewProtocol6 for this provider: the
// framework's protocol 6 server for p, except that ReadResource sends its
// new state to Terraform JSON-encoded rather than msgpack-encoded.
//
// Why: Terraform before 1.15 decides whether a refresh-only plan is
// applyable (plan -refresh-only -detailed-exitcode exits 2, apply
// -refresh-only writes state) by comparing the refreshed state with the
// previous run's state with reflect.DeepEqual, unexported cached cty.Values
// included (internal/states/state_equal.go, sameManagedResources;
// hashicorp/terraform#37406, fixed in 1.15 by #37886). The previous run's
// value is always decoded from the state's JSON, which parses numbers at
// 512-bit precision; from a msgpack-encoded ReadResource result, integers
// (and floats that are exact float64s) decode at 64 (53) bits. Equal
// numbers then compare unequal, and every unchanged resource with a
// non-null such number (cpu_cores, generation, exit_code, …) made the
// refresh-only plan "applyable" while it printed "No changes". Decoded
// from JSON, the refreshed numbers are built exactly like the prior ones.
//
// The same comparison also compares the order of a resource's sensitive
// paths, which Terraform derives from Go map iteration: an instance with
// two or more sensitive attributes (from the schema or from sensitive
// values in its configuration) still exits 2 at random under Terraform
// < 1.15, and no provider encoding can change that.
//
// Drop this wrapper (serve providerserver.NewProtocol6 again) once the
// provider requires Terraform 1.15 or later.
func NewProtocol6Server(p provider.Provider) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		// The framework's server implements every RPC; the list resource
		// and action ones are outside tfprotov6.ProviderServer still.
		return &jsonReadStateServer{frameworkServer: providerserver.NewProtocol6(p)().(frameworkServer)}
	}
}

// frameworkServer is what the framework's protocol 6 server implements:
// the provider server plus the list resource and action RPCs. The wrapper
// must offer them too, or the protocol server (which looks for
// tfprotov6.ProviderServerWithListResource and ProviderServerWithActions)
// would report them unimplemented.
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
}

var (
	_ tfprotov6.ListResourceServer = (*jsonReadStateServer)(nil)
	_ tfprotov6.ActionServer       = (*jsonReadStateServer)(nil)
)

// jsonReadStateServer re-encodes ReadResource's new state as JSON; every
// other call goes to the framework's server unchanged.
type jsonReadStateServer struct {
	frameworkServer

	once     sync.Once
	types    map[string]tftypes.Type
	versions map[string]int64
}

func (s *jsonReadStateServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.frameworkServer.ReadResource(ctx, req)
	if err != nil || resp == nil || resp.NewState == nil || len(resp.NewState.MsgPack) == 0 {
		return resp, err
	}
	if js, ok := s.stateJSON(ctx, req.TypeName, resp.NewState); ok {
		resp.NewState = &tfprotov6.DynamicValue{JSON: js}
	}
	return resp, nil
}

// stateJSON is the JSON encoding of state, or false when it has none (an
// unknown or dynamically typed value, an unknown resource type): the caller
// then keeps the msgpack encoding.
func (s *jsonReadStateServer) stateJSON(ctx context.Context, typeName string, state *tfprotov6.DynamicValue) ([]byte, bool) {
	typ := s.resourceType(ctx, typeName)
	if typ == nil {
		return nil, false
	}
	val, err := state.Unmarshal(typ)
	if err != nil {
		return nil, false
	}
	v, ok := jsonValue(val)
	if !ok {
		return nil, false
	}
	js, err := json.Marshal(v)
	return js, err == nil
}

// resourceType is the value type of a resource type's schema, or nil.
func (s *jsonReadStateServer) resourceType(ctx context.Context, typeName string) tftypes.Type {
	s.loadSchemas(ctx)
	return s.types[typeName]
}

// schemaVersion is the version of a resource type's schema.
func (s *jsonReadStateServer) schemaVersion(ctx context.Context, typeName string) int64 {
	s.loadSchemas(ctx)
	return s.versions[typeName]
}

func (s *jsonReadStateServer) loadSchemas(ctx context.Context) {
	s.once.Do(func() {
		s.types, s.versions = map[string]tftypes.Type{}, map[string]int64{}
		resp, err := s.frameworkServer.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if err != nil || resp == nil {
			return
		}
		for name, schema := range resp.ResourceSchemas {
			if schema != nil {
				s.types[name], s.versions[name] = schema.ValueType(), schema.Version
			}
		}
	})
}

// jsonValue converts v to what encoding/json marshals as Terraform's JSON
// encoding of v. Numbers are written as ctyjson writes them in state
// (big.Float.Text('f', -1)). It reports false for unknown values and
// dynamic types, which this encoding cannot carry.
func jsonValue(v tftypes.Value) (any, bool) {
	if !v.IsKnown() || v.Type().Is(tftypes.DynamicPseudoType) {
		return nil, false
	}
	if v.IsNull() {
		return nil, true
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		return s, v.As(&s) == nil
	case typ.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b) == nil
	case typ.Is(tftypes.Number):
		var f big.Float
		if v.As(&f) != nil || f.IsInf() {
			return nil, false
		}
		return json.Number(f.Text('f', -1)), true
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Set{}), typ.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		if v.As(&elems) != nil {
			return nil, false
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			j, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			out[i] = j
		}
		return out, true
	case typ.Is(tftypes.Map{}), typ.Is(tftypes.Object{}):
		var attrs map[string]tftypes.Value
		if v.As(&attrs) != nil {
			return nil, false
		}
		out := make(map[string]any, len(attrs))
		for k, e := range attrs {
			j, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			out[k] = j
		}
		return out, true
	}
	return nil, false
}
