//go:build unix

package tfcli

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a process group of its own, so
// that KillAll reaches the provider processes it starts.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killAll SIGKILLs the process group led by root, then each pid (a
// provider that left the group is still found by its parent's pid).
func killAll(root int, pids []int) {
	_ = syscall.Kill(-root, syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
