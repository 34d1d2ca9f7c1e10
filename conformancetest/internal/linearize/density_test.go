package linearize

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOverlapped: an update answered 200 overlaps when a request of
// another client was in flight at some instant of it, ends included;
// not for a request of its own client, nor for an update of unknown
// outcome.
func TestOverlapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []Op
		want int
	}{
		{"alone", []Op{update(0, 0, 0, 10, 0, 1000000, true)}, 0},
		{"a list inside it", []Op{update(0, 0, 0, 10, 0, 1000000, true), list(1, 0, 5, 6, 5, 0, 12)}, 1},
		{"a list around it", []Op{list(1, 0, 0, 30, 5, 0, 12), update(0, 0, 10, 20, 0, 1000000, true)}, 1},
		{"a list sent as it returned", []Op{update(0, 0, 0, 10, 0, 1000000, true), list(1, 0, 10, 16, 5, 0, 12)}, 1},
		{"a list that returned as it was sent", []Op{list(1, 0, 0, 10, 5, 0, 12), update(0, 0, 10, 20, 0, 1000000, true)}, 1},
		{"before and after", []Op{list(1, 0, 0, 9, 5, 0, 12), update(0, 0, 10, 20, 0, 1000000, true), list(1, 0, 21, 30, 5, 0, 12)}, 0},
		{"its own client's", []Op{update(0, 0, 0, 10, 0, 1000000, true), list(0, 0, 5, 6, 5, 0, 12)}, 0},
		{"two updates at once", []Op{update(0, 0, 0, 10, 0, 1000000, true), update(1, 1, 5, 15, 1, 1000001, true)}, 2},
		{"an update of unknown outcome", []Op{update(0, 0, 0, 10, 0, 1000000, false), update(1, 1, 5, 15, 1, 1000001, true)}, 1},
		{"a list that failed", []Op{update(0, 0, 0, 10, 0, 1000000, true), {Client: 1, Kind: List, Call: 2, Return: 3}}, 1},
		{"own client first, then another's", []Op{list(0, 0, 0, 1, 5, 0, 12), update(0, 0, 2, 10, 0, 1000000, true), list(0, 0, 3, 4, 5, 0, 12), list(1, 0, 8, 9, 5, 0, 12)}, 1},
	} {
		if got := overlapped(wordsHistory(tc.ops...)); got != tc.want {
			t.Errorf("%s: %d overlapped, want %d", tc.name, got, tc.want)
		}
	}
}

// TestOverlappedAgreesWithPairs: on simulated histories, the pass over
// the requests counts what comparing every pair counts.
func TestOverlappedAgreesWithPairs(t *testing.T) {
	for seed := range uint64(4) {
		h := simulate(200+seed, 2+int(seed), 200*time.Millisecond, simPets)
		for i := range h.Ops {
			if i%7 == 0 && h.Ops[i].Kind == Update {
				h.Ops[i].Known = false
			}
		}
		want := 0
		for _, u := range h.Ops {
			if u.Kind != Update || !u.Known {
				continue
			}
			for _, o := range h.Ops {
				if o.Client != u.Client && o.Call <= u.Return && u.Call <= o.Return {
					want++
					break
				}
			}
		}
		if got := overlapped(h); got != want || want == 0 {
			t.Errorf("seed %d: %d overlapped, %d by pairs", seed, got, want)
		}
	}
}

// TestThinHistory: a history with fewer updates answered 200 than the
// minimum fails with thin-history, naming the count and what to change,
// even when nothing else is wrong; with as many, or no minimum, it
// passes.
func TestThinHistory(t *testing.T) {
	h := simulate(12, 2, 100*time.Millisecond, simPets)
	v := Judge(h, Options{})
	n := v.Counts.UpdatesOK
	if len(v.Failures) > 0 || n == 0 || n != v.Counts.Updates || v.Counts.Operations != len(h.Ops) || v.Counts.Overlapped == 0 {
		t.Fatalf("%v %+v", kinds(v), v.Counts)
	}
	if v := Judge(h, Options{MinUpdates: n}); len(v.Failures) > 0 {
		t.Errorf("with %d updates, at least %d: %v", n, n, kinds(v))
	}
	v = Judge(h, Options{MinUpdates: n + 1})
	if len(v.Failures) != 1 || v.Outcome() != "fail" {
		t.Fatalf("%v", kinds(v))
	}
	f := v.Failures[0]
	if f.Kind != ThinHistory || f.Updates != n || f.MinUpdates != n+1 || f.Fault != -1 {
		t.Errorf("%+v", f)
	}
	for _, want := range []string{"holds " + strconv.Itoa(n) + " updates answered 200, fewer than the minimum of " + strconv.Itoa(n+1) + " (-consistency-min-updates)", "run longer (-consistency), with more clients (-consistency-clients)"} {
		if !strings.Contains(f.Problem, want) {
			t.Errorf("%q missing from: %s", want, f.Problem)
		}
	}
	if !strings.Contains(f.Expected, "at least "+strconv.Itoa(n+1)+" updates answered 200") {
		t.Errorf("expected: %s", f.Expected)
	}
	t.Log(f.Problem)
}
