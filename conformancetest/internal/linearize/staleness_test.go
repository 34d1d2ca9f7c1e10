package linearize

import (
	"strings"
	"testing"
	"time"
)

// TestStalenessBound: lists through one base URL 30 ms stale, with 50 ms
// of quiet before each barrier (as a run judged against 50 ms leaves):
// the history passes against a bound of 50 ms, fails against 10 ms and
// strictly (naming the list, the update it missed and by how much more
// than the bound), and its observed staleness is 30 ms, to the
// millisecond, whatever the bound judged against.
func TestStalenessBound(t *testing.T) {
	h := simulateStale(7, 4, time.Second, simPets, 30*time.Millisecond, 50*time.Millisecond)
	for _, tc := range []struct {
		bound time.Duration
		pass  bool
		want  string
	}{
		{50 * time.Millisecond, true, ""},
		{10 * time.Millisecond, false, "more than the staleness bound of 10 ms"},
		{0, false, "before the list was sent; stale lists by base URL: http://a/v1: 0, http://b/v1: "},
	} {
		v := Judge(h, Options{Staleness: tc.bound})
		t.Logf("bound %v: %s; observed %s", tc.bound, v.Outcome(), v.ObservedWords)
		if v.NotJudged != "" || (len(v.Failures) == 0) != tc.pass {
			t.Fatalf("bound %v: %s %q %s", tc.bound, v.Outcome(), v.Failures, v.NotJudged)
		}
		if !tc.pass {
			if p := v.Failures[0].Problem; !strings.Contains(p, tc.want) || !strings.Contains(p, "the list by client") || !strings.Contains(p, "and so missed the update of pet") {
				t.Errorf("bound %v: the failure does not name the list, the update it missed and by how much (%q): %s", tc.bound, tc.want, p)
			}
			if !strings.Contains(v.Failures[0].Expected, "moved") != (tc.bound == 0) {
				t.Errorf("bound %v: expected %q", tc.bound, v.Failures[0].Expected)
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
	if v.Observed == nil || *v.Observed != 0 || !strings.HasPrefix(v.ObservedWords, "0 (strict") {
		t.Fatalf("observed %v: %s", v.Observed, v.ObservedWords)
	}
	for i := range h.Ops {
		if o := &h.Ops[i]; o.Kind == List && o.Round == 2 {
			o.Seen[1] = 424242
			break
		}
	}
	v = Judge(h, Options{Staleness: 50 * time.Millisecond})
	if len(v.Failures) == 0 || v.Observed != nil || !strings.Contains(v.ObservedWords, "never made") {
		t.Fatalf("%s: observed %v: %s", v.Outcome(), v.Observed, v.ObservedWords)
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
		t.Errorf("at 25 ms: %q %s; %s", v.Failures, v.NotJudged, v.Detail)
	} else {
		t.Log(v.Detail)
	}
}
