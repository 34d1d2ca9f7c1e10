//go:build unix

package faults

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup makes the command lead a process group of its own, so that
// everything it starts can be signalled at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signal sends SIGTERM (SIGKILL with kill) to every process of the group;
// a group already gone is not an error.
func (g group) signal(kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-g.pid, sig)
}

// groupSignalable reports whether process group pgid has a member:
// kill(-pgid, 0) finds one (EPERM: one we may not signal).
func groupSignalable(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
