package shell

// A shell execution's plumbing: signals, output streams and file
// descriptors.

import (
	"fmt"
	"slices"
	"sync"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// Signal names as the events and SendSignal spell them.
const (
	SigTERM = "SIGTERM"
	SigKILL = "SIGKILL"
)

// signalBox carries signals to a running script.
type signalBox struct {
	mu      sync.Mutex
	pending []string
	wake    chan struct{}
}

func newSignalBox() *signalBox { return &signalBox{wake: make(chan struct{}, 1)} }

func (b *signalBox) send(sig string) {
	b.mu.Lock()
	b.pending = append(b.pending, sig)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take returns the next signal: SIGKILL first, then SIGTERM, "" for none.
func (b *signalBox) take() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return ""
	}
	sig := b.pending[0]
	if slices.Contains(b.pending, SigKILL) {
		sig = SigKILL
		b.pending = nil
	} else {
		b.pending = b.pending[1:]
	}
	return sig
}

func (b *signalBox) wakeC() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.wake
}

// capped counts one output stream and drops what is beyond
// MaxExecOutputBytes.
type capped struct {
	n         int
	truncated bool
}

// sink is an execution's two output streams, shared by every process of
// its foreground tree. Writes after close (an orphaned child still running
// after its execution was reported) are dropped.
type sink struct {
	mu             sync.Mutex
	output         func(stderr bool, s string)
	stdout, stderr capped
	closed         bool
}

func (o *sink) emit(stderr bool, s string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := &o.stdout
	if stderr {
		c = &o.stderr
	}
	if room := MaxOutputBytes - c.n; len(s) > room {
		s, c.truncated = s[:max(room, 0)], true
	}
	if s == "" || o.closed {
		return
	}
	c.n += len(s)
	if o.output != nil {
		o.output(stderr, s)
	}
}

func (o *sink) truncated(stderr bool) bool {
	if o == nil {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if stderr {
		return o.stderr.truncated
	}
	return o.stdout.truncated
}

// close ends the streams, with a note on stderr when output was dropped.
func (o *sink) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if (o.stdout.truncated || o.stderr.truncated) && o.output != nil {
		o.output(true, fmt.Sprintf("\n[prime-mock: output truncated at %d bytes]\n", MaxOutputBytes))
	}
	o.closed = true
}

// What a file descriptor refers to.
type fdKind uint8

const (
	fdClosed fdKind = iota
	fdStdout        // the execution's stdout stream
	fdStderr        // the execution's stderr stream
	fdNull          // /dev/null
	fdFile          // a file open for writing
	fdInput         // a file open for reading: its content when opened
	fdPipe          // the write end of a pipe to the next stage
)

type fdEntry struct {
	kind fdKind
	file *sandboxfs.OpenFile
	data []byte
	pipe *pipeBuffer
}

// maxFD bounds the descriptors a script can name (0-9, as bash's
// redirections write them).
const maxFD = 10

type fdTable [maxFD]fdEntry

// clone is a copy that holds its own references to open files.
func (t *fdTable) clone() fdTable {
	c := *t
	for _, e := range c {
		if e.kind == fdFile {
			e.file.Dup()
		}
	}
	return c
}

func (t *fdTable) closeAll() {
	for i, e := range t {
		if e.kind == fdFile {
			e.file.Close()
		}
		t[i] = fdEntry{}
	}
}

// set stores e (whose file reference it takes over) in fd, closing what
// was there.
func (t *fdTable) set(fd int, e fdEntry) {
	old := t[fd]
	t[fd] = e
	if old.kind == fdFile {
		old.file.Close()
	}
}

func (t *fdTable) dupOf(fd int) fdEntry {
	e := t[fd]
	if e.kind == fdFile {
		e.file.Dup()
	}
	return e
}

func standardFDs() fdTable {
	var t fdTable
	t[0], t[1], t[2] = fdEntry{kind: fdInput}, fdEntry{kind: fdStdout}, fdEntry{kind: fdStderr}
	return t
}
