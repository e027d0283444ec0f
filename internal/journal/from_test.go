package journal

import "testing"

type configured struct {
	creates     *Creates
	jobs        *Jobs
	checkpoints *Checkpoints
}

func (c configured) CreateJournal() *Creates         { return c.creates }
func (c configured) JobJournal() *Jobs               { return c.jobs }
func (c configured) CheckpointJournal() *Checkpoints { return c.checkpoints }

// The journals come from whatever offers them; before Configure (nil data,
// or data that offers none) a disabled create journal and an inert job
// journal stand in, never nil.
func TestJournalsFromConfiguredData(t *testing.T) {
	creates, jobs, checkpoints := NewCreates(""), &Jobs{}, &Checkpoints{}
	if got := CreatesFrom(configured{creates: creates}); got != creates {
		t.Error("CreatesFrom did not return the offered journal")
	}
	if got := JobsFrom(configured{jobs: jobs}); got != jobs {
		t.Error("JobsFrom did not return the offered journal")
	}
	if got := CheckpointsFrom(configured{checkpoints: checkpoints}); got != checkpoints {
		t.Error("CheckpointsFrom did not return the offered journal")
	}
	for _, data := range []any{nil, "not configured", configured{}} {
		if CreatesFrom(data) == nil || JobsFrom(data) == nil || CheckpointsFrom(data) == nil {
			t.Errorf("%#v: a nil journal", data)
		}
	}
}
