package soak

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// The generated task directory's archive is the size asked for, exactly
// for multiples of 512, its data does not compress, and the same seed
// gives the same archive.
func TestWriteTaskDir(t *testing.T) {
	for _, tc := range []struct {
		size  int64
		exact bool
	}{{1 << 20, true}, {64 << 10, true}, {100_000, false}} {
		dir := filepath.Join(t.TempDir(), "task")
		a, err := WriteTaskDir(dir, tc.size, 7)
		if err != nil {
			t.Fatal(err)
		}
		if tc.exact && a.Size != tc.size || a.Size > tc.size || a.Size < tc.size-512 {
			t.Errorf("size %d: archive of %d bytes", tc.size, a.Size)
		}
		data, err := os.ReadFile(filepath.Join(dir, taskDataFile))
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(data)
		_ = zw.Close()
		if float64(z.Len()) < 0.99*float64(len(data)) {
			t.Errorf("size %d: data.bin compresses from %d to %d bytes", tc.size, len(data), z.Len())
		}
		again, err := WriteTaskDir(filepath.Join(t.TempDir(), "task"), tc.size, 7)
		if err != nil {
			t.Fatal(err)
		}
		if again.SHA256 != a.SHA256 {
			t.Errorf("size %d: the same seed gave archives %s and %s", tc.size, a.SHA256, again.SHA256)
		}
	}
	if _, err := WriteTaskDir(t.TempDir(), 512, 1); err == nil {
		t.Error("an archive smaller than its headers was accepted")
	}
}
