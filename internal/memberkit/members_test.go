package memberkit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// ForEachMember calls fn once per key, never more than limit at a time.
func TestForEachMember(t *testing.T) {
	for _, limit := range []int{0, 1, 3, 100} {
		keys := []string{"c", "a", "b", "e", "d"}
		var running, most atomic.Int32
		var mu sync.Mutex
		var seen []string
		ForEachMember(context.Background(), keys, limit, func(_ context.Context, k string) {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			mu.Lock()
			seen = append(seen, k)
			mu.Unlock()
			running.Add(-1)
		})
		slices.Sort(seen)
		if !slices.Equal(seen, []string{"a", "b", "c", "d", "e"}) {
			t.Errorf("limit %d: called for %v", limit, seen)
		}
		if limit > 0 && int(most.Load()) > limit {
			t.Errorf("limit %d: %d at once", limit, most.Load())
		}
	}
}

// Problems render sorted by key, at most 20, and keep an earlier problem
// in front of a later one when asked (Prefixed).
func TestProblems(t *testing.T) {
	var p Problems
	p.Add("b", "second")
	p.Add("a", "first")
	p.Add("a", "%sagain", p.Prefixed("a"))
	if p.Len() != 2 || !p.Has("a") || p.Has("c") || !slices.Equal(p.Keys(), []string{"a", "b"}) {
		t.Fatalf("len %d, keys %v", p.Len(), p.Keys())
	}
	if got, want := p.String(), "Member \"a\": first; then again\n\nMember \"b\": second"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	var many Problems
	for i := range 25 {
		many.Add(fmt.Sprintf("m%02d", i), "x")
	}
	if s := many.String(); !strings.HasSuffix(s, "… and 5 more members.") || strings.Count(s, "Member ") != 20 {
		t.Errorf("25 problems: %q", s)
	}
	var diags diag.Diagnostics
	AddFailure(&diags, "command", &p, 3)
	if len(diags) != 1 || diags[0].Summary() != "Fleet command failed" ||
		!strings.HasPrefix(diags[0].Detail(), "The command failed on 2 of the 3 members that ran:\n\n") {
		t.Errorf("AddFailure: %v", diags)
	}
}
