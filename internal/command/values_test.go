package command

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
)

func TestTailKeepsValidUTF8(t *testing.T) {
	s := strings.Repeat("é", 100) // 200 bytes, 2-byte runes
	got, cut := tail(s, 51)
	if !cut || !utf8.ValidString(got) || len(got) > 51 || !strings.HasSuffix(s, got) {
		t.Fatalf("tail = %q (cut %v)", got, cut)
	}
	if got, cut := tail("short", 64); cut || got != "short" {
		t.Fatal("short output must pass through")
	}
	if got, _ := tail("a\xffb", 64); !utf8.ValidString(got) {
		t.Fatal("invalid UTF-8 must be repaired: state strings must be valid")
	}
}

func TestFleetCommandResultsRoundTrip(t *testing.T) {
	ctx := context.Background()
	results := map[string]fleetCommandResult{
		"0": {SandboxID: types.StringValue("sb-0"), ExitCode: types.Int64Value(0), ExecutedAt: types.StringValue("2026-12-01T00:00:00Z"),
			Failed: types.BoolValue(false), Error: types.StringNull(),
			Steps: []fleetCommandStep{
				{ExitCode: types.Int64Value(0), Stdout: types.StringValue("ok\n"), Stderr: types.StringValue(""), OutputTruncated: types.BoolValue(false)},
				{ExitCode: types.Int64Value(0), Stdout: types.StringNull(), Stderr: types.StringNull(), OutputTruncated: types.BoolValue(true)},
			}},
		"1": {SandboxID: types.StringValue("sb-1"), ExitCode: types.Int64Value(3), ExecutedAt: types.StringValue("2026-12-01T00:00:01Z"),
			Failed: types.BoolValue(true), Error: types.StringValue("step 1 of 1: Command exited with a disallowed code"),
			Steps: []fleetCommandStep{}},
	}
	elems := map[string]attr.Value{}
	for k, r := range results {
		elems[k] = r.object()
	}
	got := types.MapValueMust(fleetCommandResultType(), elems)
	want, d := types.MapValueFrom(ctx, fleetCommandResultType(), results)
	if d.HasError() || !got.Equal(want) {
		t.Fatalf("hand-built %s, reflection %s (%v)", got, want, d)
	}
	var diags diag.Diagnostics
	back := fleetCommandResultsOfMap(got, &diags)
	if diags.HasError() || len(back) != 2 || len(back["0"].Steps) != 2 || back["0"].Steps[1] != results["0"].Steps[1] ||
		back["1"].ExitCode != results["1"].ExitCode || len(back["1"].Steps) != 0 || back["1"].Failed != results["1"].Failed ||
		back["1"].Error != results["1"].Error || back["0"].Error != results["0"].Error {
		t.Fatalf("round trip: %+v %v", back, diags)
	}

	streams := types.MapValueMust(fleetStreamsType(), map[string]attr.Value{
		"0": types.ListValueMust(streamsType(), []attr.Value{types.ObjectNull(streamsType().AttrTypes)}),
	})
	lists := memberkit.ObjectListsOfMap(streams, &diags)
	if diags.HasError() || len(lists["0"]) != 1 || !lists["0"][0].IsNull() {
		t.Fatalf("streams: %+v %v", lists, diags)
	}
}
