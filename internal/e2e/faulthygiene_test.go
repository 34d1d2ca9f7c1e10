package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// The fault schedule's hygiene, from outside the suite's process: the
// fault Redis is checked before any check runs, its password need not be
// on any command line, and an exec fault leaves no process behind.

// requestCounter counts the requests a server received, by method.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[r.Method]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (c *requestCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// cmdlines returns the command line of every process this user can read
// (/proc/PID/cmdline, its arguments joined by spaces), by pid; a zombie's
// is empty and left out.
func cmdlines() map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		out[pid] = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

// withMarker returns the processes whose command line holds marker, as
// "PID: command line", but the suite's own (suite), whose arguments hold
// the fault.
func withMarker(marker string, suite int) []string {
	var out []string
	for pid, line := range cmdlines() {
		if pid != suite && strings.Contains(line, marker) {
			out = append(out, fmt.Sprintf("%d: %s", pid, line))
		}
	}
	slices.Sort(out)
	return out
}

// noCheckRan reports why the command's output shows a check that ran
// ("" when none did): its JSON report, when it printed one, holds no
// result passed or failed.
func noCheckRan(stdout string) string {
	if strings.TrimSpace(stdout) == "" {
		return ""
	}
	var rep conformancetest.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		return "the output is no JSON report: " + err.Error()
	}
	for _, r := range rep.Results {
		if r.Outcome == conformancetest.Pass || r.Outcome == conformancetest.Fail {
			return fmt.Sprintf("check %s ran: %s", r.Name, r.Outcome)
		}
	}
	return ""
}

// TestFaultRedisPassword: the fault Redis's password comes from
// INVENTORY_CONSISTENCY_REDIS_URL. A wrong one stops a run of the whole
// suite with exit status 2 before any check runs (within seconds: the
// figure is on the summary line); the right one lets the run apply its
// fault, and while it runs the password is on no process's command line.
func TestFaultRedisPassword(t *testing.T) {
	proctest.Long(t)
	const password = "faults-password-right-7c1e"
	node := redisFor(t)
	if err := redistest.SetUser([]*redistest.Node{node}, "faults", "on", ">"+password, "-@all", "+ping", "+client|pause", "+client|kill"); err != nil {
		t.Fatal(err)
	}
	faultURL := func(pw string) string {
		return "INVENTORY_CONSISTENCY_REDIS_URL=redis://faults:" + pw + "@" + node.Addr() + "/0"
	}
	counter := &requestCounter{n: map[string]int{}}
	api := newAPI(t, openMemory(t, seed...))
	base := serveNetHTTP(t, counter.wrap(api), api)

	t.Run("a wrong one stops the whole suite before any check", func(t *testing.T) {
		const wrong = "faults-password-wrong-9d2a"
		began := time.Now()
		cmd, stdout, stderr := startEnv(t, commandBinary(t), []string{"INVENTORY_API_KEY=" + testKey, faultURL(wrong)},
			"-json", "-base-url", base, "-consistency", "2s", "-consistency-fault", "1s redis-pause 100ms")
		res := wait(t, cmd, stdout, stderr)
		took := time.Since(began)
		seen := counter.counts()
		proctest.Summary(t, summaryEnv, "fault Redis with a wrong password, the whole suite: exit %d after %v; the server saw %v", res.code, took.Round(time.Millisecond), seen)
		if res.code != 2 {
			t.Errorf("exit %d, want 2:\n%s%s", res.code, res.stdout, res.stderr)
		}
		if why := noCheckRan(res.stdout); why != "" || seen[http.MethodPatch] > 0 {
			t.Errorf("a check ran before the fault Redis was refused (%s; the server saw %v):\n%s", why, seen, res.stdout)
		}
		if out := res.stdout + res.stderr; strings.Contains(out, wrong) || strings.Contains(out, password) {
			t.Errorf("the output shows the password:\n%s", out)
		}
	})

	t.Run("the right one, on no command line", func(t *testing.T) {
		began := time.Now()
		cmd, stdout, stderr := startEnv(t, commandBinary(t), []string{"INVENTORY_API_KEY=" + testKey, faultURL(password)},
			consistencyArgs(3*time.Second, []string{base}, "-consistency-fault", "1s redis-pause 200ms")...)
		var (
			looked int // reads of the suite's own command line
			shown  []string
		)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		for waiting := true; waiting; {
			for pid, line := range cmdlines() {
				if pid == cmd.Process.Pid {
					looked++
				}
				if strings.Contains(line, password) {
					shown = append(shown, fmt.Sprintf("%d: %s", pid, line))
				}
			}
			select {
			case <-done:
				waiting = false
			case <-time.After(20 * time.Millisecond): // sampling the process table while the run lasts
			}
		}
		res := cmdResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		outcome, lin := linearizable(t, res.stdout)
		faults := faultsOf(t, lin)
		proctest.Summary(t, summaryEnv, "fault Redis password from INVENTORY_CONSISTENCY_REDIS_URL: %s (exit %d), %d faults applied; the suite's command line read %d times, the password on %d; in %.1fs",
			outcome, res.code, len(faults), looked, len(shown), time.Since(began).Seconds())
		if outcome != "PASS" || res.code != 0 || len(faults) != 1 {
			t.Errorf("exit %d, %s, %d faults; want 0, PASS, the pause applied:\n%s%s", res.code, outcome, len(faults), res.stdout, res.stderr)
		}
		if looked == 0 {
			t.Errorf("the suite's command line was never read while it ran: the test proves nothing")
		}
		if len(shown) > 0 {
			t.Errorf("the password is on these command lines:\n%s", strings.Join(shown, "\n"))
		}
		if strings.Contains(res.stdout+res.stderr, password) {
			t.Errorf("the output shows the password")
		}
	})
}

// TestExecFaultLeavesNothing: an exec fault that outlives the suite
// ("1s exec sleep 600…") leaves no process it started running once the
// suite has exited, whether the suite ended it at its time limit (a
// minute: the subtest waits it out, beside the other tests) or was
// interrupted with SIGINT. The processes are found by a number unique to
// the run in the command: the shell's command line holds it, and so does
// sleep's.
func TestExecFaultLeavesNothing(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	api := newAPI(t, openMemory(t, seed...))
	base := serveNetHTTP(t, nil, api)
	for _, tc := range []struct {
		name      string
		run       time.Duration
		interrupt bool
		code      int
	}{
		{"at its time limit", 3 * time.Second, false, 2},
		{"interrupted", 30 * time.Second, true, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("600.%09d", time.Now().UnixNano()%1e9)
			began := time.Now()
			cmd, stdout, stderr := start(t, commandBinary(t), consistencyArgs(tc.run, []string{base}, "-consistency-fault", "1s exec sleep "+marker+"; :")...)
			t.Cleanup(func() { // whatever the test found, nothing of it outlives the test
				for _, p := range withMarker(marker, cmd.Process.Pid) {
					if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ':')]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			// The shell and its sleep, both running: the marker finds them.
			var seen []string
			if err := redistest.Poll(20*time.Second, func() error {
				if seen = withMarker(marker, cmd.Process.Pid); len(seen) < 2 {
					return fmt.Errorf("processes with the marker: %q", seen)
				}
				return nil
			}); err != nil {
				t.Fatalf("the exec fault's processes never ran: %v", err)
			}
			if tc.interrupt {
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			}
			res := wait(t, cmd, stdout, stderr)
			left := withMarker(marker, cmd.Process.Pid)
			proctest.Summary(t, summaryEnv, "exec fault \"1s exec sleep %s; :\" %s: the suite exited %d after %.1fs; %d processes of the fault seen while it ran, %d running after it exited",
				marker, tc.name, res.code, time.Since(began).Seconds(), len(seen), len(left))
			if res.code != tc.code {
				t.Errorf("exit %d, want %d:\n%s%s", res.code, tc.code, res.stdout, res.stderr)
			}
			if len(left) > 0 {
				t.Errorf("processes the fault started still run after the suite exited:\n%s", strings.Join(left, "\n"))
			}
		})
	}
}
