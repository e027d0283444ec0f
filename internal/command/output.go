package command

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// maxOutputLine is how much of a line without its newline is held back
// before it is passed on anyway.
const maxOutputLine = 4 << 10

// outputSink passes a running command's output to commandSpec.OnOutput in
// whole lines (a partial line at the end) of valid UTF-8. The client hands
// it output already scrubbed of write-only values (prime.ExecRequest's
// OnOutput), so it only assembles lines. A nil sink (no OnOutput, or
// sensitive_output) passes nothing.
type outputSink struct {
	emit    func(stderr bool, chunk []byte)
	mu      sync.Mutex
	pending [2]string // per stream (stdout, stderr): text not passed on yet
}

func newOutputSink(spec commandSpec) *outputSink {
	if spec.OnOutput == nil || spec.SensitiveOutput {
		return nil
	}
	return &outputSink{emit: spec.OnOutput}
}

// onOutput is the sink as prime.ExecRequest's OnOutput (nil for a nil
// sink, so the client does no work for nobody).
func (s *outputSink) onOutput() func(stderr bool, chunk []byte) {
	if s == nil {
		return nil
	}
	return s.write
}

// write takes one chunk of output as the client delivers it.
func (s *outputSink) write(stderr bool, chunk []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(stderr, string(chunk), false)
}

// finish passes on what is left once the command has ended.
func (s *outputSink) finish() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(false, "", true)
	s.add(true, "", true)
}

// add appends text to a stream and emits what is ready: everything when
// final, else up to the last newline (or a long line's head). Called with
// mu held.
func (s *outputSink) add(stderr bool, text string, final bool) {
	i := 0
	if stderr {
		i = 1
	}
	buf := s.pending[i] + text
	ready := len(buf)
	if !final {
		switch nl := strings.LastIndexByte(buf, '\n'); {
		case nl >= 0:
			ready = nl + 1
		case ready < maxOutputLine:
			ready = 0
		}
		for ready > 0 && ready < len(buf) && !utf8.RuneStart(buf[ready]) {
			ready-- // cut at a character boundary
		}
	}
	s.pending[i] = buf[ready:]
	if ready > 0 {
		s.emit(stderr, []byte(strings.ToValidUTF8(buf[:ready], "\uFFFD")))
	}
}
