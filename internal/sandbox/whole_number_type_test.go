package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestWholeNumberType(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		in      tftypes.Value
		want    string // the value's String(), or the validation error
		invalid bool
	}{
		{"whole", tftypes.NewValue(tftypes.Number, 2), "2", false},
		{"null", tftypes.NewValue(tftypes.Number, nil), "<null>", false},
		{"unknown", tftypes.NewValue(tftypes.Number, tftypes.UnknownValue), "<unknown>", false},
		{"fraction", tftypes.NewValue(tftypes.Number, 1.5), "cpu_cores: must be a whole number of vCPUs (the platform takes no fractions), got 1.5", true},
		{"small fraction", tftypes.NewValue(tftypes.Number, 0.25), "got 0.25", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := wholeNumberType{}.ValueFromTerraform(ctx, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			n := v.(wholeNumber)
			var resp xattr.ValidateAttributeResponse
			n.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: path.Root("cpu_cores")}, &resp)
			if resp.Diagnostics.HasError() != tc.invalid {
				t.Fatalf("errors %v, want invalid %t", resp.Diagnostics, tc.invalid)
			}
			if tc.invalid {
				if d := resp.Diagnostics.Errors()[0]; !strings.Contains(d.Detail(), tc.want) {
					t.Fatalf("error %q, want %q", d.Detail(), tc.want)
				}
				if !n.IsUnknown() {
					t.Fatal("a fraction must not read as a usable value")
				}
				return
			}
			if n.String() != tc.want {
				t.Fatalf("value %s, want %s", n.String(), tc.want)
			}
			back, err := n.ToTerraformValue(ctx)
			if err != nil || !back.Equal(tc.in) {
				t.Fatalf("round trip %v (%v), want %v", back, err, tc.in)
			}
		})
	}
}
