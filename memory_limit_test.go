package main

import (
	"context"
	"testing"
)

func TestHeapLimit(t *testing.T) {
	tests := []struct {
		name string
		live uint64
		want int64
	}{
		{"nothing live: the floor", 0, heapFloor},
		{"a 10,000-member apply's live heap: the floor binds", 100 << 20, heapFloor},
		{"a live heap past half the floor: twice it", 200 << 20, 2 * (200 << 20)},
		{"absurd: no overflow", 1 << 63, 2 * (1 << 60)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := heapLimit(tt.live); got != tt.want {
				t.Errorf("heapLimit(%d) = %d, want %d", tt.live, got, tt.want)
			}
			// The limit is never below GOGC's own goal (twice the
			// live heap), so it never makes the runtime collect
			// without end.
			if goal := 2 * int64(min(tt.live, 1<<60)); heapLimit(tt.live) < goal {
				t.Errorf("limit %d is below GOGC's goal %d", heapLimit(tt.live), goal)
			}
		})
	}
}

func TestBoundHeapLeavesTheUsersSettings(t *testing.T) {
	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		set := 0
		boundHeap(t.Context(), func(k string) string {
			if k == env {
				return "200MiB"
			}
			return ""
		}, func(int64) int64 { set++; return 0 }, func() uint64 { return 0 })
		if set != 0 {
			t.Errorf("with %s set, the limit was set %d times", env, set)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got int64
	boundHeap(ctx, func(string) string { return "" }, func(l int64) int64 { got = l; return 0 }, func() uint64 { return 300 << 20 })
	if want := heapLimit(300 << 20); got != want {
		t.Errorf("limit set to %d, want %d", got, want)
	}
}
