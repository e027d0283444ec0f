// Package shelltest holds the scripts the SDK and the provider send to
// start background jobs (jobs.go), for the tests of the mock's shell and of
// the mock. Only tests import it.
//
// It may import: the standard library.
package shelltest
