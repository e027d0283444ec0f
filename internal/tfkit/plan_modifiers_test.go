package tfkit

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// fakePrivate is private state for unit tests of the import marker.
type fakePrivate struct {
	m      map[string][]byte
	writes int
}

func (f *fakePrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return f.m[key], nil
}
func (f *fakePrivate) SetKey(_ context.Context, key string, v []byte) diag.Diagnostics {
	f.writes++
	f.m[key] = v
	return nil
}

// Only the import's own Read touches the import marker (pending → read);
// every later Read leaves private state as it was, whatever an earlier
// build stored, so a refresh is never a change. Every stored form counts
// as imported until an Update clears it.
func TestReadAfterImport(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		stored     string
		importRead bool
		after      string
	}{
		{"0", true, "1"}, {"1", false, "1"}, {"2", false, "2"}, {"true", false, "true"}, {"", false, ""},
	} {
		p := &fakePrivate{m: map[string][]byte{}}
		if c.stored != "" {
			p.m[ImportedKey] = []byte(c.stored)
		}
		got, d := ReadAfterImport(ctx, p, p)
		wantWrites := map[bool]int{true: 1, false: 0}[c.importRead]
		if d.HasError() || got != c.importRead || string(p.m[ImportedKey]) != c.after || p.writes != wantWrites {
			t.Errorf("stored %q: import read %t, marker %q, %d writes; want %t, %q, %d", c.stored, got,
				p.m[ImportedKey], p.writes, c.importRead, c.after, wantWrites)
		}
		if imported := WasImported(ctx, p); imported != (c.stored != "") {
			t.Errorf("stored %q: WasImported %t after the Read", c.stored, imported)
		}
	}
}
