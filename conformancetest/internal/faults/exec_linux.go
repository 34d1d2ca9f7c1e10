package faults

import (
	"bytes"
	"os"
	"strconv"
)

// alive reports whether a process of the group is still running: one in
// /proc whose process group is the group's and that is not a zombie (a
// process that has exited and waits for its parent to reap it, which
// runs nothing; an orphan's new parent, PID 1 of a container, may never
// reap it).
func (g group) alive() bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return groupSignalable(g.pid)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pgrp, state, ok := procStat(pid); ok && pgrp == g.pid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the process group and state of process pid from
// /proc/pid/stat: "pid (comm) state ppid pgrp …", comm possibly holding
// spaces and parentheses.
func procStat(pid int) (pgrp int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	return pgrp, f[0][0], err == nil
}
