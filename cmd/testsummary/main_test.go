package main

import (
	"strings"
	"testing"
)

// A made-up `go test -json` stream: a pass, a failing test with a subtest,
// a skip with its reason, a skipped subtest, a package that failed to
// build, and a line that is not JSON.
const stream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"    ok_test.go:1: noise of a passing test\n"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"run","Package":"p","Test":"TestBad"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"    bad_test.go:9: the reason it failed\n"}
{"Action":"run","Package":"p","Test":"TestBad/sub"}
{"Action":"fail","Package":"p","Test":"TestBad/sub"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad"}
{"Action":"run","Package":"p","Test":"TestGated"}
{"Action":"output","Package":"p","Test":"TestGated","Output":"=== RUN   TestGated\n"}
{"Action":"output","Package":"p","Test":"TestGated","Output":"    gate_test.go:3: needs Terraform >= 1.14.0; the CLI is OpenTofu v1.12.6\n"}
{"Action":"output","Package":"p","Test":"TestGated","Output":"--- SKIP: TestGated (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestGated"}
{"Action":"run","Package":"p","Test":"TestTable/case"}
{"Action":"skip","Package":"p","Test":"TestTable/case"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"fail","Package":"p"}
{"ImportPath":"q","Action":"build-output","Output":"q/x.go:1:1: syntax error\n"}
{"ImportPath":"q","Action":"build-fail"}
# q
`

func TestSummarize(t *testing.T) {
	var out strings.Builder
	c, failed, err := summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a failed test and a failed build were not reported as a failure")
	}
	if c != (counts{passed: 1, failed: 1, skipped: 1}) {
		t.Errorf("counts %+v, want 1 passed, 1 failed, 1 skipped (subtests not counted)", c)
	}
	got := out.String()
	for _, want := range []string{
		"bad_test.go:9: the reason it failed",
		"--- SKIP: TestGated (p): gate_test.go:3: needs Terraform >= 1.14.0; the CLI is OpenTofu v1.12.6",
		"--- SKIP: TestTable/case (p): (no reason given)",
		"FAIL\tp\t0.1s",
		"q/x.go:1:1: syntax error",
		"# q",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "noise of a passing test") {
		t.Errorf("the summary shows a passing test's output:\n%s", got)
	}
}

func TestSummarizePassing(t *testing.T) {
	var out strings.Builder
	c, failed, err := summarize(strings.NewReader(`{"Action":"run","Package":"p","Test":"TestOK"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`), &out)
	if err != nil || failed || c.passed != 1 {
		t.Fatalf("summarize = %+v, failed %v, %v; want one pass and no failure\n%s", c, failed, err, out.String())
	}
	if got := out.String(); got != "ok  \tp\t0.1s\n" {
		t.Errorf("summary of a passing package %q, want only its ok line", got)
	}
}

// The slowest top-level tests are named, slowest first, with the time of
// all of them; subtests and skips are not.
func TestSummarizeSlowest(t *testing.T) {
	var out strings.Builder
	_, _, err := summarize(strings.NewReader(`{"Action":"pass","Package":"p","Test":"TestQuick","Elapsed":1.5}
{"Action":"pass","Package":"p","Test":"TestSlow/sub","Elapsed":30}
{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":31}
{"Action":"skip","Package":"p","Test":"TestSkipped","Elapsed":40}
{"Action":"fail","Package":"q","Test":"TestMiddle","Elapsed":7.25}
`), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := "slowest top-level tests (of 3, 40 s in all):\n    31.0s TestSlow (p)\n     7.2s TestMiddle (q)\n     1.5s TestQuick (p)\n"
	if got := out.String(); !strings.HasSuffix(got, want) {
		t.Errorf("the report ends\n%s\nwant it to end\n%s", got, want)
	}
}
