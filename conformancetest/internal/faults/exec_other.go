//go:build !unix

package faults

import "os/exec"

// Without process groups, only the shell itself is ended, and nothing
// else of the command is looked for.

func ownGroup(*exec.Cmd) {}

func (g group) signal(bool) { g.proc.Kill() }

func (g group) alive() bool { return false }
