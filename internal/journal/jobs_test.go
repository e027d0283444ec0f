package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A result returned to Terraform is handed over: the next process takes
// it (Terraform may have been killed before storing it) unless a plan
// showed it in state; a clean end of the process removes it.
func TestJobJournalHandOver(t *testing.T) {
	dir := t.TempDir()
	j1 := JobsOf(NewCreates(dir))
	stored := j1.Begin(JobRecord{RunHash: "h-stored", SandboxID: "sbx-1", JobID: "aaaa0001", Started: time.Now(), Confirmed: true})
	lost := j1.Begin(JobRecord{RunHash: "h-lost", SandboxID: "sbx-2", JobID: "aaaa0002", Started: time.Now(), Confirmed: true})
	lost.Complete(&StepOutcome{ExitCode: 0, Stdout: "reward 1\n"})
	stored.HandOver()
	lost.HandOver()
	if e := j1.Adopt("h-lost"); e != nil {
		t.Fatal("a process adopted an entry it handed over itself")
	}

	JobsOf(NewCreates(dir)).Forget("h-stored", "h-other")
	if _, err := os.Stat(filepath.Join(dir, "jobs", "aaaa0001.json")); !os.IsNotExist(err) {
		t.Fatalf("the entry of a result in prior state was not removed (err %v)", err)
	}
	j3 := JobsOf(NewCreates(dir))
	if e := j3.Adopt("h-stored"); e != nil {
		t.Fatal("a result in state was adopted")
	}
	e := j3.Adopt("h-lost")
	if e == nil || e.rec.Outcome == nil || e.rec.Outcome.Stdout != "reward 1\n" {
		t.Fatalf("the lost result was not adopted with its outcome: %+v", e)
	}

	// A clean end stamps what a process handed over, and only that; past
	// the grace a later scan removes it.
	again := j3.Begin(JobRecord{RunHash: "h-3", SandboxID: "sbx-3", JobID: "aaaa0003", Started: time.Now(), Confirmed: true})
	again.HandOver()
	j3.handed.release()
	agePastGrace(t, filepath.Join(dir, "jobs", "aaaa0003.json"))
	if data, _ := os.ReadFile(filepath.Join(dir, "jobs", "aaaa0002.json")); strings.Contains(string(data), "released_at") {
		t.Fatalf("a clean end stamped an entry it did not hand over: %s", data)
	}
	if e := JobsOf(NewCreates(dir)).Adopt("h-3"); e != nil {
		t.Fatal("an entry past the grace was adopted")
	}
	if _, err := os.Stat(filepath.Join(dir, "jobs", "aaaa0003.json")); !os.IsNotExist(err) {
		t.Fatalf("an entry past the grace was not removed (err %v)", err)
	}
}
