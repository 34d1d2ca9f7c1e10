package e2e

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
)

// The whole suite against the deployment recommended for speed:
// examples/redis with -max-staleness 50ms, one process and three (Gin,
// Fiber, Gin) on one real Redis. Its default lists may be up to 50 ms
// old; the suite learns, checks and restores state with strict lists
// (Cache-Control: no-cache), so it passes run after run, with and without
// -consistency-staleness 50ms, and leaves the quantities it found; and
// back-to-back consistency runs judged at 50 ms pass through a 2 s pause
// of Redis.

// strictQuantities reads pet → quantity through base with a strict list
// (Cache-Control: no-cache): the store as it is, whatever the bound.
func strictQuantities(t *testing.T, base string) map[int64]int64 {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/inventory: %d %s %v", base, resp.StatusCode, body, err)
	}
	var items []struct {
		PetID    int64 `json:"petId"`
		Quantity int64 `json:"quantity"`
	}
	if err := json.Unmarshal(body, &items); err != nil {
		t.Fatalf("GET %s/inventory: %v", base, err)
	}
	q := make(map[int64]int64, len(items))
	for _, it := range items {
		q[it.PetID] = it.Quantity
	}
	return q
}

// suiteArgs are the arguments of a whole-suite run against bases, then
// extra.
func suiteArgs(bases []string, extra ...string) []string {
	var args []string
	for _, b := range bases {
		args = append(args, "-base-url", b)
	}
	return append(args, extra...)
}

// TestBoundedDeploymentPassesTheSuite: against bounded processes the
// whole suite passes twice in a row, without a bound given and with
// -consistency-staleness 50ms, with 0 failed, and every run leaves the
// quantities it found. (Each whole run waits out body/stalled's body
// time-out: eight of them make a long test; TestBoundedDeploymentStateChecks
// is its short form.)
func TestBoundedDeploymentPassesTheSuite(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	boundedSuiteRuns(t, nil)
}

// TestBoundedDeploymentStateChecks: the checks that read back, verify
// or restore what they wrote, which a suite reading state with default
// lists failed against bounded processes, pass twice in a row, with and
// without the bound given, and leave the quantities they found.
func TestBoundedDeploymentStateChecks(t *testing.T) {
	t.Parallel()
	boundedSuiteRuns(t, []string{"-run", `^(update|etag|concurrency|auth|list)/`})
}

// boundedSuiteRuns runs the suite (with args) twice in a row without a
// bound given and twice with -consistency-staleness 50ms against one
// bounded process and against three (Gin, Fiber, Gin) on one real Redis:
// every run exits 0 with 0 failed and leaves the quantities it found.
func boundedSuiteRuns(t *testing.T, args []string) {
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"
	for _, tc := range []struct {
		name       string
		frameworks []string
	}{
		{"one process", []string{"gin"}},
		{"three processes", threeFrameworks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := startReplicas(t, redisURL, "e2e-bounded-suite-"+strconv.Itoa(len(tc.frameworks)), tc.frameworks, "-max-staleness", staleBound.String())
			before := strictQuantities(t, rs[0].base)
			for _, extra := range [][]string{nil, {"-consistency-staleness", staleBound.String()}} {
				for run := 1; run <= 2; run++ {
					res := runCmd(t, commandBinary(t), suiteArgs(bases(rs), append(slices.Clone(args), append(extra, "-json")...)...)...)
					var rep conformancetest.Report
					jsonErr := json.Unmarshal([]byte(res.stdout), &rep)
					passed, failed, skipped := rep.Counts()
					t.Logf("%v, run %d: exit %d, %d passed, %d failed, %d skipped", extra, run, res.code, passed, failed, skipped)
					if res.code != 0 || jsonErr != nil || passed == 0 || failed != 0 {
						t.Fatalf("%v, run %d: exit %d; want 0 with 0 failed:\n%s\n%s", extra, run, res.code, res.stdout, res.stderr)
					}
					if after := strictQuantities(t, rs[0].base); !maps.Equal(after, before) {
						t.Fatalf("%v, run %d: the quantities after the run %v are not those before it %v", extra, run, after, before)
					}
				}
			}
		})
	}
}

// heldRequests counts the requests of a saved history that took at
// least d: those a pause of the store held.
func heldRequests(t *testing.T, path string, d time.Duration) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Requests []struct {
			CallNs   int64 `json:"callNs"`
			ReturnNs int64 `json:"returnNs"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range h.Requests {
		if time.Duration(r.ReturnNs-r.CallNs) >= d {
			n++
		}
	}
	return n
}

// TestBoundedConsistencyThroughPause: six back-to-back consistency runs
// of 10 s judged at 50 ms, each with Redis paused for 2 s about 4 s in,
// on the same three bounded processes, all pass, each met by the pause
// (requests of its history held for over a second), and each leaves the
// quantities it found. Each run starts right after the last one's
// restore, which its first lists may not show yet.
func TestBoundedConsistencyThroughPause(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	node := redisFor(t)
	redisURL := "redis://" + node.Addr() + "/0"
	rs := startReplicas(t, redisURL, "e2e-bounded-pause", threeFrameworks, "-max-staleness", staleBound.String())
	before := strictQuantities(t, rs[0].base)
	dir := t.TempDir()
	for run := 1; run <= 6; run++ {
		history := filepath.Join(dir, "history-"+strconv.Itoa(run)+".json")
		cmd, stdout, stderr := start(t, commandBinary(t), consistencyArgs(stalenessRun, bases(rs), "-consistency-staleness", staleBound.String(), "-consistency-history", history,
			"-consistency-redis", redisURL, "-consistency-fault", "4s redis-pause 2s")...)
		res := readStaleness(t, wait(t, cmd, stdout, stderr))
		res.summary(t, "run "+strconv.Itoa(run))
		if res.code != 0 || res.outcome != "PASS" {
			t.Fatalf("run %d: exit %d, %s:\n%s%s", run, res.code, res.outcome, res.stdout, res.stderr)
		}
		if n := heldRequests(t, history, time.Second); n == 0 {
			t.Fatalf("run %d: no request of the run was held by the pause: the run proves nothing of it:\n%s", run, res.stdout)
		}
		if after := strictQuantities(t, rs[0].base); !maps.Equal(after, before) {
			t.Fatalf("run %d: the quantities after the run %v are not those before it %v", run, after, before)
		}
	}
}
