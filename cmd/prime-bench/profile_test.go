package main

import (
	"testing"
	"time"
)

// What `go tool pprof -top` prints, and what the summary reads from it.
func TestParsePprofTop(t *testing.T) {
	out := []byte(`File: terraform-provider-prime
Type: cpu
Duration: 10.82s, Total samples = 2.14s (19.77%)
Showing nodes accounting for 2.14s, 100% of 2.14s total
      flat  flat%   sum%        cum   cum%
     0.46s 21.50% 21.50%      0.46s 21.50%  internal/runtime/syscall/linux.Syscall6
     0.10s  4.67% 26.17%      0.10s  4.67%  runtime.memmove
     0.30s 14.02% 40.19%      0.90s 42.06%  github.com/hashicorp/terraform-plugin-framework/internal/fwschema.SchemaTypeAtTerraformPath
     0.20s  9.35% 49.53%      0.40s 18.69%  github.com/hashicorp/terraform-plugin-framework/resource/schema.Schema.GetAttributes
     0.05s  2.34% 51.87%      0.96s 44.86%  github.com/primeintellect/terraform-provider-prime/internal/memberkit.ForEachMember.func1
         0     0% 51.87%      0.30s 14.02%  github.com/primeintellect/terraform-provider-prime/internal/prime.(*Client).do
`)
	total, lines := parsePprofTop(out)
	if total != 2140*time.Millisecond || len(lines) != 6 {
		t.Fatalf("total %s, %d lines", total, len(lines))
	}
	if lines[0].name != "internal/runtime/syscall/linux.Syscall6" || lines[0].flatPct != 21.5 || lines[1].flat != 300*time.Millisecond {
		t.Fatalf("not sorted by self time: %+v", lines[:2])
	}
	pkgs := byPackage(lines, total)
	want := []struct {
		name string
		flat time.Duration
	}{
		{goRuntime, 560 * time.Millisecond},
		{"github.com/hashicorp/terraform-plugin-framework/internal/fwschema", 300 * time.Millisecond},
		{"github.com/hashicorp/terraform-plugin-framework/resource/schema", 200 * time.Millisecond},
		{"internal/memberkit", 50 * time.Millisecond},
		{"internal/prime", 0},
	}
	if len(pkgs) != len(want) {
		t.Fatalf("packages %+v", pkgs)
	}
	for i, w := range want {
		if pkgs[i].name != w.name || pkgs[i].flat != w.flat {
			t.Errorf("package %d: %s %s, want %s %s", i, pkgs[i].name, pkgs[i].flat, w.name, w.flat)
		}
	}
}
