//go:build unix

package journal

import (
	"errors"
	"os"
	"syscall"
)

// journalLocksSupported: flock(2) gives every journal entry an owner that
// the kernel releases when the owning process dies.
const journalLocksSupported = true

// tryLock takes an exclusive lock on f without waiting. A lock held through
// another open file (another process, or another journal in this one) makes
// it report false.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}
