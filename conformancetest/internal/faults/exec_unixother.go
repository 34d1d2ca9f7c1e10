//go:build unix && !linux

package faults

// alive reports whether a process of the group is still there (a zombie
// not yet reaped counts).
func (g group) alive() bool { return groupSignalable(g.pid) }
