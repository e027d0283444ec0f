// Package sandboxfs is prime-mock's model of a sandbox's file system:
// directories, regular files, symlinks and /dev/null, in memory, with the
// errors worded as strerror words them. File contents live in a Store that
// every sandbox of a mock shares, keyed by SHA-256 and reference counted, so
// a thousand sandboxes given one archive hold one copy of each file.
// Snapshots detach a tree from its sandbox (a checkpoint's root file system,
// a volume's head) and give each restore or attachment a private copy.
//
// It may import: the standard library.
//
// Only the mock's server (internal/primemock) and its shell
// (internal/primemock/shell) import it.
package sandboxfs
