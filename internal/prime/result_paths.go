package prime

import (
	"fmt"
	"path"
	"strings"
)

// ResultPathsNotClearedCode is the exit code of a command whose result
// paths could not be removed: the command itself did not run. 125 is what
// env(1) and similar wrappers use for "the wrapper failed", distinct from
// the shell's 126/127 and from the signals' 128+n.
const ResultPathsNotClearedCode = 125

// ResultPathsNotClearedMessage is what such a command prints on stderr.
const ResultPathsNotClearedMessage = "prime: result_paths could not be removed, so the command did not run"

// ResultPathsPrefix starts a command whose result paths are removed first,
// so that logs and event streams show what the removal is for: ":" does
// nothing.
const ResultPathsPrefix = ": prime result_paths; "

// ClearResultPathsCommand prefixes command with the removal of paths
// (files or directories, recursively), as one script: the paths are
// removed right before the command starts, in the same shell, so nothing
// can write between the removal and the run, and a result found after the
// run was written by it. When the removal fails, the script stops with
// ResultPathsNotClearedCode and ResultPathsNotClearedMessage on stderr,
// without running the command. The command's text follows on a line of
// its own, unchanged. No paths: the command as it is.
func ClearResultPathsCommand(paths []string, command string) string {
	return StampedRunCommand(paths, "", command)
}

// RunStampDir holds one empty file per run that cleared its result paths,
// named by the run's ID and written right after the removal, before the
// command starts: its modification time is the run's start, in the
// sandbox's own clock. A reader that expects a run's result checks the
// result against it (ResultFreshCommand).
const RunStampDir = "/tmp/.prime-runs"

// RunStampPath is the stamp of run runID.
func RunStampPath(runID string) string { return RunStampDir + "/" + runID }

// StampedRunCommand is ClearResultPathsCommand that also leaves run
// runID's stamp (RunStampPath) after the removal, in the same script: a
// run whose paths could not be removed, or whose stamp could not be
// written, does not start. No paths: the command as it is (no stamp: a run
// without result paths promises nothing about them). An empty runID leaves
// no stamp.
func StampedRunCommand(paths []string, runID, command string) string {
	if len(paths) == 0 {
		return command
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = shellQuote(p)
	}
	stamp := ""
	if runID != "" {
		stamp = fmt.Sprintf(" && mkdir -p -- %s && : > %s", RunStampDir, shellQuote(RunStampPath(runID)))
	}
	return fmt.Sprintf("%srm -rf -- %s%s || (echo %s >&2; exit %d) || exit %d\n%s", ResultPathsPrefix, strings.Join(quoted, " "),
		stamp, shellQuote(ResultPathsNotClearedMessage), ResultPathsNotClearedCode, ResultPathsNotClearedCode, command)
}

// What ResultFreshCommand's exit code says about a result.
const (
	ResultFresh      = 0 // written by the run, or after it started
	ResultNoRunStamp = 3 // the run left no stamp here: it never started in this sandbox (or /tmp was cleared)
	ResultMissing    = 4 // no such file
	ResultStale      = 5 // older than the run's start: an earlier run's
)

// ResultFreshCommand checks, in the sandbox, that the file or directory at
// p was written by run runID or after it started: its stamp exists and p is
// not older than it. The exit code is one of the Result* codes.
func ResultFreshCommand(runID, p string) string {
	stamp, q := shellQuote(RunStampPath(runID)), shellQuote(p)
	return fmt.Sprintf("test -e %s || exit %d; test -e %s || exit %d; test %s -ot %s && exit %d; exit %d",
		stamp, ResultNoRunStamp, q, ResultMissing, q, stamp, ResultStale, ResultFresh)
}

// ValidRunID: run IDs name files (RunStampPath), so they are what the
// provider makes them, lowercase hex, and nothing a reader could use to
// name another path.
func ValidRunID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// CheckResultPath says why p cannot be a result path, or "" when it can:
// it must be absolute, without ".." elements or NUL bytes, and neither "/"
// nor "/tmp" (which holds the background jobs' logs and exit files) once
// cleaned.
func CheckResultPath(p string) string {
	switch {
	case p == "":
		return "it is empty"
	case strings.ContainsRune(p, 0):
		return "it contains a NUL byte"
	case !strings.HasPrefix(p, "/"):
		return "it is not absolute (it must start with /)"
	case hasDotDot(p):
		return `it contains a ".." element`
	}
	switch path.Clean(p) {
	case "/":
		return "it is the root directory"
	case "/tmp":
		return "it is /tmp, which holds every background job's logs and exit file"
	}
	return ""
}

func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}
