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
	if len(paths) == 0 {
		return command
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = shellQuote(p)
	}
	return fmt.Sprintf("%srm -rf -- %s || (echo %s >&2; exit %d) || exit %d\n%s", ResultPathsPrefix, strings.Join(quoted, " "),
		shellQuote(ResultPathsNotClearedMessage), ResultPathsNotClearedCode, ResultPathsNotClearedCode, command)
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
