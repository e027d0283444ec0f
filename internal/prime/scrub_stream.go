package prime

import (
	"bytes"
	"errors"
	"io"
)

// scrubChunk is how much of a stream ScrubStream reads at a time.
const scrubChunk = 64 << 10

// ScrubStream copies src to dst with every secret replaced as ScrubText
// replaces it, without holding the stream in memory: each chunk is written
// once no secret (in any of its forms) can straddle its end; the few bytes
// that could start one are carried into the next chunk.
func ScrubStream(dst io.Writer, src io.Reader, secrets []string) (int64, error) {
	var forms [][]byte
	longest := 0
	for _, sec := range secrets {
		if len(sec) < 4 {
			continue
		}
		for _, f := range secretForms(sec) {
			forms = append(forms, []byte(f))
			longest = max(longest, len(f))
		}
	}
	if len(forms) == 0 {
		return io.Copy(dst, src)
	}
	var written int64
	emit := func(b []byte) error {
		n, err := io.WriteString(dst, ScrubText(string(b), secrets))
		written += int64(n)
		return err
	}
	buf := make([]byte, 0, scrubChunk+longest)
	chunk := make([]byte, scrubChunk)
	for {
		n, rerr := src.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if errors.Is(rerr, io.EOF) {
			return written, emit(buf)
		}
		if rerr != nil {
			return written, rerr
		}
		cut := safeCut(buf, forms, longest)
		if cut > 0 {
			if err := emit(buf[:cut]); err != nil {
				return written, err
			}
			buf = append(buf[:0], buf[cut:]...)
		}
	}
}

// safeCut is the largest boundary at most len(b)-(longest-1) that no
// occurrence of a form straddles.
func safeCut(b []byte, forms [][]byte, longest int) int {
	cut := len(b) - (longest - 1)
	if cut <= 0 {
		return 0
	}
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range forms {
			for s := max(0, cut-len(f)+1); s < cut; s++ {
				if s+len(f) <= len(b) && bytes.Equal(b[s:s+len(f)], f) {
					cut, moved = s, true
					break
				}
			}
		}
	}
	return cut
}
