package prime

import (
	"errors"
	"io"
)

// scrubChunk is how much of a stream ScrubStream reads at a time.
const scrubChunk = 64 << 10

// ScrubStream copies src to dst with every secret replaced as ScrubText
// replaces it, without holding the stream in memory: the same scrubber as
// ExecRequest.OnOutput's, which holds back only what could start a secret.
func ScrubStream(dst io.Writer, src io.Reader, secrets []string) (int64, error) {
	var written int64
	var werr error
	s := newOutputScrubber(func(_ bool, b []byte) {
		if werr != nil {
			return
		}
		n, err := dst.Write(b)
		written += int64(n)
		werr = err
	}, secrets)
	chunk := make([]byte, scrubChunk)
	for {
		n, rerr := src.Read(chunk)
		s.write(false, chunk[:n])
		if werr != nil {
			return written, werr
		}
		if errors.Is(rerr, io.EOF) {
			s.flush()
			return written, werr
		}
		if rerr != nil {
			return written, rerr
		}
	}
}
