package main

// Duration statistics and their formatting.

import (
	"fmt"
	"math"
	"sort"
	"time"
)

type durStats struct {
	n                int
	median, p95, max time.Duration
	missing          int
}

func newDurStats(ds []time.Duration, missing int) durStats {
	s := durStats{n: len(ds), missing: missing}
	if len(ds) == 0 {
		return s
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	s.median = percentile(ds, 0.5)
	s.p95 = percentile(ds, 0.95)
	s.max = ds[len(ds)-1]
	return s
}

// percentile is the nearest-rank percentile of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func (s durStats) String() string {
	if s.n == 0 {
		return "n/a"
	}
	out := fmt.Sprintf("median %s, p95 %s, max %s (n=%d)", ms(s.median), ms(s.p95), ms(s.max), s.n)
	if s.missing > 0 {
		out += fmt.Sprintf(", %d never observed", s.missing)
	}
	return out
}

// short is "median / max".
func (s durStats) short() string {
	if s.n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%s / %s", ms(s.median), ms(s.max))
}

func ms(d time.Duration) string {
	if d < 10*time.Second && d > -10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
	return secs(d)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func kb(v int64) string {
	if v == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(v)/1024)
}
