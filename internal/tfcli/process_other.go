//go:build !unix

package tfcli

import (
	"os"
	"os/exec"
)

// ownProcessGroup does nothing where there are no process groups
// (Windows): the tests that kill an apply with its providers need a Unix
// system; the others, and the tools, run anywhere.
func ownProcessGroup(*exec.Cmd) {}

// killAll kills each pid it was given (Descendants finds none without
// /proc, so that is terraform alone).
func killAll(_ int, pids []int) {
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}
