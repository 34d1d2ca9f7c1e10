package linearize

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// cinput and coutput are an operation's input and output in the model.
type cinput struct {
	pin  bool // sets the state a piece of the history starts from
	list bool
	slot int
	qty  int64
}

type coutput struct {
	seen  cstate // a list, or a pin
	known bool   // an update answered 200 with an item
	got   int64  // its quantity
}

// cstate is the quantities of the pets in play.
type cstate [MaxPets]int64

// mstate is the model's state: the quantities of the pets in play, once
// a piece's pin has set them.
type mstate struct {
	q   cstate
	set bool
}

// model is the inventory of the pets in play as porcupine sees it.
func (r *judgement) newModel() porcupine.Model { return r.modelOf(-1) }

// modelOf is the model that holds a list to what it showed of the pet in
// slot only, or of every pet in play for only -1: a history that only
// one pet's model rejects is that pet's.
func (r *judgement) modelOf(only int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return mstate{} },
		Step: func(state, input, output any) (bool, any) {
			st, in, out := state.(mstate), input.(cinput), output.(coutput)
			switch {
			case in.pin:
				return !st.set, mstate{q: out.seen, set: true}
			case !st.set:
				return false, st
			case in.list && only >= 0:
				return out.seen[only] == st.q[only], st
			case in.list:
				return out.seen == st.q, st
			case out.known && out.got != in.qty:
				return false, st
			}
			st.q[in.slot] = in.qty
			return true, st
		},
		Hash: func(state any) uint64 {
			st := state.(mstate)
			h := uint64(14695981039346656037)
			for _, q := range st.q {
				h ^= uint64(q)
				h *= 1099511628211
			}
			return h
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(cinput), output.(coutput)
			switch {
			case in.pin:
				return "state at the barrier " + describeState(r.h, out.seen)
			case in.list:
				return "list " + describeState(r.h, out.seen)
			case !out.known:
				return fmt.Sprintf("pet %d := %d (outcome unknown)", r.h.Pets[in.slot].ID, in.qty)
			}
			return fmt.Sprintf("pet %d := %d → %d", r.h.Pets[in.slot].ID, in.qty, out.got)
		},
		DescribeState: func(state any) string { return describeState(r.h, state.(mstate).q) },
	}
}
