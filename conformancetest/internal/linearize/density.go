package linearize

import (
	"cmp"
	"math"
	"slices"
)

// overlapped counts the updates answered 200 of h whose interval, from
// call to return (both ends included), intersects the interval of a
// request of another client: Counts.Overlapped. Another client's request
// o overlaps update u when it was sent at or before u and had not yet
// returned when u was sent, or was sent after u and before u returned;
// one pass over the requests by call finds both.
func overlapped(h *History) int {
	ops := h.Ops
	by := make([]int, len(ops))
	for i := range by {
		by[i] = i
	}
	slices.SortStableFunc(by, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	// differs[p] is the first position from p on whose request is of
	// another client than the request at p (len(by) when none is).
	differs := make([]int, len(by)+1)
	differs[len(by)] = len(by)
	for p := len(by) - 1; p >= 0; p-- {
		differs[p] = p + 1
		if p+1 < len(by) && ops[by[p+1]].Client == ops[by[p]].Client {
			differs[p] = differs[p+1]
		}
	}
	var open latest
	open.reset()
	n, sent := 0, 0 // sent: the positions already in open
	for _, i := range by {
		u := &ops[i]
		for sent < len(by) && ops[by[sent]].Call <= u.Call {
			open.add(ops[by[sent]].Return, ops[by[sent]].Client)
			sent++
		}
		if u.Kind != Update || !u.Known {
			continue
		}
		// Sent at or before u, returned at or after u's call.
		before := open.otherThan(u.Client) >= u.Call
		// Sent after u, at or before its return.
		end, _ := slices.BinarySearchFunc(by[sent:], u.Return+1, func(p int, t int64) int { return cmp.Compare(ops[p].Call, t) })
		end += sent
		after := sent < end && (ops[by[sent]].Client != u.Client || differs[sent] < end)
		if before || after {
			n++
		}
	}
	return n
}

// latest keeps the two latest returns of the requests seen, of two
// different clients: the latest return of a client other than any one.
type latest struct {
	ret    [2]int64
	client [2]int
}

func (l *latest) reset() {
	l.ret = [2]int64{math.MinInt64, math.MinInt64}
	l.client = [2]int{-1, -1}
}

// add counts a request of client c that returned at t.
func (l *latest) add(t int64, c int) {
	switch {
	case c == l.client[0]:
		l.ret[0] = max(l.ret[0], t)
	case t > l.ret[0]:
		l.ret[1], l.client[1] = l.ret[0], l.client[0]
		l.ret[0], l.client[0] = t, c
	case c == l.client[1]:
		l.ret[1] = max(l.ret[1], t)
	case t > l.ret[1]:
		l.ret[1], l.client[1] = t, c
	}
}

// otherThan is the latest return of a request of a client other than c
// (math.MinInt64 when none).
func (l *latest) otherThan(c int) int64 {
	if l.client[0] != c {
		return l.ret[0]
	}
	return l.ret[1]
}
