//go:build !unix

package journal

import "os"

// journalLocksSupported is false where this provider has no file lock that
// dies with its process (Windows): the journal is then off, since without
// one an entry of a create still in flight could be adopted by a second
// create.
const journalLocksSupported = false

func tryLock(*os.File) (bool, error) { return false, nil }

func lockWait(*os.File) error { return nil }

func unlock(*os.File) error { return nil }
