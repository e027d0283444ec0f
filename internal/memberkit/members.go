package memberkit

import (
	"context"
	"fmt"
	"sort"
	"strconv"
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

// String lists the problems, one paragraph per cause: members whose
// problem reads the same (a create the platform refused for all of them)
// share one ("Members "a", "b": ..."), so one cause is said once, naming
// every member it hit (the first ten, and how many more). At most limit
// paragraphs; the count of the members left out is given.
func (p *Problems) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := tfkit.SortedKeys(p.problems)
	byMessage := map[string][]string{}
	var order []string // messages, by their first member's key
	for _, k := range keys {
		msg := p.problems[k]
		if _, seen := byMessage[msg]; !seen {
			order = append(order, msg)
		}
		byMessage[msg] = append(byMessage[msg], k)
	}
	const limit, namedPerCause = 20, 10
	var b strings.Builder
	shown := 0
	for i, msg := range order {
		if i == limit {
			fmt.Fprintf(&b, "\n\n… and %d more members.", len(keys)-shown)
			break
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		members := byMessage[msg]
		shown += len(members)
		if len(members) == 1 {
			fmt.Fprintf(&b, "Member %q: %s", members[0], msg)
			continue
		}
		quoted := make([]string, 0, namedPerCause)
		for _, k := range members[:min(len(members), namedPerCause)] {
			quoted = append(quoted, strconv.Quote(k))
		}
		names := strings.Join(quoted, ", ")
		if len(members) > namedPerCause {
			names += fmt.Sprintf(" and %d more", len(members)-namedPerCause)
		}
		fmt.Fprintf(&b, "Members %s (%d): %s", names, len(members), msg)
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
