//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// runMain marks a child process of this test binary that is the command
// itself (see TestMain).
const runMain = "INVENTORY_CONFORMANCE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// running reports whether process pid runs: it exists and is no zombie
// (an orphan that exited and that PID 1 of a container may never reap).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z' && b[i+2] != 'X'
}

// TestInterruptEndsExecFault: SIGINT or SIGTERM to the command during a
// consistency run whose exec fault started a long process ends that
// process (its whole group) before the command exits, with 130: nothing
// the suite started outlives it.
func TestInterruptEndsExecFault(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			cmd := exec.Command(os.Args[0], "-base-url", base, "-run", "^consistency/", "-consistency", "1m",
				"-consistency-fault", "0s exec sleep 600 & echo $! > "+pidFile+"; wait")
			cmd.Env = append(os.Environ(), runMain+"=1", "INVENTORY_API_KEY="+refserver.Key)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				b, _ := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			if pid == 0 || !running(pid) {
				cmd.Process.Kill()
				t.Fatalf("the fault's process did not start:\n%s", out.String())
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit %v, want %d:\n%s", err, exitInterrupted, out.String())
			}
			if running(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("the fault's sleep (pid %d) still runs after the command exited:\n%s", pid, out.String())
			}
		})
	}
}
