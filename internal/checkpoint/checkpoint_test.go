package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{
		{Name: "prime_sandbox_checkpoint", Schema: tfkittest.ResourceSchema(t, NewResource()), Model: func() any { return &resourceModel{} }},
		{Name: "data prime_sandbox_checkpoint", Schema: tfkittest.DataSourceSchema(NewDataSource()), Model: func() any { return &Fields{} }},
	})
}

func TestClassifyWait(t *testing.T) {
	gone := &prime.CheckpointFailedError{CheckpointID: "ck", Gone: true}
	failed := &prime.CheckpointFailedError{CheckpointID: "ck", State: prime.CheckpointFailed, Reason: "upload failed"}
	deadline := fmt.Errorf("checkpoint ck was still FROZEN when the wait ended: %w", context.DeadlineExceeded)
	for _, c := range []struct {
		name     string
		err      error
		timedOut bool
		want     waitOutcome
	}{
		{"gone", gone, false, waitLost},
		{"gone wrapped", fmt.Errorf("wait: %w", gone), true, waitLost},
		{"failed", failed, false, waitFailed},
		{"deadline", deadline, true, waitTimedOut},
		{"interrupted", fmt.Errorf("x: %w", context.Canceled), false, waitOther},
		{"poll error", errors.New("HTTP 500"), false, waitOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyWait(c.err, c.timedOut); got != c.want {
				t.Fatalf("classifyWait = %v, want %v", got, c.want)
			}
		})
	}
}

// Each outcome's message says whether the checkpoint is recorded.
func TestWaitErrorText(t *testing.T) {
	for o, want := range map[waitOutcome]string{
		waitLost:     "it is not recorded in state",
		waitFailed:   "did not become DURABLE",
		waitTimedOut: "recorded as tainted",
		waitOther:    "recorded as tainted",
	} {
		got := waitErrorText(o, "ck-1", "sb-1", time.Minute, errors.New("why"), true)
		if !strings.Contains(got, want) || !strings.Contains(got, "ck-1") || !strings.Contains(got, "sb-1") {
			t.Errorf("%s: %q lacks %q or the ids", outcomeSummary(o), got, want)
		}
	}
	// An update (waiting for an imported checkpoint) taints nothing.
	for _, o := range []waitOutcome{waitTimedOut, waitOther} {
		got := waitErrorText(o, "ck-1", "sb-1", time.Minute, errors.New("why"), false)
		if strings.Contains(got, "tainted") || !strings.Contains(got, "the next apply waits for it again") {
			t.Errorf("%s after an update: %q", outcomeSummary(o), got)
		}
	}
}

func TestFieldsOf(t *testing.T) {
	disk, parent := int64(10<<30), "ck-parent"
	created := time.Date(2026, 12, 2, 13, 0, 0, 5, time.FixedZone("x", 3600))
	f := fieldsOf(prime.Checkpoint{ID: "ck-1", SandboxID: "sb", State: prime.CheckpointDurable, Depth: 2, ParentID: &parent,
		DockerImage: "python:3.12", DiskSizeBytes: &disk, CreatedAt: created})
	want := Fields{
		ID: types.StringValue("ck-1"), SandboxID: types.StringValue("sb"), State: types.StringValue("DURABLE"),
		ParentID: types.StringValue(parent), Depth: types.Int64Value(2), DockerImage: types.StringValue("python:3.12"),
		DiskSizeBytes: types.Int64Value(disk), StoredBytes: types.Int64Null(), CreatedAt: types.StringValue("2026-12-02T12:00:00Z"),
	}
	if f != want {
		t.Fatalf("fieldsOf = %+v, want %+v", f, want)
	}
	if got := fieldsOf(prime.Checkpoint{ID: "x"}); !got.CreatedAt.IsNull() || !got.ParentID.IsNull() {
		t.Fatalf("a record without created_at or parent gives nulls, got %+v", got)
	}
}

func TestTTLOf(t *testing.T) {
	if ttlOf(types.Int64Null()) != nil || ttlOf(types.Int64Unknown()) != nil {
		t.Fatal("unset ttl must send no ttl_seconds")
	}
	if got := ttlOf(types.Int64Value(3600)); got == nil || *got != 3600 {
		t.Fatalf("ttlOf(3600) = %v", got)
	}
}

func TestPauseWarning(t *testing.T) {
	for _, c := range []struct {
		err           error
		summary, want string
	}{
		{errors.New("HTTP 409"), "Source sandbox not paused", "does not retry"},
		{fmt.Errorf("%w: %w", prime.ErrPauseCheckpointUnlisted, errors.New("HTTP 500")), "Pause checkpoint not recorded", "is paused"},
	} {
		summary, detail := pauseWarning("ck-1", "sb-1", c.err)
		if summary != c.summary {
			t.Errorf("summary %q, want %q", summary, c.summary)
		}
		for _, want := range []string{"ck-1", "sb-1", "DURABLE and recorded", c.want} {
			if !strings.Contains(detail, want) {
				t.Errorf("%q lacks %q", detail, want)
			}
		}
	}
}
