package command

import (
	"strings"
	"testing"
)

// sinkRecorder collects what an outputSink passes on.
type sinkRecorder struct{ out, errs []string }

func (r *sinkRecorder) sink() *outputSink {
	return newOutputSink(commandSpec{OnOutput: func(stderr bool, chunk []byte) {
		if stderr {
			r.errs = append(r.errs, string(chunk))
		} else {
			r.out = append(r.out, string(chunk))
		}
	}})
}

// Output leaves in whole lines; the rest leaves at finish. (Write-only
// values never reach the sink: the client scrubs what it hands on, see
// prime's outputScrubber.)
func TestOutputSinkPassesWholeLines(t *testing.T) {
	var r sinkRecorder
	s := r.sink()
	for _, chunk := range []string{"one\ntw", "o\nthree ", "done\n", "tail"} {
		s.write(false, []byte(chunk))
	}
	s.write(true, []byte("warn\n"))
	s.finish()
	if got, want := strings.Join(r.out, "|"), "one\n|two\n|three done\n|tail"; got != want {
		t.Fatalf("stdout passed on as %q, want %q", got, want)
	}
	if strings.Join(r.errs, "|") != "warn\n" {
		t.Fatalf("stderr passed on as %q", r.errs)
	}
}

// With sensitive_output, or without a consumer, nothing is passed on.
func TestOutputSinkPassesNothingSensitive(t *testing.T) {
	if s := newOutputSink(commandSpec{SensitiveOutput: true, OnOutput: func(bool, []byte) { t.Fatal("sensitive output passed on") }}); s != nil {
		t.Fatal("a sink for sensitive output")
	}
	var none *outputSink
	if none.onOutput() != nil {
		t.Fatal("a nil sink asks the client for output")
	}
	none.write(false, []byte("x")) // a nil sink takes everything and passes nothing
	none.finish()
}

// A line longer than maxOutputLine is passed on without its newline, cut
// at a character boundary.
func TestOutputSinkLongLines(t *testing.T) {
	var r sinkRecorder
	s := r.sink()
	long := strings.Repeat("é", maxOutputLine) // 2 bytes each
	s.write(false, []byte(long))
	s.finish()
	joined := strings.Join(r.out, "")
	if joined != long {
		t.Fatalf("the long line came out altered (%d bytes, want %d)", len(joined), len(long))
	}
	for _, c := range r.out {
		if !strings.HasPrefix(c, "é") && c != "" {
			t.Fatalf("a chunk was cut inside a character: %q…", c[:2])
		}
	}
}
