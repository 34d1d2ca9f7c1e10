package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecEndsItsGroup: a fault command that starts a process in the
// background and waits on another, run for real: at its time limit, when
// its context is cancelled, when it ignores SIGTERM, and when it exits
// but leaves the background process running, Exec ends the whole process
// group and returns only once none of it runs; afterwards the group is
// gone (kill(-pgid, 0) finds no process, once the test, the processes'
// new parent, has reaped them).
func TestExecEndsItsGroup(t *testing.T) {
	subreaper(t)
	const grace = 200 * time.Millisecond
	for _, tc := range []struct {
		name, command string // %[1]s: the file the pids go to
		limit         time.Duration
		cancel        bool
		status        int
		want          string
	}{
		{"time limit", "echo $$ > %[1]s; sleep 600 & echo $! >> %[1]s; sleep 600", time.Second, false, -1,
			"still running after its time limit of 1s: its process group ended (SIGTERM)"},
		{"interrupted", "echo $$ > %[1]s; sleep 600 & echo $! >> %[1]s; sleep 600", time.Minute, true, -1,
			"interrupted: context canceled: its process group ended (SIGTERM)"},
		{"SIGTERM ignored", "trap '' TERM; echo $$ > %[1]s; sleep 600 & echo $! >> %[1]s; sleep 600", time.Second, false, -1,
			"its process group ended (SIGTERM, then SIGKILL 200ms later)"},
		{"left running", "echo $$ > %[1]s; sleep 600 > /dev/null 2>&1 & echo $! >> %[1]s", time.Second, false, 0,
			"it exited, but processes it started were still running after its time limit of 1s: its process group ended (SIGTERM)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type result struct {
				status int
				err    error
			}
			done := make(chan result, 1)
			go func() {
				status, _, err := execGroup(ctx, fmt.Sprintf(tc.command, pids), tc.limit, grace)
				done <- result{status, err}
			}()
			started := readPids(t, pids)
			if tc.cancel {
				cancel()
			}
			res := <-done
			if res.status != tc.status || res.err == nil || !strings.Contains(res.err.Error(), tc.want) {
				t.Fatalf("status %d, %v; want %d and %q", res.status, res.err, tc.status, tc.want)
			}
			if tc.cancel && !errors.Is(res.err, context.Canceled) {
				t.Errorf("%v does not wrap the context's error", res.err)
			}
			pgid := started[0]
			// Exec has returned: nothing of the group runs any more.
			for _, pid := range started {
				if _, state, ok := procStat(pid); ok && state != 'Z' {
					t.Errorf("process %d of the group is still running (%c)", pid, state)
				}
			}
			polls := groupGone(t, pgid)
			t.Logf("%s: %v; group %d gone after %d polls", tc.name, res.err, pgid, polls)
		})
	}
}

// TestExecWaitsForItsGroup: a command that exits while a process it
// started in the background still writes lasts until that process ends,
// and its output is the whole group's.
func TestExecWaitsForItsGroup(t *testing.T) {
	status, tail, err := execGroup(t.Context(), "(sleep 0.2; echo late) & echo early", time.Minute, time.Second)
	if status != 0 || err != nil || tail != "early\nlate" {
		t.Errorf("status %d, %q, %v; want 0, \"early\\nlate\"", status, tail, err)
	}
}

// readPids waits, polling, until the command has written its shell's pid
// and its background process's to path, and returns them.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if f := strings.Fields(string(b)); len(f) == 2 && bytes.HasSuffix(b, []byte("\n")) {
			var pids []int
			for _, s := range f {
				pid, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("%s: %q", path, b)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command did not write its pids within 10 s")
	return nil
}

// subreaper makes the test process the parent of the orphans of the
// commands it runs (PR_SET_CHILD_SUBREAPER), so that it can reap them:
// PID 1 of a container may never reap a zombie, which kill(-pgid, 0)
// would still find.
func subreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// groupGone reaps the zombies of group pgid that are the test's
// children and polls kill(-pgid, 0) until it finds no process, for at
// most 10 s; it returns how many polls it took.
func groupGone(t *testing.T, pgid int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for polls := 1; ; polls++ {
		reapGroup(pgid)
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return polls
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes 10 s after Exec returned: kill(-pgid, 0) = %v", pgid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reapGroup reaps the zombies of group pgid whose parent is the test.
func reapGroup(pgid int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pgrp, state, ok := procStat(pid); ok && pgrp == pgid && state == 'Z' && parentOf(pid) == os.Getpid() {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// parentOf is the parent of process pid, from /proc/pid/stat.
func parentOf(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return -1
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}
