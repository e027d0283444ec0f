package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A plan's Forget notes the sandboxes Terraform holds; another process (the
// apply walk after the plan walk) reads them; entries past the retention
// are dropped; a disabled journal notes nothing.
func TestHeldLedger(t *testing.T) {
	dir := t.TempDir()
	plan := NewCreates(dir)
	plan.Forget("sb-1", "sb-2")
	plan.Forget("sb-2") // already noted today: not written again
	if !plan.Held("sb-1") || plan.Held("sb-3") {
		t.Fatal("the planning process does not see what it noted")
	}
	apply := NewCreates(dir) // another process: reads the file
	if !apply.Held("sb-1") || !apply.Held("sb-2") || apply.Held("sb-3") {
		t.Fatal("another process does not see what the plan noted")
	}
	b, err := os.ReadFile(filepath.Join(dir, "held.log"))
	if err != nil || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("ledger %q (%v), want two lines", b, err)
	}

	old := fmt.Sprintf("%d sb-old\n", time.Now().Add(-heldRetention-time.Hour).Unix())
	if err := os.WriteFile(filepath.Join(dir, "held.log"), append(b, old...), 0o600); err != nil {
		t.Fatal(err)
	}
	later := NewCreates(dir)
	if later.Held("sb-old") || !later.Held("sb-1") {
		t.Error("an entry past the retention is still held, or a recent one was dropped")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "held.log")); strings.Contains(string(b), "sb-old") {
		t.Error("the dropped entry is still in the file")
	}

	off := NewCreates("")
	off.Forget("sb-1")
	if off.Held("sb-1") {
		t.Error("a disabled journal keeps a ledger")
	}
}
