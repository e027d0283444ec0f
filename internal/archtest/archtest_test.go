package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layerOf ranks a package of the module (its path below the module root,
// "." for the root) by the table in doc.go; 0 when it is not placed.
func layerOf(rel string) int {
	domains := []string{"sandbox", "command", "files", "egress", "checkpoint", "network", "volume", "image", "ssh"}
	switch {
	case rel == ".", under(rel, "cmd"), rel == "internal/acctest", rel == "examples":
		return 7
	case rel == "internal/provider":
		return 6
	case strings.HasPrefix(rel, "internal/") && slices.Contains(domains, strings.TrimPrefix(rel, "internal/")):
		return 5
	case rel == "internal/memberkit", under(rel, "internal/tfkit"), rel == "internal/soak":
		return 4
	case rel == "internal/journal", under(rel, "internal/primemock"), rel == "internal/acctest/mocktest":
		return 3
	case rel == "internal/prime":
		return 2
	case under(rel, "internal/commandsession"), rel == "internal/tfcli", rel == "internal/archtest":
		return 1
	}
	return 0
}

// under reports whether rel is dir or a package below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// goPackage is one package of the module as its non-test files say.
type goPackage struct {
	rel     string   // path below the module root, "." for the root
	imports []string // every import path of its non-test files, sorted
	doc     string   // the package comment's text
	docFile string   // the file that holds it
	hasDoc  bool     // doc.go exists
}

// modulePackages reads every package of the module rooted at root, whose
// path is modulePath.
func modulePackages(t *testing.T, root string) map[string]*goPackage {
	t.Helper()
	pkgs := map[string]*goPackage{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		pkg := pkgs[rel]
		if pkg == nil {
			pkg = &goPackage{rel: rel}
			pkgs[rel] = pkg
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(pkg.imports, ip) {
				pkg.imports = append(pkg.imports, ip)
			}
		}
		base := filepath.Base(p)
		if base == "doc.go" {
			pkg.hasDoc = true
		}
		if f.Doc != nil && (pkg.docFile == "" || base == "doc.go") {
			pkg.doc, pkg.docFile = f.Doc.Text(), base
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		sort.Strings(p.imports)
	}
	return pkgs
}

// mayImport reads the "It may import:" sentence of a package comment.
func mayImport(doc string) ([]string, error) {
	const lead = "It may import:"
	i := strings.Index(doc, lead)
	if i < 0 {
		return nil, fmt.Errorf("no %q sentence", lead)
	}
	rest := doc[i+len(lead):]
	end := strings.Index(rest, ".\n")
	if end < 0 {
		if !strings.HasSuffix(strings.TrimSpace(rest), ".") {
			return nil, fmt.Errorf("the %q sentence does not end with a period at the end of a line", lead)
		}
		end = len(strings.TrimSpace(rest)) - 1
	}
	var entries []string
	for _, e := range strings.Split(rest[:end], ",") {
		e = strings.Join(strings.Fields(e), " ")
		if e == "" {
			return nil, fmt.Errorf("an empty entry in %q", rest[:end])
		}
		if e != "the standard library" && strings.Contains(e, " ") {
			return nil, fmt.Errorf("entry %q is neither %q nor an import path", e, "the standard library")
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// allows reports whether entry allows the import ip of a package of the
// module modulePath.
func allows(entry, ip, modulePath string) bool {
	if entry == "the standard library" {
		first, _, _ := strings.Cut(ip, "/")
		return !strings.Contains(first, ".")
	}
	if strings.HasPrefix(entry, "internal/") || strings.HasPrefix(entry, "cmd/") {
		entry = modulePath + "/" + entry
	}
	pattern, below := strings.CutSuffix(entry, "/...")
	pe, ie := strings.Split(pattern, "/"), strings.Split(ip, "/")
	if len(ie) < len(pe) || (!below && len(ie) != len(pe)) {
		return false
	}
	for i := range pe {
		if ok, _ := path.Match(pe[i], ie[i]); !ok {
			return false
		}
	}
	return true
}

func moduleRoot(t *testing.T) (root, modulePath string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestMapsTellTheTruth: every package says what it may import, imports
// nothing else, never imports from a higher layer, and no circle of
// imports exists (see doc.go).
func TestMapsTellTheTruth(t *testing.T) {
	root, modulePath := moduleRoot(t)
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("read %d packages under %s; the walk is broken", len(pkgs), root)
	}
	rels := make([]string, 0, len(pkgs))
	for rel := range pkgs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	internalOf := func(ip string) (string, bool) {
		if ip == modulePath {
			return ".", true
		}
		return strings.CutPrefix(ip, modulePath+"/")
	}
	for _, rel := range rels {
		p := pkgs[rel]
		if strings.HasPrefix(rel, "internal/") && !p.hasDoc {
			t.Errorf("%s has no doc.go", rel)
		}
		if p.doc == "" || !(strings.HasPrefix(p.doc, "Package ") || strings.HasPrefix(p.doc, "Command ")) {
			t.Errorf("%s: its package comment (%s) must begin \"Package NAME\" or \"Command NAME\" and say what it holds", rel, p.docFile)
		}
		entries, err := mayImport(p.doc)
		if err != nil {
			t.Errorf("%s (%s): %v", rel, p.docFile, err)
			continue
		}
		layer := layerOf(rel)
		if layer == 0 {
			t.Errorf("%s is in no layer: place it in layerOf and in doc.go's table", rel)
		}
		for _, ip := range p.imports {
			if !slices.ContainsFunc(entries, func(e string) bool { return allows(e, ip, modulePath) }) {
				t.Errorf("%s imports %s, which its %s does not allow (It may import: %s)", rel, ip, p.docFile, strings.Join(entries, ", "))
			}
			if dep, ok := internalOf(ip); ok && layerOf(dep) > layer && layer != 0 {
				t.Errorf("%s (layer %d) imports %s from the higher layer %d", rel, layer, dep, layerOf(dep))
			}
		}
	}
	// Circles: a depth-first walk over the module's own imports.
	state := map[string]int{} // 1: on the path, 2: done
	var stack []string
	var visit func(rel string)
	visit = func(rel string) {
		state[rel] = 1
		stack = append(stack, rel)
		for _, ip := range pkgs[rel].imports {
			dep, ok := internalOf(ip)
			if !ok || pkgs[dep] == nil {
				continue
			}
			switch state[dep] {
			case 1:
				i := slices.Index(stack, dep)
				t.Errorf("a circle of imports: %s -> %s", strings.Join(stack[i:], " -> "), dep)
			case 0:
				visit(dep)
			}
		}
		stack = stack[:len(stack)-1]
		state[rel] = 2
	}
	for _, rel := range rels {
		if state[rel] == 0 {
			visit(rel)
		}
	}
}

// TestTheTestCanFail: the readers the test relies on refuse what they
// must refuse, so a lying map cannot pass.
func TestTheTestCanFail(t *testing.T) {
	const mod = "example.com/m"
	for _, tc := range []struct {
		entry, ip string
		want      bool
	}{
		{"the standard library", "net/http", true},
		{"the standard library", "golang.org/x/net/idna", false},
		{"the standard library", mod + "/internal/prime", false},
		{"internal/prime", mod + "/internal/prime", true},
		{"internal/prime", mod + "/internal/primemock", false},
		{"internal/prime", mod + "/internal/prime/sub", false},
		{"internal/primemock/...", mod + "/internal/primemock/shell", true},
		{"internal/primemock/...", mod + "/internal/primemock", true},
		{"github.com/hashicorp/terraform-plugin-*/...", "github.com/hashicorp/terraform-plugin-framework/types", true},
		{"github.com/hashicorp/terraform-plugin-*/...", "github.com/hashicorp/go-cleanhttp", false},
		{"connectrpc.com/connect", "connectrpc.com/connect", true},
		{"connectrpc.com/connect", "connectrpc.com/connect/internal", false},
	} {
		if got := allows(tc.entry, tc.ip, mod); got != tc.want {
			t.Errorf("allows(%q, %q) = %t, want %t", tc.entry, tc.ip, got, tc.want)
		}
	}
	for doc, want := range map[string]string{
		"Package x holds y.\n\nIt may import: the standard library, internal/prime.\n":                          "the standard library|internal/prime",
		"Package x.\n\nIt may import: the standard library,\ngolang.org/x/net/idna, internal/prime.\n\nMore.\n": "the standard library|golang.org/x/net/idna|internal/prime",
		"Package x.\n\nIt may import: the standard library and internal/prime.\n":                               "",
		"Package x.\n\nIt may import the standard library.\n":                                                   "",
	} {
		got, err := mayImport(doc)
		if want == "" {
			if err == nil {
				t.Errorf("mayImport(%q) = %q, want an error", doc, got)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("mayImport(%q) = %q, %v; want %q", doc, got, err, want)
		}
	}
	if layerOf("internal/newthing") != 0 || layerOf("internal/prime") >= layerOf("internal/sandbox") {
		t.Error("the layer table places what it must not, or upside down")
	}
}
