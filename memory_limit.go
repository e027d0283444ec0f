package main

import (
	"context"
	"runtime/metrics"
	"time"
)

// The provider's memory: a fleet's apply allocates its state several times
// over (the framework converts and copies every member's value), so with
// the Go runtime's defaults a 10,000-member apply held 325-376 MiB while
// its live heap was about 100 MiB: GOGC=100 lets the heap grow to twice
// what survived the last collection, and the runtime returns freed pages
// lazily. A soft memory limit of heapFloor makes it collect and return
// pages sooner (277 MiB then, for about the same CPU), and never binds
// below it (fleets of up to a few thousand members never reach it).
//
// The limit follows the live heap: past half the floor it is twice the
// live heap, GOGC's own goal, so a bigger fleet pays no continuous
// collection (a fixed limit just above a live heap makes the runtime
// collect all the time).
const (
	heapFloor     = 256 << 20
	heapLiveCheck = 500 * time.Millisecond
)

// heapLimit is the soft memory limit for a live heap of live bytes.
func heapLimit(live uint64) int64 {
	return max(heapFloor, 2*int64(min(live, 1<<60)))
}

// boundHeap sets the soft memory limit and keeps it following the live
// heap until ctx ends. A GOMEMLIMIT or GOGC of the user's leaves the
// runtime as they set it.
func boundHeap(ctx context.Context, getenv func(string) string, setLimit func(int64) int64, live func() uint64) {
	if getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "" {
		return
	}
	setLimit(heapLimit(live()))
	go func() {
		tick := time.NewTicker(heapLiveCheck)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				setLimit(heapLimit(live()))
			}
		}
	}()
}

// liveHeap is the heap that survived the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
