package linearize

import (
	"testing"
	"time"
)

// TestSweepAgreesWithPorcupine: on strict histories, linearizable and
// broken in each of the ways the rules name (and in ways they do not),
// the sweep and porcupine reach the same verdict.
func TestSweepAgreesWithPorcupine(t *testing.T) {
	breaks := map[string]func(h *History, k int){
		"none": func(*History, int) {},
		"a list shows an older value": func(h *History, k int) {
			seen := 0
			for i := range h.Ops {
				if o := &h.Ops[i]; o.Kind == List && !o.Barrier && o.Round == 1 {
					if seen++; seen == k {
						o.Seen[0] = h.Pets[0].Qty
						return
					}
				}
			}
		},
		"two lists swap their states": func(h *History, k int) {
			var lists []int
			for i := range h.Ops {
				if o := &h.Ops[i]; o.Kind == List && !o.Barrier && o.Round == 2 {
					lists = append(lists, i)
				}
			}
			if len(lists) > k+3 {
				a, b := &h.Ops[lists[k]], &h.Ops[lists[k+3]]
				a.Seen, b.Seen = b.Seen, a.Seen
			}
		},
		"an update of unknown outcome": func(h *History, k int) {
			n := 0
			for i := range h.Ops {
				if o := &h.Ops[i]; o.Kind == Update {
					if n++; n%k == 0 {
						o.Known = false
					}
				}
			}
		},
	}
	verdicts := map[bool]int{}
	for name, brk := range breaks {
		for seed := range uint64(6) {
			h := simulate(100+seed, 3, 300*time.Millisecond, simPets)
			brk(h, int(seed)+1)
			r := prepare(h, Options{})
			illegal, unchecked, _, _ := r.check(r.pieces(0), time.Now().Add(time.Minute))
			ok, known, _ := prepare(h, Options{}).sweep(0, time.Now().Add(time.Minute))
			if unchecked > 0 || !known {
				t.Fatalf("%s, seed %d: not checked", name, seed)
			}
			verdicts[ok]++
			if ok != (len(illegal) == 0) {
				t.Errorf("%s, seed %d: the sweep says linearizable %v, porcupine %v", name, seed, ok, len(illegal) == 0)
			}
		}
	}
	if verdicts[true] < 6 || verdicts[false] < 6 {
		t.Errorf("the histories are not a mix of linearizable and not: %v", verdicts)
	}
	t.Logf("linearizable: %d, not: %d", verdicts[true], verdicts[false])
}
