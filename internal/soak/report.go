package soak

import (
	"fmt"
	"strings"
	"time"
)

// Check is one assertion of a run.
type Check struct {
	Name   string
	Pass   bool
	Detail string
}

// Report collects a run's checks and informational notes.
type Report struct {
	Name     string
	Checks   []Check
	Notes    []string
	Duration time.Duration
}

// Check records an assertion.
func (r *Report) Check(name string, pass bool, format string, args ...any) bool {
	r.Checks = append(r.Checks, Check{Name: name, Pass: pass, Detail: fmt.Sprintf(format, args...)})
	return pass
}

// CheckErr records an assertion that err is nil.
func (r *Report) CheckErr(name string, err error) bool {
	if err != nil {
		return r.Check(name, false, "%v", err)
	}
	return r.Check(name, true, "")
}

// Note records a fact worth reporting that is not an assertion.
func (r *Report) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Passed reports whether every check passed (and there was at least one).
func (r *Report) Passed() bool {
	if len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.Pass {
			return false
		}
	}
	return true
}

// Failures lists the failed checks.
func (r *Report) Failures() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// String renders the report: a verdict line, the checks, the notes.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "== %s: %s (%s)\n", r.Name, verdict, r.Duration.Round(100*time.Millisecond))
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  [%s] %s", mark, c.Name)
		if c.Detail != "" {
			fmt.Fprintf(&b, ": %s", c.Detail)
		}
		b.WriteByte('\n')
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
