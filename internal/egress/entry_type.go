package egress

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// egressEntryType is the element type of allow and block: a string whose
// semantic equality is the egress grammar's canonical form, so the
// platform's canonicalisation (lowercase, IDNA, /32, no trailing dot) never
// shows as a diff after apply or refresh.
type egressEntryType struct {
	basetypes.StringType
}

var (
	_ basetypes.StringTypable                    = egressEntryType{}
	_ basetypes.StringValuableWithSemanticEquals = egressEntryValue{}
)

func (t egressEntryType) Equal(o attr.Type) bool {
	_, ok := o.(egressEntryType)
	return ok
}

func (t egressEntryType) String() string { return "provider.egressEntryType" }

func (t egressEntryType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return egressEntryValue{StringValue: in}, nil
}

func (t egressEntryType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return egressEntryValue{StringValue: s}, nil
}

func (t egressEntryType) ValueType(context.Context) attr.Value { return egressEntryValue{} }

// egressEntryValue is one allow/block entry.
type egressEntryValue struct {
	basetypes.StringValue
}

func newEgressEntry(s string) egressEntryValue {
	return egressEntryValue{StringValue: basetypes.NewStringValue(s)}
}

func (v egressEntryValue) Type(context.Context) attr.Type { return egressEntryType{} }

func (v egressEntryValue) Equal(o attr.Value) bool {
	other, ok := o.(egressEntryValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals keeps the prior spelling when the new value names the
// same destination.
func (v egressEntryValue) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	nv, ok := newValuable.(egressEntryValue)
	if !ok {
		return false, nil
	}
	return prime.EgressEntriesEqual(v.ValueString(), nv.ValueString()), nil
}
