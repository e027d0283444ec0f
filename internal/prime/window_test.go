package prime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeWindow is a Window on a clock the test moves: each sleep advances it.
func fakeWindow(limit int, span time.Duration) (*Window, *time.Time, *[]time.Duration) {
	now := time.Unix(1_800_000_000, 0)
	var slept []time.Duration
	w := NewWindow(limit, span)
	w.now = func() time.Time { return now }
	w.sleep = func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		slept = append(slept, d)
		now = now.Add(d)
		return nil
	}
	return w, &now, &slept
}

func TestWindowTakeWaitsForTheOldestUnitsToLeave(t *testing.T) {
	tests := []struct {
		name      string
		takes     []int           // taken one after the other, 10 s apart
		then      int             // the take under test, 10 s after the last
		wantSleep []time.Duration // what it waited
	}{
		{name: "fits", takes: []int{40, 50}, then: 10, wantSleep: nil},
		{name: "waits for the first entry", takes: []int{40, 50}, then: 20, wantSleep: []time.Duration{40 * time.Second}},
		{name: "waits for two entries", takes: []int{40, 50}, then: 60, wantSleep: []time.Duration{50 * time.Second}},
		{name: "more than the limit waits for an empty window", takes: []int{100}, then: 250, wantSleep: []time.Duration{50 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, now, slept := fakeWindow(100, time.Minute)
			for _, n := range tt.takes {
				if err := w.Take(context.Background(), n); err != nil {
					t.Fatal(err)
				}
				*now = now.Add(10 * time.Second)
			}
			if err := w.Take(context.Background(), tt.then); err != nil {
				t.Fatal(err)
			}
			if len(*slept) != len(tt.wantSleep) {
				t.Fatalf("slept %v, want %v", *slept, tt.wantSleep)
			}
			for i := range tt.wantSleep {
				if (*slept)[i] != tt.wantSleep[i] {
					t.Fatalf("slept %v, want %v", *slept, tt.wantSleep)
				}
			}
			if w.Free() < 0 {
				t.Fatalf("the window holds more than its limit: %d free", w.Free())
			}
		})
	}
}

// No 60 s span of takes ever holds more than the limit, whatever the
// pattern of takes.
func TestWindowNeverHoldsMoreThanItsLimitInASpan(t *testing.T) {
	w, now, _ := fakeWindow(1000, time.Minute)
	type took struct {
		at time.Time
		n  int
	}
	var log []took
	for i := range 500 {
		n := 1 + (i*37)%100
		if err := w.Take(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		log = append(log, took{*now, n})
		*now = now.Add(time.Duration(i%7) * 100 * time.Millisecond)
	}
	for i := range log {
		sum := 0
		for j := i; j < len(log) && log[j].at.Sub(log[i].at) < time.Minute; j++ {
			sum += log[j].n
		}
		if sum > 1000 {
			t.Fatalf("%d units in the 60 s from take %d, limit 1000", sum, i)
		}
	}
}

func TestWindowTakeGivesUpWithItsContext(t *testing.T) {
	w, _, _ := fakeWindow(10, time.Minute)
	if err := w.Take(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("egress timeout (60s) reached")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := w.Take(ctx, 1); !errors.Is(err, cause) {
		t.Fatalf("Take = %v, want the context's cause", err)
	}
	var nilWindow *Window
	if err := nilWindow.Take(ctx, 5); err != nil {
		t.Fatalf("a nil window holds nobody: %v", err)
	}
}

// fakeLedger is a shared ledger that another process already filled with
// used units; it fails when fail is set.
type fakeLedger struct {
	used  int
	fail  error
	takes int
	fits  time.Time
}

func (l *fakeLedger) Take(_ time.Time, n, limit int, _ time.Duration) (bool, time.Time, error) {
	l.takes++
	if l.fail != nil {
		return false, time.Time{}, l.fail
	}
	if l.used+n > limit {
		l.used = 0 // the other process's units leave by l.fits
		return false, l.fits, nil
	}
	l.used += n
	return true, time.Time{}, nil
}

func (l *fakeLedger) Used(time.Time, time.Duration) (int, error) { return l.used, l.fail }

// A window that shares a ledger counts what other processes took: it waits
// until the ledger says the units fit, and falls back to counting its own
// when the ledger fails.
func TestWindowCountsThroughASharedLedger(t *testing.T) {
	w, now, slept := fakeWindow(10, time.Minute)
	start := *now
	ledger := &fakeLedger{used: 8, fits: start.Add(25 * time.Second)}
	w.Share(ledger)
	w.Share(&fakeLedger{}) // the first ledger stays
	if free := w.Free(); free != 2 {
		t.Errorf("Free = %d with 8 of 10 used by another process, want 2", free)
	}
	if err := w.Take(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	if len(*slept) != 1 || (*slept)[0] != 25*time.Second {
		t.Errorf("slept %v, want one wait of 25 s (until the ledger's units left)", *slept)
	}
	if ledger.used != 5 || ledger.takes != 2 {
		t.Errorf("ledger holds %d after %d takes, want 5 after 2", ledger.used, ledger.takes)
	}
	// A failing ledger is dropped: the window counts its own units again
	// (none so far, since the ledger counted them).
	ledger.fail = errors.New("disk full")
	if err := w.Take(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if free := w.Free(); free != 0 {
		t.Errorf("Free = %d after the fallback took 10 of 10, want 0", free)
	}
	if ledger.takes != 3 {
		t.Errorf("the failed ledger was asked %d times, want 3 (dropped after its failure)", ledger.takes)
	}
}
