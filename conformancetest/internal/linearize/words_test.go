package linearize

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// wordsHistory is a history of three pets over two base URLs, from ops.
func wordsHistory(ops ...Op) *History {
	return &History{Bases: []string{"http://a/v1", "http://b/v1"}, Pets: []Pet{{ID: 1, Qty: 5}, {ID: 2, Qty: 0}, {ID: 3, Qty: 12}},
		Clients: 4, Duration: time.Second, Ops: ops}
}

func list(client, base int, call, ret int64, a, b, c int64) Op {
	return Op{Client: client, Base: base, Kind: List, Call: call, Return: ret, OK: true, Seen: [MaxPets]int64{a, b, c}, Status: 200, Age: NoAge}
}

func update(client, base int, call, ret int64, slot int, qty int64, known bool) Op {
	o := Op{Client: client, Base: base, Kind: Update, Call: call, Return: ret, Slot: slot, Qty: qty, Known: known, Answer: `503 (code "unavailable")`, Status: 503, Age: NoAge}
	if known {
		o.Got, o.Answer, o.Status = qty, "200", 200
	}
	return o
}

// TestTakenBackWrite: a list showed a write (of unknown outcome, or
// answered 200 after the next list was sent), and a list sent after that
// list was answered shows an older value: the failure names both lists,
// their base URLs and times, the pet and the write taken back.
func TestTakenBackWrite(t *testing.T) {
	for _, known := range []bool{false, true} {
		h := wordsHistory(
			update(0, 0, 0, 10*ms, 2, 1000000, known),
			list(1, 0, 2*ms, 3*ms, 5, 0, 1000000),
			list(2, 1, 5*ms, 6*ms, 5, 0, 12),
		)
		v := Judge(h, Options{})
		if len(v.Failures) != 1 || v.Failures[0].Kind != WriteTakenBack {
			t.Fatalf("known %v: %v", known, kinds(v))
		}
		p := v.Failures[0].Problem
		for _, want := range []string{"a write taken back", "the list by client 2 through http://b/v1, sent at 0.005s", "the list by client 1 through http://a/v1, sent at 0.002s and answered at 0.003s",
			"showed pet 3 at quantity 12 (the quantity before the run)", "had shown pet 3 at 1000000, written by the update of pet 3 to 1000000"} {
			if !strings.Contains(p, want) {
				t.Errorf("known %v: %q missing from: %s", known, want, p)
			}
		}
		t.Log(p)
		// Within a bound of 2 ms (the second list sent 2 ms after the
		// first was answered), it may be that stale.
		if v := Judge(h, Options{Staleness: 2 * time.Millisecond}); len(v.Failures) > 0 {
			t.Errorf("known %v, at 2 ms: %v", known, kinds(v))
		}
	}
}

// TestSmallestUnorderableSet: two lists at once see two concurrent
// updates of two pets in opposite orders, which no single rule names;
// the failure names the four requests that cannot be ordered, of several
// pets together, and not the requests around them; and one pet's own
// contradiction is named as that pet's.
func TestSmallestUnorderableSet(t *testing.T) {
	h := wordsHistory(
		update(0, 0, 0, 100*ms, 0, 1000000, true),
		update(1, 1, 1*ms, 100*ms, 1, 1000001, true),
		list(2, 0, 2*ms, 3*ms, 5, 0, 12), // before both
		list(2, 0, 10*ms, 20*ms, 1000000, 0, 12),
		list(3, 1, 10*ms, 20*ms, 5, 1000001, 12),
		update(2, 0, 30*ms, 31*ms, 2, 1000002, true),
		list(3, 1, 150*ms, 151*ms, 1000000, 1000001, 1000002), // after all
		list(2, 0, 152*ms, 153*ms, 1000000, 1000001, 1000002),
	)
	v := Judge(h, Options{})
	if len(v.Failures) != 1 || v.Failures[0].Kind != Unorderable || v.Failures[0].Pet != -1 {
		t.Fatalf("%v", kinds(v))
	}
	p := v.Failures[0].Problem
	t.Log(p)
	for _, want := range []string{"the smallest set of requests found that cannot be ordered, of several pets together",
		"the update of pet 1 to 1000000", "the update of pet 2 to 1000001", "the list by client 2 through http://a/v1, sent at 0.010s", "the list by client 3 through http://b/v1, sent at 0.010s"} {
		if !strings.Contains(p, want) {
			t.Errorf("%q missing", want)
		}
	}
	for _, not := range []string{"to 1000002", "sent at 0.150s", "sent at 0.002s"} {
		if strings.Contains(p, not) {
			t.Errorf("%q should have been left out", not)
		}
	}

	// One pet: two concurrent updates of pet 1; two lists at once show
	// one each, and two later lists at once show one each again: after
	// both were shown in one order, the state cannot be both.
	h = wordsHistory(
		update(0, 0, 0, 100*ms, 0, 1000000, true),
		update(1, 1, 1*ms, 100*ms, 0, 1000001, true),
		list(2, 0, 10*ms, 50*ms, 1000000, 0, 12),
		list(3, 1, 10*ms, 50*ms, 1000001, 0, 12),
		list(2, 0, 60*ms, 90*ms, 1000000, 0, 12),
		list(3, 1, 60*ms, 90*ms, 1000001, 0, 12),
	)
	v = Judge(h, Options{})
	if len(v.Failures) != 1 || v.Failures[0].Kind != Unorderable || v.Failures[0].Pet != 0 {
		t.Fatalf("%v", kinds(v))
	}
	t.Log(v.Failures[0].Problem)
	if !strings.Contains(v.Failures[0].Problem, "cannot be ordered, of pet 1") {
		t.Errorf("not named as pet 1's: %s", v.Failures[0].Problem)
	}
}

// TestWordsOfEveryKind: the words of each kind of failure name what its
// data holds: the requests involved, with their clients, base URLs and
// times, the pet and the quantities, and how many there were.
func TestWordsOfEveryKind(t *testing.T) {
	h := wordsHistory(
		update(0, 0, 0, 1*ms, 0, 1000000, true),      // 0
		list(1, 1, 2*ms, 3*ms, 1000000, 1000001, 12), // 1
		update(2, 1, 4*ms, 5*ms, 1, 1000001, true),   // 2
		list(3, 0, 20*ms, 21*ms, 5, 0, 12),           // 3
		Op{Client: 1, Base: 1, Kind: List, Call: 30 * ms, Return: 31 * ms, Answer: "503 (code \"unavailable\")"}, // 4
		staleList(2, 1, 40*ms, 41*ms, 4, 5, 0, 12),                                                               // 5
	)
	h.Ops[2].Got = 1000000
	for _, tc := range []struct {
		f    Failure
		want []string
	}{
		{Failure{Kind: NoLists, Base: 1, Ops: []Involved{{4, RoleFailedList}}},
			[]string{"no list through http://b/v1 was answered in 1s (the first: 503 (code \"unavailable\"))", "cannot be judged consistent"}},
		{Failure{Kind: OlderThanBound, Pet: 0, Count: 3, ByBase: []int{3, 0}, Bound: 10 * time.Millisecond, Ops: []Involved{{3, RoleList}, {0, RoleMissed}}},
			[]string{"3 such requests; the first: the list by client 3 through http://a/v1, sent at 0.020s and answered at 0.021s showed pet 1 at quantity 5 (the quantity before the run)",
				"and so missed the update of pet 1 to 1000000 by client 0 through http://a/v1, sent at 0.000s and answered 200 at 0.001s, answered 19 ms before the list was sent: 9.0 ms more than the staleness bound of 10 ms",
				"; stale lists by base URL: http://a/v1: 3, http://b/v1: 0"}},
		{Failure{Kind: MissedUpdate, Pet: 0, Count: 1, ByBase: []int{1, 0}, Ops: []Involved{{3, RoleList}, {0, RoleMissed}}},
			[]string{"and so missed the update of pet 1 to 1000000", "answered 19 ms before the list was sent; stale lists by base URL: http://a/v1: 1"}},
		{Failure{Kind: FutureWrite, Pet: 1, Count: 1, Ops: []Involved{{1, RoleList}, {2, RoleWrittenBy}}},
			[]string{"the list by client 1 through http://b/v1, sent at 0.002s and answered at 0.003s showed pet 2 at quantity 1000001, written by the update of pet 2 to 1000001 by client 2", "a write sent after the list was answered"}},
		{Failure{Kind: NeverWritten, Pet: 2, Count: 2, Ops: []Involved{{1, RoleList}}},
			[]string{"2 such requests; the first: the list by client 1", "showed pet 3 at quantity 12, a write that was never made (no update of the run sent it to pet 3"}},
		{Failure{Kind: MissingPet, Pet: 2, Count: 1, Ops: []Involved{{3, RoleList}}},
			[]string{"the list by client 3 through http://a/v1, sent at 0.020s and answered at 0.021s lacked pet 3, which the run only updated"}},
		{Failure{Kind: AnotherWrite, Pet: 1, Count: 1, Ops: []Involved{{2, RoleUpdate}, {0, RoleWrittenBy}}},
			[]string{"the update of pet 2 to 1000001 by client 2 through http://b/v1, sent at 0.004s and answered 200 at 0.005s carried quantity 1000000, not its own write: the write of the update of pet 1 to 1000000 by client 0"}},
		{Failure{Kind: MixedInstants, Pet: 0, Count: 1, Ops: []Involved{{1, RoleList}, {2, RoleNewest}, {0, RoleMissed}}},
			[]string{"the list by client 1 through http://b/v1, sent at 0.002s and answered at 0.003s mixed two instants: it showed pet 2 at 1000001, written by the update of pet 2 to 1000001",
				"and pet 1 at 1000000 although the update of pet 1 to 1000000 by client 0", "answered before that write was sent, had replaced it"}},
		{Failure{Kind: Unorderable, Pet: -1, Count: 1, Pieces: 2, OfPieces: 5, Span: [2]int64{1 * ms, 40 * ms}},
			[]string{"no order of the requests", "(porcupine found none in 2 of 5 pieces of the history, the first from 0.001s to 0.040s)", "see the picture (-consistency-html)"}},
		{Failure{Kind: CheckerBug, Pet: -1, Count: 1},
			[]string{"conformancetest bug: porcupine accepted a history that the direct rules reject"}},
		{Failure{Kind: ThinHistory, Pet: -1, Count: 1, Updates: 6, MinUpdates: 20},
			[]string{"the history holds 6 updates answered 200, fewer than the minimum of 20 (-consistency-min-updates)", "4 clients ran for 1s over 2 base URLs; run longer (-consistency), with more clients"}},
		{Failure{Kind: UnexpectedStale, Pet: -1, Count: 2, Ops: []Involved{{5, RoleList}}},
			[]string{"2 such requests; the first: the list by client 2 through http://b/v1, sent at 0.040s and answered at 0.041s (marked stale, Age 4 s) was marked stale", "the run was not told it may (-consistency-stale-if-error)"}},
		{Failure{Kind: StaleBeyondBound, Pet: 0, Count: 1, Bound: 5 * time.Second, StaleIfError: 5 * time.Second, Ops: []Involved{{5, RoleList}, {0, RoleMissed}, {1, RoleShownBy}}},
			[]string{"(marked stale, Age 4 s) showed pet 1 at quantity 5 (the quantity before the run), which the list by client 1 through http://b/v1, sent at 0.002s and answered at 0.003s had shown replaced by the update of pet 1 to 1000000",
				"a state at least 37 ms older than the list's call, more than its bound of 5000 ms, the stale-if-error bound of 5s (its Age: 4 s)"}},
	} {
		problem, expected := Words(h, tc.f)
		for _, want := range tc.want {
			if !strings.Contains(problem, want) {
				t.Errorf("%s: %q missing from: %s", tc.f.Kind, want, problem)
			}
		}
		moved := strings.Contains(expected, "moved 10 ms earlier (the staleness bound)")
		switch tc.f.Kind {
		case NoLists, ThinHistory, UnexpectedStale:
		case StaleBeyondBound:
			if !strings.Contains(expected, "a list marked stale to show the inventory as it was at one instant at most 5000 ms before the list was sent") {
				t.Errorf("%s: expected %q", tc.f.Kind, expected)
			}
		default:
			if !strings.Contains(expected, "CONTRACT.md §Consistency") || moved != (tc.f.Bound > 0) {
				t.Errorf("%s: expected %q", tc.f.Kind, expected)
			}
		}
		if strings.Contains(problem, "after the fault") || strings.Contains(problem, "before any fault") {
			t.Errorf("%s: a fault named in a run without faults: %s", tc.f.Kind, problem)
		}
	}
}

// TestWordsOfTheFaultFollowed: a failure names the fault its latest
// request followed, in its data and in its words, or says it came before
// any; a failure that names no request says nothing of faults.
func TestWordsOfTheFaultFollowed(t *testing.T) {
	h := wordsHistory(
		update(0, 0, 0, 1*ms, 0, 1000000, true),      // 0
		list(1, 1, 2*ms, 3*ms, 5, 0, 12),             // 1
		update(2, 1, 40*ms, 41*ms, 1, 1000001, true), // 2
		list(3, 0, 60*ms, 61*ms, 1000000, 0, 12),     // 3
		list(3, 0, 70*ms, 71*ms, 5, 1000001, 12),     // 4
		update(2, 1, 80*ms, 81*ms, 1, 1000002, true), // 5
	)
	h.Faults = []Fault{
		{Fault: "50ms redis-failover", Kind: "redis-failover", OffsetNs: 50 * ms, AppliedNs: 50 * ms},
		{Fault: "1ms redis-kill-clients", Kind: "redis-kill-clients", OffsetNs: ms, AppliedNs: 1500 * 1000},
		{Fault: "75ms redis-pause 1s", Kind: "redis-pause", OffsetNs: 75 * ms, AppliedNs: 75 * ms},
	}
	for _, tc := range []struct {
		ops  []Involved
		want int
		says string
	}{
		{[]Involved{{4, RoleList}, {0, RoleMissed}}, 0, ` (after the fault "50ms redis-failover", applied at 0.050s)`},
		{[]Involved{{1, RoleList}}, 1, ` (after the fault "1ms redis-kill-clients", applied at 0.002s)`},
		{[]Involved{{0, RoleUpdate}}, -1, ` (before any fault of the schedule)`},
		{[]Involved{{5, RoleUpdate}, {0, RoleWrittenBy}}, 2, ` (after the fault "75ms redis-pause 1s", applied at 0.075s)`},
		{nil, -1, ""},
	} {
		f := Failure{Kind: Unorderable, Pet: -1, Count: 1, Ops: tc.ops}
		if f.Fault = afterFault(h, &f); f.Fault != tc.want {
			t.Errorf("%v: fault %d, want %d", tc.ops, f.Fault, tc.want)
		}
		if problem, _ := Words(h, f); !strings.HasSuffix(problem, tc.says) || tc.says == "" && strings.Contains(problem, "fault of") {
			t.Errorf("%v: %s", tc.ops, problem)
		}
	}
	// Judged: the first of the lists that missed an update, sent after
	// the second fault (the earliest applied).
	v := Judge(h, Options{})
	if len(v.Failures) == 0 || v.Failures[0].Kind != MissedUpdate || v.Failures[0].Fault != 1 {
		t.Fatalf("%v %+v", kinds(v), v.Failures)
	}
}

// TestObservedWords: the observed staleness says 0 as strict, and for a
// history no bound makes pass, why.
func TestObservedWords(t *testing.T) {
	h := simulate(8, 4, 500*time.Millisecond, simPets)
	if v := Judge(h, Options{}); !strings.HasPrefix(v.ObservedWords, "0 (strict") {
		t.Errorf("strict: %s", v.ObservedWords)
	}
	for i := range h.Ops {
		if o := &h.Ops[i]; o.Kind == List && o.Round == 2 {
			o.Seen[1] = 424242
			break
		}
	}
	if v := Judge(h, Options{}); !strings.Contains(v.ObservedWords, "none: no staleness bound makes this history pass, since a list showed a write that was never made") {
		t.Errorf("never made: %s", v.ObservedWords)
	}
}

// TestDraw: a failed verdict draws its picture, an HTML page that marks
// the violation with its words; a passed verdict and one read back from
// a file have none.
func TestDraw(t *testing.T) {
	h := simulate(2, 4, 300*time.Millisecond, simPets)
	if v := Judge(h, Options{}); v.Draw(io.Discard) != ErrNoPicture {
		t.Errorf("a passed verdict drew a picture")
	}
	i := len(h.Ops) / 2
	for h.Ops[i].Kind != List || !h.Ops[i].OK {
		i++
	}
	h.Ops[i].Seen[1] = 424242
	h.Faults = []Fault{{Fault: "10ms redis-kill-clients", Kind: "redis-kill-clients", OffsetNs: 10 * ms, AppliedNs: 10 * ms}}
	v := Judge(h, Options{})
	var page bytes.Buffer
	if err := v.Draw(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<html") || !strings.Contains(page.String(), "a write that was never made") ||
		!strings.Contains(page.String(), `(after the fault \"10ms redis-kill-clients\", applied at 0.010s)`) {
		t.Errorf("the picture (%d bytes) does not mark the violation, with the fault it followed", page.Len())
	}
	var saved bytes.Buffer
	if err := WriteHistory(&saved, h, time.Now(), Options{}, &v); err != nil {
		t.Fatal(err)
	}
	back, err := ReadHistory(&saved)
	if err != nil {
		t.Fatal(err)
	}
	if back.Verdict.Failures[0].Kind != NeverWritten || back.Verdict.Draw(io.Discard) != ErrNoPicture {
		t.Errorf("read back: %v", kinds(*back.Verdict))
	}
}
