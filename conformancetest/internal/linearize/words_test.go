package linearize

import (
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
	return Op{Client: client, Base: base, Kind: List, Call: call, Return: ret, OK: true, Seen: [MaxPets]int64{a, b, c}}
}

func update(client, base int, call, ret int64, slot int, qty int64, known bool) Op {
	o := Op{Client: client, Base: base, Kind: Update, Call: call, Return: ret, Slot: slot, Qty: qty, Known: known, Answer: `503 (code "unavailable")`}
	if known {
		o.Got, o.Answer = qty, "200"
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
		if len(v.Failures) != 1 {
			t.Fatalf("known %v: %q", known, v.Failures)
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
			t.Errorf("known %v, at 2 ms: %q", known, v.Failures)
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
	if len(v.Failures) != 1 {
		t.Fatalf("%q", v.Failures)
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
	if len(v.Failures) != 1 {
		t.Fatalf("%q", v.Failures)
	}
	t.Log(v.Failures[0].Problem)
	if !strings.Contains(v.Failures[0].Problem, "cannot be ordered, of pet 1") {
		t.Errorf("not named as pet 1's: %s", v.Failures[0].Problem)
	}
}
