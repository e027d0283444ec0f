//go:build !unix

package prime

// noFollow: no such flag here. ExtractTar never creates a link, and
// O_EXCL refuses any name that exists, a link included.
const noFollow = 0
