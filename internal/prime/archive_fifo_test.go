//go:build unix

package prime

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteDirTarRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"ok.txt": "x"})
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifo here:", err)
	}
	_, err := WriteDirTar(io.Discard, dir)
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "fifo") {
		t.Fatalf("err = %v; want an error naming %s as a fifo", err, fifo)
	}
}
