package linearize

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"
)

const sec = int64(time.Second)

// staleList is a list answered 200 and marked stale, with Age age (NoAge:
// none).
func staleList(client, base int, call, ret int64, age int64, a, b, c int64) Op {
	o := list(client, base, call, ret, a, b, c)
	o.Stale, o.Age = true, age
	return o
}

// outageHistory: pet 1 written to 1000000 at the start and to 1000001 at
// 1 s (both answered 200), the quantities shown by strict lists; then a
// store outage from 2 s in which every update answers 503 and takes no
// effect; ops are added to it, then a strict list at 9 s shows the state
// the outage left.
func outageHistory(ops ...Op) *History {
	h := wordsHistory(
		update(0, 0, 0, 1*ms, 0, 1000000, true),
		list(1, 1, 2*ms, 3*ms, 1000000, 0, 12),
		update(0, 0, 1*sec, 1*sec+1*ms, 0, 1000001, true),
		list(1, 1, 1*sec+2*ms, 1*sec+3*ms, 1000001, 0, 12),
		update(0, 0, 2*sec, 2*sec+100*ms, 0, 1000002, false),
		update(2, 1, 2*sec+1*ms, 2*sec+100*ms, 1, 1000003, false),
	)
	h.Ops = append(h.Ops, ops...)
	h.Ops = append(h.Ops, list(1, 1, 9*sec, 9*sec+1*ms, 1000001, 0, 12))
	slices.SortStableFunc(h.Ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
	h.Duration = 10 * time.Second
	h.Faults = []Fault{{Fault: "2s redis-pause 5s", Kind: "redis-pause", OffsetNs: 2 * sec, AppliedNs: 2 * sec}}
	return h
}

// TestStaleLists: a list marked stale passes when the state it showed
// existed at one instant within its bound (the stale-if-error bound, or
// its Age plus 1 s when less) of its call, and fails otherwise, with the
// kind that names why; without a stale-if-error bound it fails with
// unexpected-stale.
func TestStaleLists(t *testing.T) {
	for _, tc := range []struct {
		name  string
		list  Op
		bound time.Duration
		want  FailureKind // "" to pass
		roles []Role
	}{
		// Through the outage, with no write answered: the last state
		// confirmed, however old its Age says it is.
		{"during the outage, the state it left", staleList(2, 0, 4*sec, 4*sec+1*ms, 3, 1000001, 0, 12), 30 * time.Second, "", nil},
		{"during the outage, Age 0", staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, 0, 12), 30 * time.Second, "", nil},
		// The value replaced at 1.001 s: 2.999 s older than the call.
		{"honest Age", staleList(2, 0, 4*sec, 4*sec+1*ms, 2, 1000000, 0, 12), 30 * time.Second, "", nil},
		{"older than its Age plus 1 s", staleList(2, 0, 4*sec, 4*sec+1*ms, 1, 1000000, 0, 12), 30 * time.Second, StaleBeyondBound,
			[]Role{RoleList, RoleWrittenBy, RoleMissed}},
		{"older than the bound", staleList(2, 0, 4*sec, 4*sec+1*ms, 10, 1000000, 0, 12), 2 * time.Second, StaleBeyondBound,
			[]Role{RoleList, RoleWrittenBy, RoleMissed}},
		{"older than the bound, without an Age", staleList(2, 0, 4*sec, 4*sec+1*ms, NoAge, 1000000, 0, 12), 2 * time.Second, StaleBeyondBound, nil},
		{"within the bound, without an Age", staleList(2, 0, 4*sec, 4*sec+1*ms, NoAge, 1000000, 0, 12), 3 * time.Second, "", nil},
		{"the quantity before the run, long replaced", staleList(2, 0, 4*sec, 4*sec+1*ms, 2, 5, 0, 12), 30 * time.Second, StaleBeyondBound,
			[]Role{RoleList, RoleMissed}},
		// It showed a write answered 503: one that took effect, so the
		// strict list at 9 s that shows the value before takes it back.
		{"a write of unknown outcome, taken back after", staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, 1000003, 12), 30 * time.Second, WriteTakenBack,
			[]Role{RoleList, RoleShownBy, RoleTakenBack}},
		{"a value never written", staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, 7, 12), 30 * time.Second, NeverWritten, []Role{RoleList}},
		{"a pet missing", staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, -1, 12), 30 * time.Second, MissingPet, []Role{RoleList}},
		{"no bound given", staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, 0, 12), 0, UnexpectedStale, []Role{RoleList}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := outageHistory(tc.list)
			v := Judge(h, Options{StaleIfError: tc.bound})
			if tc.want == "" {
				if len(v.Failures) > 0 || v.NotJudged != "" {
					t.Fatalf("%v %s: %s", kinds(v), v.NotJudged, v.Failures[0].Problem)
				}
				return
			}
			if len(v.Failures) != 1 || v.Failures[0].Kind != tc.want {
				t.Fatalf("%v, want one failure of kind %s", kinds(v), tc.want)
			}
			f := v.Failures[0]
			for _, r := range tc.roles {
				if _, ok := f.Op(r); !ok {
					t.Errorf("no request of role %s: %+v", r, f.Ops)
				}
			}
			stale := len(h.Ops) - 2
			if tc.want == WriteTakenBack {
				// The strict list after it, the stale one the witness.
				if i, _ := f.Op(RoleShownBy); i != stale {
					t.Errorf("shown by request %d, want the stale one, %d", i, stale)
				}
				stale = len(h.Ops) - 1
			}
			if i, _ := f.Op(RoleList); i != stale {
				t.Errorf("the list named is request %d, want %d", i, stale)
			}
			if h.Ops[stale].Stale && f.StaleIfError != tc.bound || f.Fault != 0 || !strings.Contains(f.Problem, `(after the fault "2s redis-pause 5s", applied at 2.000s)`) {
				t.Errorf("stale-if-error %v, fault %d: %s", f.StaleIfError, f.Fault, f.Problem)
			}
			t.Log(f.Problem)
		})
	}
}

// TestStaleListMixedInstants: a list marked stale that shows pet 1 from
// before a write answered before pet 2's shown write was even sent
// mixes two instants, whatever its bound; and one whose pet's value a
// strict list had shown replaced is named with that list.
func TestStaleListMixedInstants(t *testing.T) {
	// Pet 2 written from 1.5 s, after pet 1's 1000001 was answered.
	h := outageHistory(
		update(2, 1, 1500*ms, 1501*ms, 1, 1000004, true),
		staleList(2, 0, 4*sec, 4*sec+1*ms, 3, 1000000, 1000004, 12),
	)
	h.Ops[len(h.Ops)-1].Seen[1] = 1000004 // the state the outage left
	v := Judge(h, Options{StaleIfError: 30 * time.Second})
	if len(v.Failures) != 1 || v.Failures[0].Kind != MixedInstants {
		t.Fatalf("%v", kinds(v))
	}
	f := v.Failures[0]
	newest, _ := f.Op(RoleNewest)
	missed, _ := f.Op(RoleMissed)
	if h.Ops[newest].Qty != 1000004 || h.Ops[missed].Qty != 1000001 || f.Pet != 0 {
		t.Errorf("newest %d, missed %d, pet %d: %+v", newest, missed, f.Pet, f.Ops)
	}
	for _, want := range []string{"(marked stale, Age 3 s) mixed two instants", "a list marked stale to show the inventory as it was at one instant at most 4000 ms before"} {
		if !strings.Contains(f.Problem+" "+f.Expected, want) {
			t.Errorf("%q missing from: %s / %s", want, f.Problem, f.Expected)
		}
	}

	// A write answered 503 that took effect, shown by a stale list and
	// by the strict list after: no failure.
	h = outageHistory(staleList(2, 0, 4*sec, 4*sec+1*ms, 0, 1000001, 1000003, 12))
	h.Ops[len(h.Ops)-1].Seen[1] = 1000003
	if v := Judge(h, Options{StaleIfError: 30 * time.Second}); len(v.Failures) > 0 {
		t.Errorf("a write of unknown outcome shown: %v", kinds(v))
	}

	// Pet 1's 1000001 written with an unknown outcome, shown by a strict
	// list at 1.003 s: the stale list of Age 1 at 4 s that shows the
	// value before is older than it says, named with that list.
	h = outageHistory(staleList(2, 0, 4*sec, 4*sec+1*ms, 1, 1000000, 0, 12))
	h.Ops[2] = update(0, 0, 1*sec, 3*sec, 0, 1000001, false)
	v = Judge(h, Options{StaleIfError: 30 * time.Second})
	if len(v.Failures) != 1 || v.Failures[0].Kind != StaleBeyondBound {
		t.Fatalf("%v", kinds(v))
	}
	if i, ok := v.Failures[0].Op(RoleShownBy); !ok || i != 3 {
		t.Errorf("shown by %d (%v), want the list at 1.002 s", i, ok)
	}
	if p := v.Failures[0].Problem; !strings.Contains(p, "had shown replaced by the update of pet 1 to 1000001") || !strings.Contains(p, "its Age of 1 s plus 1 s, less than the stale-if-error bound of 30s") {
		t.Errorf("words: %s", p)
	}
}

// TestStaleOutageSimulated: a simulated deployment answers lists through
// a store outage from the state lag before, marked stale: judged with an
// honest Age it passes (its strict requests judged by porcupine as ever,
// the stale barriers cutting no piece), with an Age that understates it
// or a bound below it it fails with stale-beyond-bound, and without a
// bound with unexpected-stale.
func TestStaleOutageSimulated(t *testing.T) {
	out := &simOutage{from: 1600 * time.Millisecond, to: 2400 * time.Millisecond, lag: 1500 * time.Millisecond, age: 1}
	honest := simulateWith(11, 4, 3*time.Second, simPets, simOpts{outage: out})
	v := Judge(honest, Options{StaleIfError: 30 * time.Second})
	t.Log(v.Detail)
	if len(v.Failures) > 0 || v.NotJudged != "" || v.Counts.StaleLists == 0 || v.Counts.FailedLists == 0 {
		t.Fatalf("an honest stale deployment: %v %q %+v", kinds(v), v.NotJudged, v.Counts)
	}
	if v.Observed == nil || *v.Observed != 0 {
		t.Errorf("the strict lists' observed staleness: %s", v.ObservedWords)
	}
	understated := *out
	understated.age = 0
	for name, tc := range map[string]struct {
		h     *History
		bound time.Duration
		want  FailureKind
	}{
		"Age understated":     {simulateWith(11, 4, 3*time.Second, simPets, simOpts{outage: &understated}), 30 * time.Second, StaleBeyondBound},
		"beyond the bound":    {honest, time.Second, StaleBeyondBound},
		"no bound given":      {honest, 0, UnexpectedStale},
		"within a bound of 2": {honest, 2 * time.Second, ""},
	} {
		v := Judge(tc.h, Options{StaleIfError: tc.bound})
		switch {
		case tc.want == "" && len(v.Failures) > 0:
			t.Errorf("%s: %v", name, kinds(v))
		case tc.want != "" && (len(v.Failures) != 1 || v.Failures[0].Kind != tc.want || v.Failures[0].Count < 2):
			t.Errorf("%s: %v, want one failure of kind %s, counted", name, kinds(v), tc.want)
		case tc.want != "":
			t.Logf("%s: %s", name, v.Failures[0].Problem)
		}
	}
}
