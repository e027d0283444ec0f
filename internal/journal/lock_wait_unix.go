//go:build unix

package journal

import (
	"os"
	"syscall"
)

// lockWait takes an exclusive lock on f, waiting for it: for the shared
// lookup ledger, whose holders keep it for a read and a write.
func lockWait(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// unlock releases a lock lockWait took.
func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
