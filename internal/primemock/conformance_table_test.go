package primemock_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// conformanceGuide is the mock's conformance table (rendered into
// docs/guides/prime-mock.md by make docs).
const conformanceGuide = "../../templates/guides/prime-mock.md.tmpl"

var inferredKey = regexp.MustCompile(`\[I: ([a-z0-9-]+)[]:]`)

// Every inference in the mock's code is marked [I: key], and every key is
// a row of the conformance table: nothing the mock decides on its own goes
// unlisted. No unkeyed "[guess" marker is left.
func TestEveryInferenceIsInTheConformanceTable(t *testing.T) {
	table, err := os.ReadFile(conformanceGuide)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range []string{".", "shell", "sandboxfs"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	keys := map[string][]string{}
	for _, f := range files {
		// A package's doc summarises the code it points at, with plain [I].
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "doc.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "[guess") {
			t.Errorf("%s: a [guess] marker without a key: write [I: key] and add the key to the table", f)
		}
		for _, m := range inferredKey.FindAllStringSubmatch(string(src), -1) {
			keys[m[1]] = append(keys[m[1]], f)
		}
	}
	if len(keys) < 50 {
		t.Fatalf("found %d [I: key] markers; the scan is broken", len(keys))
	}
	var missing []string
	for k, fs := range keys {
		if !strings.Contains(string(table), "`"+k+"`") {
			missing = append(missing, k+" ("+strings.Join(slices.Compact(fs), ", ")+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("[I: %s] is not in the conformance table", m)
	}
}
