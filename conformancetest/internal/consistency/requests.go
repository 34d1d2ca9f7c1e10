package consistency

import (
	"net/http"
	"slices"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// The requests of the consistency run, each recorded as an Op of the
// history: what was sent, when, and how it was answered, typed (the
// status, a refusal, a list's stale mark and Age).

func (r *consistencyRun) now() int64 { return int64(time.Since(r.start)) }

// list sends one list (with Cache-Control: no-cache when o.Strict),
// records what it showed of the pets in play, and returns the exchange.
func (r *consistencyRun) list(o *linearize.Op) *wire.Exchange {
	o.Kind, o.Age = linearize.List, linearize.NoAge
	o.Call = r.now()
	ex := r.c.Send(r.ctx, wire.Request{Method: http.MethodGet, Path: "/inventory", Base: r.bases[o.Base], NoCache: o.Strict})
	o.Return = r.now()
	r.c.CountRequest()
	var err error
	var items []wire.Item
	if ex.Err != nil {
		err = ex.Err
	} else {
		o.Status = ex.Resp.Status
		items, err = wire.ParseItems(ex.Resp)
	}
	if err != nil {
		o.Answer = r.c.Scrub(err.Error())
		return ex
	}
	o.OK = true
	// The deployment's stale mark (a malformed Cache-Status is none:
	// cache/stale-if-error judges its form) and the list's Age.
	o.Stale, _ = wire.StaleMark(ex.Resp.Header)
	if age, err := wire.Age(ex.Resp.Header); err == nil && o.Stale {
		o.Age = age
	}
	for i := range r.pets { // the slots past them stay 0, as in the model
		o.Seen[i] = -1
	}
	for _, it := range items {
		if s, ok := r.slotOf[it.ID]; ok {
			o.Seen[s] = it.Qty
		}
	}
	return ex
}

// update sends one update of the pet in slot with a quantity no other
// write of the run uses, records how it was answered, and returns the
// exchange.
func (r *consistencyRun) update(o *linearize.Op, slot int) *wire.Exchange {
	o.Kind = linearize.Update
	o.Slot = slot
	r.mu.Lock()
	for slices.Contains(r.avoid, r.next) {
		r.next++
	}
	o.Qty = r.next
	r.next++
	r.mu.Unlock()
	o.Call = r.now()
	ex := r.c.Send(r.ctx, wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(r.pets[slot].ID), Base: r.bases[o.Base],
		ContentType: "application/json", Body: wire.QtyBody(o.Qty)})
	o.Return = r.now()
	r.c.CountRequest()
	switch {
	case ex.Err != nil:
		o.Answer = "no answer (" + r.c.Scrub(ex.Err.Error()) + ")"
	case ex.Resp.Status != http.StatusOK:
		o.Answer, o.Status = r.c.Scrub(wire.ErrorSummary(ex.Resp)), ex.Resp.Status
		// Refused (4xx): it changed nothing, so the history holds it as
		// a write of unknown outcome all the same (a refusal that did
		// write would show in a list); the update checks judge the
		// refusal itself.
		o.Refused = ex.Resp.Status >= 400 && ex.Resp.Status < 500
		if o.Refused {
			o.Answer += " (a refusal)" // for people: the history keeps Refused
		}
	default:
		v, err := wire.DecodeJSON(ex.Resp.Body)
		obj, _ := v.(map[string]any)
		q, ok := wire.IntegerValue(obj["quantity"])
		if err != nil || !ok || !q.IsInt64() {
			o.Answer, o.Status = "200 without an InventoryItem", http.StatusOK
			return ex
		}
		o.Known, o.Got, o.Answer, o.Status = true, q.Int64(), "200", http.StatusOK
	}
	return ex
}
