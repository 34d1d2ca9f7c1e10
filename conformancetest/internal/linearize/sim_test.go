package linearize

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// simulate returns the history of clients that list and update one
// linearizable copy of pets for d: each request takes effect at a random
// instant between its call and its return; latencies are 0.2 to 2 ms.
func simulate(seed uint64, clients int, d time.Duration, pets []Pet) *History {
	return simulateStale(seed, clients, d, pets, 0, 0)
}

// simulateStale is simulate with the lists through the second base URL
// showing the state stale before their instant (a replica that stale
// behind), and quiet left before each barrier, as a run judged against a
// staleness bound leaves.
func simulateStale(seed uint64, clients int, d time.Duration, pets []Pet, stale, quiet time.Duration) *History {
	return simulateWith(seed, clients, d, pets, simOpts{stale: stale, quiet: quiet})
}

// simOpts are the ways a simulated run departs from a healthy one.
type simOpts struct {
	stale, quiet time.Duration
	outage       *simOutage
}

// simOutage is a store outage of a simulated deployment that opts in to
// answer lists from a stale state: for the requests sent from from to
// to, every update answers 503 and takes no effect, every list through
// the first base URL answers 503, and every list through the second
// (and every barrier) is marked stale with Age age and shows the state
// lag before its instant.
type simOutage struct {
	from, to, lag time.Duration
	age           int64
}

func (u *simOutage) covers(o Op) bool {
	return u != nil && o.Call >= int64(u.from) && o.Call < int64(u.to)
}

// timed is a simulated request and the instant it takes effect at.
type timed struct {
	o   Op
	lin int64
}

// simulateWith returns the history of a simulated run (see simulate),
// departing from a healthy one as opt says.
func simulateWith(seed uint64, clients int, d time.Duration, pets []Pet, opt simOpts) *History {
	rng := rand.New(rand.NewPCG(seed, 1))
	h := &History{Bases: []string{"http://a/v1", "http://b/v1"}, Pets: pets, Clients: clients, Duration: d}
	next := int64(1_000_000)
	var all []timed
	t0 := int64(0)
	for round := 0; t0 < int64(d); round++ {
		end := min(int64(round+1)*int64(simRound), int64(d))
		last := t0
		for c := range clients {
			t := t0 + int64(rng.IntN(100_000))
			for t < end {
				lat := int64(200_000 + rng.IntN(1_800_000))
				o := Op{Client: c, Base: c % 2, Call: t, Return: t + lat, Round: round, Status: 200, Age: NoAge}
				if rng.IntN(2) == 0 {
					o.Kind, o.OK = List, true
				} else {
					o.Kind, o.Slot, o.Qty, o.Known, o.Answer = Update, rng.IntN(len(pets)), next, true, "200"
					next++
				}
				all = append(all, timed{o, t + rng.Int64N(lat)})
				t += lat + int64(rng.IntN(50_000))
				last = max(last, t)
			}
		}
		last += int64(opt.quiet)
		b := Op{Client: clients, Kind: List, OK: true, Barrier: true, Round: round, Call: last + 1000, Return: last + 300_000, Status: 200, Age: NoAge}
		all = append(all, timed{b, last + 2000})
		t0 = last + 301_000
	}
	h.Ops = settle(all, pets, opt)
	return h
}

// settle gives each simulated request what it saw: the state at its
// instant (lag or stale before it for a stale list), the outage's
// answers; it returns them ordered by call.
func settle(all []timed, pets []Pet, opt simOpts) []Op {
	slices.SortFunc(all, func(a, b timed) int { return cmp.Compare(a.lin, b.lin) })
	// The state after each write, to look a list's instant up in.
	var st cstate
	for i, p := range pets {
		st[i] = p.Qty
	}
	times, states := []int64{math.MinInt64}, []cstate{st}
	for _, tm := range all {
		if tm.o.Kind == Update && !opt.outage.covers(tm.o) {
			st[tm.o.Slot] = tm.o.Qty
			times, states = append(times, tm.lin), append(states, st)
		}
	}
	ops := make([]Op, len(all))
	for i, tm := range all {
		o := tm.o
		at := tm.lin
		switch {
		case o.Kind == Update && opt.outage.covers(o):
			o.Known, o.Status, o.Answer = false, 503, "503"
		case o.Kind == Update:
			o.Got = o.Qty
		case opt.outage.covers(o) && o.Base == 0 && !o.Barrier:
			o.OK, o.Status, o.Answer = false, 503, "503"
		case opt.outage.covers(o):
			o.Stale, o.Age = true, opt.outage.age
			at -= int64(opt.outage.lag)
		case o.Base == 1:
			at -= int64(opt.stale)
		}
		j, _ := slices.BinarySearch(times, at)
		if o.Kind == List && o.OK {
			o.Seen = states[j-1]
		}
		ops[i] = o
	}
	slices.SortFunc(ops, func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
	return ops
}

var simPets = []Pet{{ID: 1, Qty: 5}, {ID: 2, Qty: 0}, {ID: 3, Qty: 12}}

// TestConsistencyLinearizablePasses: a linearizable history of 8 clients
// passes, judged in every piece (2 s; with -race, which slows the checker
// tenfold, 1 s). How fast it is judged is BenchmarkJudge's to measure: a
// unit test on a shared machine asserts no duration.
func TestConsistencyLinearizablePasses(t *testing.T) {
	d := 2 * time.Second
	if raceDetector {
		d = time.Second
	}
	h := simulate(1, 8, d, simPets)
	v := Judge(h, Options{})
	t.Log(v.Detail)
	if len(v.Failures) > 0 || v.NotJudged != "" {
		t.Fatalf("a linearizable history: %v %q", kinds(v), v.NotJudged)
	}
}

// TestNotJudgedInTime: a check that runs out of time judges nothing: no
// failure, no pass, and NotJudged says how many of the history's pieces
// went unchecked and what makes the check cheaper, strictly and against a
// bound alike. (A limit already past when the check starts stands for a
// search too wide to finish, such as many clients in flight make.)
func TestNotJudgedInTime(t *testing.T) {
	h := simulate(1, 8, 500*time.Millisecond, simPets)
	for _, bound := range []time.Duration{0, 50 * time.Millisecond} {
		v := Judge(h, Options{Staleness: bound, Limit: time.Nanosecond})
		t.Logf("bound %v: %s; %s", bound, v.NotJudged, v.Detail)
		if len(v.Failures) > 0 {
			t.Fatalf("bound %v: a check out of time found failures: %v", bound, kinds(v))
		}
		for _, want := range []string{"did not finish in 1ns", "pieces not checked", "-consistency-clients"} {
			if !strings.Contains(v.NotJudged, want) {
				t.Errorf("bound %v: NotJudged %q does not say %q", bound, v.NotJudged, want)
			}
		}
		if !strings.Contains(v.Detail, "not checked in time") {
			t.Errorf("bound %v: the detail %q does not say the check ran out of time", bound, v.Detail)
		}
	}
}

// BenchmarkJudge judges a 10 s history of 8 clients (about 70 000
// requests): the time per operation is the judgement's, which should stay
// well below the history's own duration on 2 cores.
func BenchmarkJudge(b *testing.B) {
	h := simulate(1, 8, 10*time.Second, simPets)
	for b.Loop() {
		if v := Judge(h, Options{}); len(v.Failures) > 0 || v.NotJudged != "" {
			b.Fatalf("%v %q", kinds(v), v.NotJudged)
		}
	}
}

// TestConsistencyRules: each direct rule, on a linearizable history
// broken in one place, fails it with its kind, naming the request that
// broke it.
func TestConsistencyRules(t *testing.T) {
	firstList := func(ops []Op, after int64) int {
		for i, o := range ops {
			if o.Kind == List && o.OK && !o.Barrier && o.Call > after {
				return i
			}
		}
		t.Fatal("no list")
		return -1
	}
	for _, tc := range []struct {
		name   string
		break_ func(ops []Op) int // returns the request it broke
		want   FailureKind
		role   Role
	}{
		{"a stale list", func(ops []Op) int {
			// The last list shows pet 1 as before the run.
			for i := len(ops) - 1; i >= 0; i-- {
				if ops[i].Kind == List && ops[i].OK {
					ops[i].Seen[0] = simPets[0].Qty
					return i
				}
			}
			return -1
		}, MissedUpdate, RoleList},
		{"a value never written", func(ops []Op) int {
			i := firstList(ops, 0)
			ops[i].Seen[1] = 424242
			return i
		}, NeverWritten, RoleList},
		{"a pet missing", func(ops []Op) int {
			i := firstList(ops, 0)
			ops[i].Seen[2] = -1
			return i
		}, MissingPet, RoleList},
		{"an update answering another write", func(ops []Op) int {
			first := -1
			for i := range ops {
				if ops[i].Kind != Update {
					continue
				}
				if first < 0 {
					first = i
					continue
				}
				ops[first].Got = ops[i].Qty
				return first
			}
			return -1
		}, AnotherWrite, RoleUpdate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := simulate(2, 4, 300*time.Millisecond, simPets)
			broke := tc.break_(h.Ops)
			v := Judge(h, Options{})
			if len(v.Failures) == 0 || v.Failures[0].Kind != tc.want {
				t.Fatalf("failures %v, want the first of kind %s", kinds(v), tc.want)
			}
			if i, ok := v.Failures[0].Op(tc.role); !ok || i != broke {
				t.Errorf("the %s involved is %d (%v), want %d: %+v", tc.role, i, ok, broke, v.Failures[0].Ops)
			}
			t.Log(v.Failures[0].Problem)
		})
	}
}

// TestConsistencyJudged: updates of unknown outcome that no list showed
// are left out, a history of one pet is judged, and a check out of time
// is not judged.
func TestConsistencyJudged(t *testing.T) {
	t.Run("unknown outcomes left out", func(t *testing.T) {
		h := simulate(3, 4, 300*time.Millisecond, simPets)
		ops := h.Ops
		// Every update not shown by any list becomes unknown; so do
		// the others: the history stays linearizable.
		unknown := 0
		for i := range ops {
			if ops[i].Kind == Update && i%3 == 0 {
				ops[i].Known, ops[i].Answer, ops[i].Status = false, "503", 503
				unknown++
			}
		}
		v := Judge(h, Options{})
		if len(v.Failures) > 0 || v.NotJudged != "" || v.Counts.Unknown != unknown || v.Counts.LeftOut > unknown {
			t.Fatalf("%v %q %+v, want %d of unknown outcome", kinds(v), v.NotJudged, v.Counts, unknown)
		}
		t.Log(v.Detail)
	})
	t.Run("one pet", func(t *testing.T) {
		h := simulate(5, 4, 300*time.Millisecond, simPets[:1])
		if v := Judge(h, Options{}); len(v.Failures) > 0 || v.NotJudged != "" {
			t.Fatalf("%v %q", kinds(v), v.NotJudged)
		}
	})
	t.Run("out of time", func(t *testing.T) {
		h := simulate(4, 4, 300*time.Millisecond, simPets)
		v := Judge(h, Options{Limit: time.Nanosecond})
		if len(v.Failures) > 0 || v.Outcome() != "not judged" || v.Observed != nil {
			t.Fatalf("%v %q", kinds(v), v.NotJudged)
		}
	})
}

// kinds are the kinds of v's failures, in order.
func kinds(v Verdict) []FailureKind {
	var out []FailureKind
	for _, f := range v.Failures {
		out = append(out, f.Kind)
	}
	return out
}

// simRound is the length of a round of the simulated runs, as the suite's.
const simRound = 100 * time.Millisecond
