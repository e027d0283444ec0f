package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A provider whose wrapper Terraform killed (it took over 2 s to exit after
// a 3,000-member apply) still counts: its live record stands in for the
// final one, which never came. A live record of a provider that did finish
// is ignored, and so are records that ended before the phase.
func TestReadRSSTakesLiveRecordsOfKilledWrappers(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "rss.jsonl")
	since := time.Now()
	write := func(path string, r rssRecord, appendTo bool) {
		b, _ := json.Marshal(r)
		if appendTo {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, _ = f.Write(append(b, '\n'))
			return
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(log, rssRecord{PID: 1, End: since.Add(-time.Second), MaxRSSKB: 1}, true) // an earlier phase
	write(log, rssRecord{PID: 2, End: since.Add(time.Second), MaxRSSKB: 2}, true)
	write(liveRecordPath(log, 2), rssRecord{PID: 2, End: since.Add(time.Second / 2), MaxRSSKB: 1, Live: true}, false)
	write(liveRecordPath(log, 3), rssRecord{PID: 3, End: since.Add(time.Second), MaxRSSKB: 300, Live: true}, false)
	write(liveRecordPath(log, 4), rssRecord{PID: 4, End: since.Add(-time.Second), MaxRSSKB: 4, Live: true}, false)
	got := map[int]int64{}
	for _, r := range readRSS(log, since) {
		got[r.PID] = r.MaxRSSKB
	}
	if len(got) != 2 || got[2] != 2 || got[3] != 300 {
		t.Fatalf("records %v, want pid 2's final record and pid 3's live one", got)
	}
}

// The wrapper's sample of a running process reads its high-water mark.
func TestProcHWMReadsThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if kb := procHWM(os.Getpid()); kb <= 0 {
		t.Fatalf("VmHWM of this process: %d KiB", kb)
	}
}
