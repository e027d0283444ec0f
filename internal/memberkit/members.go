package memberkit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// ForEachMember runs fn once per key, at most limit at a time (limit <= 0:
// all at once; the API client's throttle still paces the requests), and
// returns when every call has returned. Keys are started in sorted order so
// runs are reproducible.
func ForEachMember(ctx context.Context, keys []string, limit int, fn func(ctx context.Context, key string)) {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	if limit <= 0 || limit > len(sorted) {
		limit = len(sorted)
	}
	slots := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for _, k := range sorted {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			fn(ctx, k)
		}()
	}
	wg.Wait()
}

// Problems collects per-member failures from concurrent work and
// renders them sorted by key, so an error names every failed member.
type Problems struct {
	mu       sync.Mutex
	problems map[string]string
}

// Add records key's problem, replacing an earlier one (see Prefixed).
func (p *Problems) Add(key, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.problems == nil {
		p.problems = map[string]string{}
	}
	p.problems[key] = fmt.Sprintf(format, args...)
}

// Len is how many members have a problem.
func (p *Problems) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.problems)
}

// Has reports whether key has a problem.
func (p *Problems) Has(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.problems[key]
	return ok
}

// Keys are the failed members' keys, sorted.
func (p *Problems) Keys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return tfkit.SortedKeys(p.problems)
}

// String lists the problems, one member per paragraph, at most limit of
// them (the count of the rest is given).
func (p *Problems) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.problems))
	for k := range p.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	const limit = 20
	var b strings.Builder
	for i, k := range keys {
		if i == limit {
			fmt.Fprintf(&b, "\n\n… and %d more members.", len(keys)-limit)
			break
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Member %q: %s", k, p.problems[k])
	}
	return b.String()
}

// AddFailure is the one error of a fleet operation for every failed
// member: what failed ("command", "upload", "download") on how many of the
// members it was tried on.
func AddFailure(diags *diag.Diagnostics, what string, problems *Problems, tried int) {
	among := "it was tried on"
	if what == "command" {
		among = "that ran"
	}
	AddMemberFailures(diags, "Fleet "+what+" failed", "The "+what+" failed on ", problems, tried, among)
}

// AddMemberFailures is the one wording of an error that names every failed
// member: summary, then lead, "N of the M members", among, and each
// member's problem. AddFailure is its fleet-operation form; resources that
// act on members without being a fleet (a network's membership) call it
// with their own summary.
func AddMemberFailures(diags *diag.Diagnostics, summary, lead string, problems *Problems, tried int, among string) {
	diags.AddError(summary, fmt.Sprintf("%s%d of the %d members %s:\n\n%s", lead, problems.Len(), tried, among, problems.String()))
}

// Prefixed is key's earlier problem followed by "; then ", or "" when it
// has none: the front of a new problem that keeps the earlier one.
func (p *Problems) Prefixed(key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.problems[key]; ok {
		return prev + "; then "
	}
	return ""
}
