package journal

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Lookups is the ledger of one token's sandbox lookups that every provider
// process of this user on this machine shares: the platform counts lookups
// per token over 60 s, so a process that counts only its own (prime.Window
// alone) draws 429s as soon as a second workspace, a plan or a refresh on
// the same token runs beside it. Processes on other machines are not seen;
// the 429's Retry-After covers them.
//
// The ledger is one file of ledgerBuckets one-second buckets (the second,
// then the count, 8 bytes each, little-endian), read and rewritten under
// an exclusive flock(2) for each take. A lookup taken during second s
// counts until s+span+1 s, never less than span after it was taken.
type Lookups struct {
	mu sync.Mutex
	f  *os.File
}

// ledgerBuckets is how many one-second buckets the ledger keeps: more than
// the 61 a 60 s window reads.
const ledgerBuckets = 64

const ledgerBucketSize = 16

// errLedgerCorrupt: the file is not a ledger (another tool's, or cut short).
var errLedgerCorrupt = errors.New("lookup ledger: not a ledger file")

// DefaultLookups is the shared ledger of a token (account: prime.Account,
// a digest of the token and its API origin, never the key), under the
// user's cache directory, or nil (no ledger: the caller counts its own
// lookups only) where the file cannot be opened or there are no file locks.
func DefaultLookups(account string) *Lookups {
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	return OpenLookups(filepath.Join(cache, "terraform-provider-prime", "lookups"), account)
}

// OpenLookups opens (or makes) the ledger of account in dir, or returns
// nil. Ledgers untouched for a day are removed on the way: a
// ledger of a prime-mock's port or of a rotated key is never read again.
func OpenLookups(dir, account string) *Lookups {
	if !journalLocksSupported || dir == "" || account == "" || filepath.Base(account) != account {
		return nil
	}
	path := filepath.Join(dir, account)
	openLedgersMu.Lock()
	defer openLedgersMu.Unlock()
	if l, ok := openLedgers[path]; ok {
		return l // every later configure of the process: no file-system work
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	removeStaleLedgers(dir, time.Now().Add(-24*time.Hour))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // G304: our own cache directory, a hex name
	if err != nil {
		return nil
	}
	l := &Lookups{f: f}
	openLedgers[path] = l
	return l
}

// openLedgers: one open file per ledger and process, however many
// provider instances (aliases, configures) use it.
var (
	openLedgersMu sync.Mutex
	openLedgers   = map[string]*Lookups{}
)

func removeStaleLedgers(dir string, before time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(before) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// ledgerBucket is one second's count (exported fields: encoding/binary
// sets them).
type ledgerBucket struct{ Sec, N int64 }

// Take counts n lookups at now if the ledger's last span holds at most
// limit-n; otherwise it counts nothing and returns when enough will have
// left the window for n to fit (Take again then).
func (l *Lookups) Take(now time.Time, n, limit int, span time.Duration) (bool, time.Time, error) {
	var ok bool
	var at time.Time
	err := l.update(func(b *[ledgerBuckets]ledgerBucket) bool {
		sec, spanSec := now.Unix(), int64(span/time.Second)
		used := ledgerUsed(b, sec, spanSec)
		if used+int64(n) > int64(limit) {
			at = ledgerFits(b, sec, spanSec, used+int64(n)-int64(limit))
			return false
		}
		ok = true
		i := sec % ledgerBuckets
		if b[i].Sec != sec {
			b[i] = ledgerBucket{Sec: sec}
		}
		b[i].N += int64(n)
		return true
	})
	return ok, at, err
}

// Used is how many lookups the ledger holds in the span up to now.
func (l *Lookups) Used(now time.Time, span time.Duration) (int, error) {
	var used int64
	err := l.update(func(b *[ledgerBuckets]ledgerBucket) bool {
		used = ledgerUsed(b, now.Unix(), int64(span/time.Second))
		return false
	})
	return int(used), err
}

// ledgerUsed sums the buckets that still count at second sec.
func ledgerUsed(b *[ledgerBuckets]ledgerBucket, sec, spanSec int64) int64 {
	var used int64
	for _, e := range b {
		if e.N > 0 && e.Sec <= sec && sec-e.Sec <= spanSec {
			used += e.N
		}
	}
	return used
}

// ledgerFits is the first time at which need lookups have left the window
// of second sec, oldest bucket first.
func ledgerFits(b *[ledgerBuckets]ledgerBucket, sec, spanSec, need int64) time.Time {
	for s := sec - spanSec; s <= sec; s++ {
		if e := b[s%ledgerBuckets]; e.Sec == s {
			need -= e.N
		}
		if need <= 0 {
			return time.Unix(s+spanSec+1, 0)
		}
	}
	return time.Unix(sec+spanSec+1, 0) // more than the limit at once: an empty window
}

// update reads the buckets under the lock, lets change edit them, and
// writes them back when it reports a change.
func (l *Lookups) update(change func(*[ledgerBuckets]ledgerBucket) bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := lockWait(l.f); err != nil {
		return err
	}
	defer func() { _ = unlock(l.f) }()
	var raw [ledgerBuckets * ledgerBucketSize]byte
	var b [ledgerBuckets]ledgerBucket
	switch n, err := l.f.ReadAt(raw[:], 0); {
	case n == len(raw):
		if _, err := binary.Decode(raw[:], binary.LittleEndian, &b); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, io.EOF):
		return err
	case n > 0:
		return errLedgerCorrupt
	}
	if !change(&b) {
		return nil
	}
	if _, err := binary.Encode(raw[:], binary.LittleEndian, &b); err != nil {
		return err
	}
	_, err := l.f.WriteAt(raw[:], 0)
	return err
}
