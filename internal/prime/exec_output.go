package prime

import "bytes"

// outputScrubber passes a command's output to ExecRequest.OnOutput as it
// arrives, with secret values replaced by "***". A value can be split
// across two chunks, so the end of a chunk that could be the start of a
// secret is held back until the next chunk (or flush) tells; output that
// cannot start a secret goes on at once, so progress lines are not delayed.
// Its methods are nil-safe: a nil scrubber passes nothing on.
type outputScrubber struct {
	emit    func(stderr bool, chunk []byte)
	secrets []string
	forms   [][]byte  // every form ScrubText replaces, of the secrets it scrubs
	held    [2][]byte // per stream (0 stdout, 1 stderr): a possible secret's start
}

func newOutputScrubber(emit func(stderr bool, chunk []byte), secrets []string) *outputScrubber {
	s := &outputScrubber{emit: emit, secrets: secrets}
	for _, sec := range secrets {
		if len(sec) < 4 { // ScrubText leaves these alone too
			continue
		}
		for _, f := range secretForms(sec) {
			s.forms = append(s.forms, []byte(f))
		}
	}
	return s
}

func (s *outputScrubber) write(stderr bool, chunk []byte) {
	if s == nil || len(chunk) == 0 {
		return
	}
	if len(s.forms) == 0 {
		s.emit(stderr, chunk)
		return
	}
	i := streamIndex(stderr)
	text := append(append([]byte(nil), s.held[i]...), chunk...)
	scrubbed := []byte(ScrubText(string(text), s.secrets))
	keep := s.heldBack(scrubbed)
	s.held[i] = append([]byte(nil), scrubbed[len(scrubbed)-keep:]...)
	if out := scrubbed[:len(scrubbed)-keep]; len(out) > 0 {
		s.emit(stderr, out)
	}
}

// heldBack is the length of the longest end of b that is a proper start
// of some secret form.
func (s *outputScrubber) heldBack(b []byte) int {
	best := 0
	for _, f := range s.forms {
		for k := min(len(b), len(f)-1); k > best; k-- {
			if bytes.HasPrefix(f, b[len(b)-k:]) {
				best = k
				break
			}
		}
	}
	return best
}

// flush passes on what was held back: the stream is over.
func (s *outputScrubber) flush() {
	if s == nil {
		return
	}
	for i, h := range s.held {
		if len(h) > 0 {
			s.emit(i == 1, h)
		}
		s.held[i] = nil
	}
}

func streamIndex(stderr bool) int {
	if stderr {
		return 1
	}
	return 0
}
