package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/primeintellect/terraform-provider-prime/internal/tfcli"
)

// The reporter logs the counts at its pace and at the end, and keeps the
// progress file whole and current.
func TestProgressReporter(t *testing.T) {
	defer func(l, f time.Duration) { progressLogEvery, progressFileEvery = l, f }(progressLogEvery, progressFileEvery)
	progressLogEvery, progressFileEvery = 10*time.Millisecond, 10*time.Millisecond
	logs := &tfcli.SyncBuffer{} // written by the reporter's goroutine
	ctx := tflogtest.RootLogger(context.Background(), logs)
	file := filepath.Join(t.TempDir(), "out", ProgressFileName)
	p := newProgressReporter(ctx, progressOptions{What: "prime_fleet_command", Keys: []string{"a", "b", "c"},
		States: commandProgressStates, File: file})
	p.update("a", func(m *memberProgressState) { m.State, m.Step, m.Steps, m.JobID = ProgressRunning, 1, 2, "0123abcd" })
	p.set("b", ProgressSucceeded)
	read := func() ProgressFile {
		t.Helper()
		var doc ProgressFile
		b, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			return doc // not written yet
		}
		if err == nil {
			err = json.Unmarshal(b, &doc) // never half a file: it is renamed into place
		}
		if err != nil {
			t.Fatalf("progress file: %v", err)
		}
		return doc
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if doc := read(); doc.Counts[ProgressSucceeded] == 1 && strings.Contains(logs.String(), "in progress") {
			if doc.Finished || doc.Members["a"].JobID != "0123abcd" || doc.Total != 3 {
				t.Fatalf("progress file while running: %+v", doc)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress: file %+v, logs %s", read(), logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.set("a", ProgressFailed)
	p.set("c", ProgressSucceeded)
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	doc := read()
	if !doc.Finished || doc.Counts[ProgressSucceeded] != 2 || doc.Counts[ProgressFailed] != 1 || doc.Summary != "2 succeeded, 1 failed of 3" {
		t.Fatalf("final progress file: %+v", doc)
	}
	if !strings.Contains(logs.String(), `prime_fleet_command finished: 2 succeeded, 1 failed of 3`) ||
		!strings.Contains(logs.String(), `"@level":"info"`) {
		t.Fatalf("logs: %s", logs.String())
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Fatalf("the rewrites left temporary files: %v", entries)
	}
	var nilReporter *progressReporter
	nilReporter.set("x", ProgressRunning)
	if err := nilReporter.stop(); err != nil {
		t.Fatal(err)
	}
}
