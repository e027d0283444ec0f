package sandbox

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// wholeNumberType is an Int64 attribute type whose configuration may hold a
// fraction, so that the fraction is refused by a validation error on the
// attribute (wholeNumber.ValidateAttribute: "cpu_cores: must be a whole
// number ..."), instead of the framework's conversion error, which calls
// the user's 1.5 "an error in the provider". cpu_cores uses it: the
// platform takes whole vCPUs only.
type wholeNumberType struct {
	basetypes.Int64Type
}

var (
	_ basetypes.Int64Typable                    = wholeNumberType{}
	_ basetypes.Int64ValuableWithSemanticEquals = wholeNumber{}
	_ xattr.ValidateableAttribute               = wholeNumber{}
)

func (t wholeNumberType) String() string { return "provider.wholeNumberType" }

func (t wholeNumberType) Equal(o attr.Type) bool {
	_, ok := o.(wholeNumberType)
	return ok
}

func (t wholeNumberType) ValueType(context.Context) attr.Value { return wholeNumber{} }

func (t wholeNumberType) ValueFromInt64(_ context.Context, v basetypes.Int64Value) (basetypes.Int64Valuable, diag.Diagnostics) {
	return wholeNumber{Int64Value: v}, nil
}

// ValueFromTerraform reads a number; a fraction becomes an unknown value
// that remembers it, so that validation refuses it (and nothing can be
// planned or sent from it).
func (t wholeNumberType) ValueFromTerraform(_ context.Context, in tftypes.Value) (attr.Value, error) {
	switch {
	case in.Type() == nil:
		return wholeNumber{Int64Value: basetypes.NewInt64Null()}, nil
	case !in.IsKnown():
		return wholeNumber{Int64Value: basetypes.NewInt64Unknown()}, nil
	case in.IsNull():
		return wholeNumber{Int64Value: basetypes.NewInt64Null()}, nil
	}
	var f big.Float
	if err := in.As(&f); err != nil {
		return nil, err
	}
	if !f.IsInt() {
		return wholeNumber{Int64Value: basetypes.NewInt64Unknown(), fraction: f.Text('g', -1)}, nil
	}
	n, acc := f.Int64()
	if acc != big.Exact {
		return nil, fmt.Errorf("%s does not fit a 64-bit integer", f.Text('g', -1))
	}
	return wholeNumber{Int64Value: basetypes.NewInt64Value(n)}, nil
}

// wholeNumber is a wholeNumberType value.
type wholeNumber struct {
	basetypes.Int64Value
	// fraction is the configured value when it was not whole ("" otherwise).
	fraction string
}

func (v wholeNumber) Type(context.Context) attr.Type { return wholeNumberType{} }

func (v wholeNumber) Equal(o attr.Value) bool {
	other, ok := o.(wholeNumber)
	return ok && v.fraction == other.fraction && v.Int64Value.Equal(other.Int64Value)
}

func (v wholeNumber) Int64SemanticEquals(_ context.Context, o basetypes.Int64Valuable) (bool, diag.Diagnostics) {
	return v.Equal(o), nil
}

// ValidateAttribute refuses a fraction, naming the attribute.
func (v wholeNumber) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.fraction == "" {
		return
	}
	name := req.Path.String()
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid sandbox configuration",
		fmt.Sprintf("%s: must be a whole number of vCPUs (the platform takes no fractions), got %s", name, v.fraction))
}

// wholeNumberValue is a known wholeNumber.
func wholeNumberValue(n int64) wholeNumber {
	return wholeNumber{Int64Value: basetypes.NewInt64Value(n)}
}
