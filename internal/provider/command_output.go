package provider

import (
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// maxOutputLine is how much of a line without its newline is held back
// before it is passed on anyway.
const maxOutputLine = 4 << 10

// outputSink passes a running command's output to commandSpec.OnOutput:
// in whole lines (a partial line at the end), valid UTF-8, with write-only
// values replaced by `***` as in recorded results. Text that could be the
// start of a write-only value is held back until the rest shows whether it
// is one, so a value split across chunks never leaks. A nil sink (no
// OnOutput, or sensitive_output) passes nothing.
type outputSink struct {
	emit    func(stderr bool, chunk []byte)
	secrets []string // the values, and as they read inside a JSON string
	mu      sync.Mutex
	pending [2]string // per stream (stdout, stderr): scrubbed text not passed on yet
	// streamed: the client delivered output while the command ran, so the
	// finished result must not be replayed.
	streamed bool
}

func newOutputSink(spec commandSpec) *outputSink {
	if spec.OnOutput == nil || spec.SensitiveOutput {
		return nil
	}
	s := &outputSink{emit: spec.OnOutput}
	for _, v := range spec.EnvWO {
		s.secrets = append(s.secrets, v)
		if q, err := json.Marshal(v); err == nil && string(q[1:len(q)-1]) != v {
			s.secrets = append(s.secrets, string(q[1:len(q)-1]))
		}
	}
	return s
}

// write takes one chunk of output as the client delivers it (the value of
// prime.ExecRequest's OnOutput).
func (s *outputSink) write(stderr bool, chunk []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamed = true
	s.add(stderr, string(chunk), false)
}

// finish passes on what is left once the command has ended. Until the
// client streams output, that is the whole output of res, so a caller sees
// it per finished command.
func (s *outputSink) finish(res *prime.ExecResult) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.streamed && res != nil {
		s.add(false, res.Stdout, true)
		s.add(true, res.Stderr, true)
		return
	}
	s.add(false, "", true)
	s.add(true, "", true)
}

// add appends text to a stream and emits what is ready: everything when
// final, else up to the last newline (or a long line's head), never a
// possible start of a secret. Called with mu held.
func (s *outputSink) add(stderr bool, text string, final bool) {
	i := 0
	if stderr {
		i = 1
	}
	buf := prime.ScrubText(s.pending[i]+text, s.secrets)
	ready := len(buf)
	if !final {
		ready -= secretPrefixAtEnd(buf, s.secrets)
		switch nl := strings.LastIndexByte(buf[:ready], '\n'); {
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

// secretPrefixAtEnd is the length of the longest end of text that is the
// start of a secret (0 when none), which must wait for the next chunk.
func secretPrefixAtEnd(text string, secrets []string) int {
	hold := 0
	for _, sec := range secrets {
		if len(sec) < 4 {
			continue // not scrubbed (prime.ScrubText), so not held either
		}
		for k := min(len(sec)-1, len(text)); k > hold; k-- {
			if strings.HasSuffix(text, sec[:k]) {
				hold = k
				break
			}
		}
	}
	return hold
}
