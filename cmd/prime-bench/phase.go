package main

// One measured Terraform command: its API and gateway calls, CPU and memory, and their sums.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// phase is one Terraform command with the mock's counters around it.
type phase struct {
	res      tfcli.Result
	requests map[string]int // requests during the phase, by route
	events   []primemock.Event
	rss      []rssRecord
	stats    primemock.Stats // after
	// before429 is the mock's 429 count before the command.
	before429 int
	// mockCPU is the prime-mock process's CPU time during the command.
	mockCPU time.Duration
	// profiles are the CPU profiles of the command's provider processes
	// (runs with profiling on).
	profiles []string
}

// limited is how many requests the mock answered 429 (its rate limits)
// during the command.
func (p phase) limited() int { return p.stats.RateLimited429 - p.before429 }

// apiTotal counts /api/v1 requests (the control plane, gateway tokens
// included).
func (p phase) apiTotal() int { return routeTotal(p.requests, "/api/v1") }

// gatewayTotal counts requests to the gateway (Connect command sessions and
// REST exec).
func (p phase) gatewayTotal() int { return routeTotal(p.requests, "/gateway/") }

func routeTotal(reqs map[string]int, part string) int {
	t := 0
	for k, v := range reqs {
		if strings.Contains(k, part) {
			t += v
		}
	}
	return t
}

// providerCPU sums the CPU time of the phase's provider processes.
func (p phase) providerCPU() time.Duration {
	var ms int64
	for _, r := range p.rss {
		ms += r.CPUMS
	}
	return time.Duration(ms) * time.Millisecond
}

// cpuNote is "terraform X + provider Y + mock Z CPU seconds".
func (p phase) cpuNote() string {
	prov := p.providerCPU()
	return fmt.Sprintf("terraform %s + provider %s + mock %s", secs(max(0, p.res.CPU-prov)), secs(prov), secs(p.mockCPU))
}

// processCPU is a process's user + system CPU time from /proc/PID/stat (0
// when it cannot be read).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)) //nolint:gosec // G703: a number under /proc
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

func (p phase) maxRSS() int64 {
	var m int64
	for _, r := range p.rss {
		m = max(m, r.MaxRSSKB)
	}
	return m
}
