package main

// Where a setup-once apply spends its time: the first and last of each kind
// of mock event, as offsets from the apply's start, in the order they first
// happen. Floors say what the mock makes unavoidable; this says which step
// is above its share.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// timelineRow is one kind of event: how many, the first and the last.
type timelineRow struct {
	kind        string
	count       int
	first, last time.Duration
}

// setupTimeline groups events by type (commands by their command line's
// role: setup or agent) relative to start.
func setupTimeline(events []primemock.Event, start time.Time, setupCommand string) []timelineRow {
	rows := map[string]*timelineRow{}
	for _, e := range events {
		kind := e.Type
		switch {
		case e.Command == setupCommand:
			kind += " (setup)"
		case e.Command == setupAgentCommand:
			kind += " (agent)"
		case e.Type == primemock.EventCheckpointState:
			kind += " " + e.State
		}
		at := e.Time.Sub(start)
		r := rows[kind]
		if r == nil {
			r = &timelineRow{kind: kind, first: at, last: at}
			rows[kind] = r
		}
		r.count++
		r.first, r.last = min(r.first, at), max(r.last, at)
	}
	out := make([]timelineRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].first != out[j].first {
			return out[i].first < out[j].first
		}
		return out[i].kind < out[j].kind
	})
	return out
}

// timelineTable renders rows as a markdown table ending at the apply's end.
func timelineTable(rows []timelineRow, end time.Duration) string {
	var b strings.Builder
	b.WriteString("| event | count | first | last |\n| --- | ---: | ---: | ---: |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", r.kind, r.count, secs(r.first), secs(r.last))
	}
	fmt.Fprintf(&b, "| apply returns | | | %s |\n", secs(end))
	return b.String()
}
