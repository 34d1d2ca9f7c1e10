package conformancetest

import (
	"cmp"
	"math/rand/v2"
	"slices"
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

// TestConsistencyCheckIsFast: a 10 s history of 8 clients is judged in
// less time than it took.
func TestConsistencyCheckIsFast(t *testing.T) {
	r, ops := simulate(1, 8, 10*time.Second, simPets)
	start := time.Now()
	v := r.judge(ops)
	took := time.Since(start)
	t.Logf("%d operations judged in %v: %s", len(ops), took, v.detail)
	if len(v.failures) > 0 || v.notJudged != "" {
		t.Fatalf("a linearizable history: %q %q", v.failures, v.notJudged)
	}
	if took > 10*time.Second {
		t.Errorf("judging took %v, more than the 10 s the history lasted", took)
	}
}
