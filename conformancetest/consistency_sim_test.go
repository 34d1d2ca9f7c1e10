package conformancetest

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// simulate returns the history of clients that list and update one
// linearizable copy of pets for d: each request takes effect at a random
// instant between its call and its return; latencies are 0.2 to 2 ms.
// broken, when not nil, may change what a list shows, given its instant.
func simulate(seed uint64, clients int, d time.Duration, pets []item) (*consistencyRun, []cop) {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &consistencyRun{c: &checker{rn: &runner{cfg: Config{ConsistencyClients: clients}}}, bases: []string{"http://a/v1", "http://b/v1"},
		pets: pets, slotOf: map[int64]int{}, until: d, next: firstConsistencyQuantity}
	type timed struct {
		o   cop
		lin int64
	}
	var all []timed
	t0 := int64(0)
	for round := 0; t0 < int64(d); round++ {
		end := min(int64(round+1)*int64(consistencyRound), int64(d))
		last := t0
		for c := range clients {
			t := t0 + int64(rng.IntN(100_000))
			for t < end {
				lat := int64(200_000 + rng.IntN(1_800_000))
				o := cop{client: c, base: c % 2, call: t, ret: t + lat, answered: t + lat, round: round}
				if rng.IntN(2) == 0 {
					o.kind, o.ok = opList, true
				} else {
					o.kind, o.slot, o.qty, o.known, o.answer = opUpdate, rng.IntN(len(pets)), r.next, true, "200"
					r.next++
				}
				all = append(all, timed{o, t + rng.Int64N(lat)})
				t += lat + int64(rng.IntN(50_000))
				last = max(last, t)
			}
		}
		b := cop{client: clients, kind: opList, ok: true, barrier: true, round: round, call: last + 1000, ret: last + 300_000, answered: last + 300_000}
		all = append(all, timed{b, last + 2000})
		t0 = last + 301_000
	}
	slices.SortFunc(all, func(a, b timed) int { return cmp.Compare(a.lin, b.lin) })
	var st cstate
	for i, p := range pets {
		st[i] = p.qty
	}
	ops := make([]cop, len(all))
	for i, tm := range all {
		o := tm.o
		if o.kind == opList {
			o.seen = st
		} else {
			st[o.slot] = o.qty
			o.got = o.qty
		}
		ops[i] = o
	}
	slices.SortFunc(ops, func(a, b cop) int { return cmp.Compare(a.call, b.call) })
	return r, ops
}

var simPets = []item{{id: 1, qty: 5}, {id: 2, qty: 0}, {id: 3, qty: 12}}

// TestConsistencyCheckLongHistory: a 10 s history of 8 clients is judged
// linearizable (with -race, which slows the checker tenfold, a 1 s
// history). How long the judgement takes is BenchmarkConsistencyCheck's
// to measure: a test does not assert a duration.
func TestConsistencyCheckLongHistory(t *testing.T) {
	d := 10 * time.Second
	if raceDetector {
		d = time.Second
	}
	r, ops := simulate(1, 8, d, simPets)
	start := time.Now()
	v := r.judge(ops)
	took := time.Since(start)
	t.Logf("%d operations judged in %v: %s", len(ops), took, v.detail)
	if len(v.failures) > 0 || v.notJudged != "" {
		t.Fatalf("a linearizable history: %q %q", v.failures, v.notJudged)
	}
}

// BenchmarkConsistencyCheck judges a 2 s history of 8 clients; compare
// its time per operation with the 2 s the history lasted: the checker
// keeps up when it is below.
func BenchmarkConsistencyCheck(b *testing.B) {
	r, ops := simulate(1, 8, 2*time.Second, simPets)
	b.ResetTimer()
	for range b.N {
		if v := r.judge(ops); len(v.failures) > 0 || v.notJudged != "" {
			b.Fatalf("a linearizable history: %q %q", v.failures, v.notJudged)
		}
	}
}

// TestConsistencyRules: each direct rule, on a linearizable history
// broken in one place, fails it in words; updates of unknown outcome that
// no list showed are left out; a check out of time is not judged.
func TestConsistencyRules(t *testing.T) {
	firstList := func(ops []cop, after int64) int {
		for i, o := range ops {
			if o.kind == opList && o.ok && !o.barrier && o.call > after {
				return i
			}
		}
		t.Fatal("no list")
		return -1
	}
	for _, tc := range []struct {
		name   string
		break_ func(ops []cop)
		want   string
	}{
		{"a stale list", func(ops []cop) {
			// The last list shows pet 1 as before the run.
			for i := len(ops) - 1; i >= 0; i-- {
				if ops[i].kind == opList && ops[i].ok {
					ops[i].seen[0] = simPets[0].qty
					return
				}
			}
		}, "missed the update of pet 1"},
		{"a value never written", func(ops []cop) {
			ops[firstList(ops, 0)].seen[1] = 424242
		}, "a write that was never made"},
		{"a pet missing", func(ops []cop) {
			ops[firstList(ops, 0)].seen[2] = -1
		}, "lacked pet 3"},
		{"an update answering another write", func(ops []cop) {
			var first *cop
			for i := range ops {
				if ops[i].kind != opUpdate {
					continue
				}
				if first == nil {
					first = &ops[i]
					continue
				}
				first.got = ops[i].qty
				return
			}
		}, "not its own write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ops := simulate(2, 4, 300*time.Millisecond, simPets)
			tc.break_(ops)
			v := r.judge(ops)
			if len(v.failures) == 0 || !strings.Contains(v.failures[0], tc.want) {
				t.Fatalf("failures %q, want %q", v.failures, tc.want)
			}
			t.Log(v.failures[0])
		})
	}
	t.Run("unknown outcomes left out", func(t *testing.T) {
		r, ops := simulate(3, 4, 300*time.Millisecond, simPets)
		// Every update not shown by any list becomes unknown; so do
		// the others: the history stays linearizable.
		for i := range ops {
			if ops[i].kind == opUpdate && i%3 == 0 {
				ops[i].known, ops[i].answer = false, "503"
			}
		}
		v := r.judge(ops)
		if len(v.failures) > 0 || v.notJudged != "" || !strings.Contains(v.detail, "of unknown outcome") {
			t.Fatalf("%q %q %s", v.failures, v.notJudged, v.detail)
		}
		t.Log(v.detail)
	})
	t.Run("one pet", func(t *testing.T) {
		r, ops := simulate(5, 4, 300*time.Millisecond, simPets[:1])
		if v := r.judge(ops); len(v.failures) > 0 || v.notJudged != "" {
			t.Fatalf("%q %q", v.failures, v.notJudged)
		}
	})
	t.Run("out of time", func(t *testing.T) {
		r, ops := simulate(4, 4, 300*time.Millisecond, simPets)
		r.checkLimit = time.Nanosecond
		v := r.judge(ops)
		if len(v.failures) > 0 || !strings.Contains(v.notJudged, "did not finish") {
			t.Fatalf("%q %q", v.failures, v.notJudged)
		}
	})
}
