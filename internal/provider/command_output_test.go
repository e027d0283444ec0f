package provider

import (
	"strings"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// sinkRecorder collects what an outputSink passes on.
type sinkRecorder struct{ out, errs []string }

func (r *sinkRecorder) sink(envWO map[string]string) *outputSink {
	return newOutputSink(commandSpec{EnvWO: envWO, OnOutput: func(stderr bool, chunk []byte) {
		if stderr {
			r.errs = append(r.errs, string(chunk))
		} else {
			r.out = append(r.out, string(chunk))
		}
	}})
}

// Streamed output leaves in whole lines, with a write-only value scrubbed
// even when it arrives split across chunks; the rest leaves at finish, and
// the finished result is not replayed on top.
func TestOutputSinkStreamsLinesAndScrubsSplitSecrets(t *testing.T) {
	var r sinkRecorder
	s := r.sink(map[string]string{"TOKEN": "hunter22"})
	for _, chunk := range []string{"one\ntw", "o\ntoken=hun", "ter22 done\n", "tail"} {
		s.write(false, []byte(chunk))
	}
	s.write(true, []byte("warn\n"))
	s.finish(&prime.ExecResult{Stdout: "replayed?", Stderr: "replayed?"})
	got := strings.Join(r.out, "|")
	if want := "one\n|two\n|token=*** done\n|tail"; got != want {
		t.Fatalf("stdout passed on as %q, want %q", got, want)
	}
	if strings.Join(r.errs, "|") != "warn\n" {
		t.Fatalf("stderr passed on as %q", r.errs)
	}
	for _, c := range append(r.out, r.errs...) {
		if strings.Contains(c, "hun") && !strings.Contains(c, "***") {
			t.Fatalf("a part of the write-only value left the sink: %q", c)
		}
	}
}

// Without streaming (today's client) the whole output leaves at finish,
// scrubbed; with sensitive_output, or without a consumer, nothing does.
func TestOutputSinkReplaysFinishedOutput(t *testing.T) {
	var r sinkRecorder
	r.sink(map[string]string{"K": "s3cr3t-value"}).finish(&prime.ExecResult{Stdout: "a\nb s3cr3t-value\n", Stderr: "e"})
	if strings.Join(r.out, "") != "a\nb ***\n" || strings.Join(r.errs, "") != "e" {
		t.Fatalf("replayed stdout %q, stderr %q", r.out, r.errs)
	}
	if s := newOutputSink(commandSpec{SensitiveOutput: true, OnOutput: func(bool, []byte) { t.Fatal("sensitive output passed on") }}); s != nil {
		t.Fatal("a sink for sensitive output")
	}
	var none *outputSink
	none.write(false, []byte("x")) // a nil sink takes everything and passes nothing
	none.finish(&prime.ExecResult{Stdout: "x"})
}

// A line longer than maxOutputLine is passed on without its newline, cut
// at a character boundary; an end that may start a secret waits.
func TestOutputSinkLongLinesAndHeldPrefixes(t *testing.T) {
	var r sinkRecorder
	s := r.sink(map[string]string{"K": "abcdef"})
	long := strings.Repeat("é", maxOutputLine) // 2 bytes each
	s.write(false, []byte(long))
	if len(r.out) != 1 || !strings.HasPrefix(long, r.out[0]) || len(r.out[0]) < maxOutputLine {
		t.Fatalf("a long line was not passed on whole characters first: %d chunks", len(r.out))
	}
	r.out = nil
	s.write(false, []byte("\nend abc"))
	s.write(false, []byte("xyz\n"))
	s.finish(nil)
	if got := strings.Join(r.out, "|"); !strings.HasSuffix(got, "end abcxyz\n") {
		t.Fatalf("held prefix not released: %q", got)
	}
	if secretPrefixAtEnd("key ab", []string{"abcdef"}) != 2 || secretPrefixAtEnd("key", []string{"abcdef"}) != 0 ||
		secretPrefixAtEnd("ab", []string{"abcd"}) != 2 || secretPrefixAtEnd("ab", []string{"abc"}) != 0 {
		t.Fatal("secretPrefixAtEnd")
	}
}
