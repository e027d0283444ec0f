// Command testsummary reads `go test -json` on standard input and prints
// what a plain `go test` prints (package results, build errors, the whole
// output of every failed test) plus every skipped test with its reason,
// and a count of top-level tests: what the acceptance runs of `make test`
// show per CLI, with the slowest top-level tests (where the suite's time
// goes). It exits 1 when anything failed.
//
//	go test -json ./... | testsummary -label "Terraform 1.15.0"
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is a test2json TestEvent, or a BuildEvent (ImportPath) that
// `go test -json` interleaves since Go 1.24.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	Elapsed    float64 // seconds, on a test's pass or fail
}

// slowestShown is how many of the slowest top-level tests the report names.
const slowestShown = 10

type timedTest struct {
	key     testKey
	elapsed float64
}

type testKey struct{ pkg, test string }

type counts struct{ passed, failed, skipped int }

func main() {
	label := flag.String("label", "", "what the run was (the CLI), for the summary line")
	flag.Parse()
	c, failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	prefix := ""
	if *label != "" {
		prefix = *label + ": "
	}
	fmt.Printf("%s%d passed, %d failed, %d skipped (top-level tests)\n", prefix, c.passed, c.failed, c.skipped)
	if failed {
		os.Exit(1)
	}
}

// summarize writes the report to w and returns the top-level counts and
// whether anything (a test, a package, a build) failed.
func summarize(r io.Reader, w io.Writer) (counts, bool, error) {
	var c counts
	failed := false
	output := map[testKey][]string{}
	running := map[testKey]bool{}
	var skips []string
	var timed []timedTest
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go vet's or the linker's own words): pass it on.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := testKey{e.Package, e.Test}
		top := e.Test != "" && !strings.Contains(e.Test, "/")
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "":
			// The package's own lines: "ok", "FAIL", "no test files",
			// panics and timeouts outside any one test; not the test
			// binary's "PASS", which plain go test does not show either.
			if e.Action == "output" && e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
			if e.Action == "fail" {
				failed = true
				// Tests still running when the binary died (a timeout, a
				// panic in another goroutine) never get an end event.
				for rk := range running {
					if rk.pkg == e.Package {
						fmt.Fprintf(w, "--- UNFINISHED: %s\n%s", rk.test, strings.Join(output[rk], ""))
					}
				}
			}
		case e.Action == "run":
			running[k] = true
		case e.Action == "output":
			output[k] = append(output[k], e.Output)
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			delete(running, k)
			if top && e.Action != "skip" && e.Elapsed > 0 {
				timed = append(timed, timedTest{k, e.Elapsed})
			}
			switch e.Action {
			case "pass":
				if top {
					c.passed++
				}
			case "fail":
				failed = true
				if top {
					c.failed++
					// A top-level test's output holds its subtests' too.
					fmt.Fprint(w, strings.Join(output[k], ""))
				}
			case "skip":
				if top {
					c.skipped++
				}
				skips = append(skips, fmt.Sprintf("--- SKIP: %s (%s): %s", e.Test, e.Package, skipReason(output[k])))
			}
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return c, true, err
	}
	sort.Strings(skips)
	for _, s := range skips {
		fmt.Fprintln(w, s)
	}
	writeSlowest(w, timed)
	return c, failed, nil
}

// writeSlowest names the slowest top-level tests, slowest first.
func writeSlowest(w io.Writer, timed []timedTest) {
	if len(timed) == 0 {
		return
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].elapsed > timed[j].elapsed })
	total := 0.0
	for _, t := range timed {
		total += t.elapsed
	}
	fmt.Fprintf(w, "slowest top-level tests (of %d, %.0f s in all):\n", len(timed), total)
	for _, t := range timed[:min(slowestShown, len(timed))] {
		fmt.Fprintf(w, "  %6.1fs %s (%s)\n", t.elapsed, t.key.test, t.key.pkg)
	}
}

// skipReason is what a skipped test logged, without test2json's framing
// lines (=== RUN, --- SKIP, ...).
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
