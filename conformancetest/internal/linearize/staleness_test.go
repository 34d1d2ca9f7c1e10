package linearize

import (
	"testing"
	"time"
)

// TestStalenessBound: lists through one base URL 30 ms stale, with 50 ms
// of quiet before each barrier (as a run judged against 50 ms leaves):
// the history passes against a bound of 50 ms, fails against 10 ms (older
// than the bound) and strictly (a missed update), naming the list through
// the stale base URL and the update it missed, and its observed staleness
// is 30 ms, to the millisecond, whatever the bound judged against.
func TestStalenessBound(t *testing.T) {
	h := simulateStale(7, 4, time.Second, simPets, 30*time.Millisecond, 50*time.Millisecond)
	for _, tc := range []struct {
		bound time.Duration
		pass  bool
		want  FailureKind
	}{
		{50 * time.Millisecond, true, ""},
		{10 * time.Millisecond, false, OlderThanBound},
		{0, false, MissedUpdate},
	} {
		v := Judge(h, Options{Staleness: tc.bound})
		t.Logf("bound %v: %s; observed %s", tc.bound, v.Outcome(), v.ObservedWords)
		if v.NotJudged != "" || (len(v.Failures) == 0) != tc.pass {
			t.Fatalf("bound %v: %s %v %s", tc.bound, v.Outcome(), kinds(v), v.NotJudged)
		}
		if !tc.pass {
			// The stale lists are the second base URL's, each named
			// with the update it missed.
			f := v.Failures[0]
			list, okList := f.Op(RoleList)
			_, okMissed := f.Op(RoleMissed)
			if f.Kind != tc.want || f.Bound != tc.bound || !okList || !okMissed || h.Ops[list].Base != 1 {
				t.Errorf("bound %v: %s (bound %v) %+v, want %s of a list through the second base URL and the update it missed", tc.bound, f.Kind, f.Bound, f.Ops, tc.want)
			}
			if len(f.ByBase) != 2 || f.ByBase[0] != 0 || f.ByBase[1] != f.Count || f.Count == 0 {
				t.Errorf("bound %v: stale lists by base URL %v, %d in all", tc.bound, f.ByBase, f.Count)
			}
		}
		if v.Observed == nil || *v.Observed < 29*time.Millisecond || *v.Observed > 31*time.Millisecond {
			t.Errorf("bound %v: observed %v (%s), want 30 ms ± 1 ms", tc.bound, v.Observed, v.ObservedWords)
		}
	}
}

// TestStalenessStrict: a linearizable history's observed staleness is 0,
// and a history that shows a write never made passes with no bound.
func TestStalenessStrict(t *testing.T) {
	h := simulate(8, 4, 500*time.Millisecond, simPets)
	v := Judge(h, Options{})
	if v.Observed == nil || *v.Observed != 0 {
		t.Fatalf("observed %v: %s", v.Observed, v.ObservedWords)
	}
	for i := range h.Ops {
		if o := &h.Ops[i]; o.Kind == List && o.Round == 2 {
			o.Seen[1] = 424242
			break
		}
	}
	v = Judge(h, Options{Staleness: 50 * time.Millisecond})
	if len(v.Failures) != 1 || v.Failures[0].Kind != NeverWritten || v.Observed != nil {
		t.Fatalf("%s %v: observed %v: %s", v.Outcome(), kinds(v), v.Observed, v.ObservedWords)
	}
}

// TestStalenessWithoutQuiet: with no quiet before the barriers (a strict
// run), a bound larger than the gap joins the rounds into one piece: the
// history is still judged right, and its observed staleness found.
func TestStalenessWithoutQuiet(t *testing.T) {
	h := simulateStale(9, 2, 400*time.Millisecond, simPets, 20*time.Millisecond, 0)
	v := Judge(h, Options{})
	if len(v.Failures) == 0 {
		t.Fatal("a stale history passed strictly")
	}
	if v.Observed == nil || *v.Observed < 19*time.Millisecond || *v.Observed > 21*time.Millisecond {
		t.Errorf("observed %v (%s), want 20 ms ± 1 ms", v.Observed, v.ObservedWords)
	}
	if v := Judge(h, Options{Staleness: 25 * time.Millisecond}); len(v.Failures) > 0 || v.NotJudged != "" {
		t.Errorf("at 25 ms: %v %s; %s", kinds(v), v.NotJudged, v.Detail)
	} else {
		t.Log(v.Detail)
	}
}
