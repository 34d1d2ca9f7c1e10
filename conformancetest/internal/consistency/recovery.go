package consistency

import (
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// awaitRecovery waits, after the schedule's last fault ended, until the
// deployment has answered an update and then a strict list with 200
// (honouring Retry-After), within Config.ConsistencyRecovery of that
// end, and returns ops with the requests it sent. What the clients sent
// after the fault counts: a run whose clients met the deployment whole
// again sends nothing more. Each request is sent alone, a round of its
// own, by the client of the barriers; the lists are strict barriers. So
// they are part of the history, judged with it, and a replay measures
// the same recovery (linearize.Recover). The restore after the check
// retries a 503 until the same deadline.
func (r *consistencyRun) awaitRecovery(ops []linearize.Op, faults []linearize.Fault) []linearize.Op {
	rec := linearize.Recover(&linearize.History{Ops: ops, Faults: faults})
	if !rec.Faulted {
		return ops
	}
	deadline := rec.From + int64(r.cfg.ConsistencyRecovery)
	r.c.RetryRestoreUntil(r.start.Add(time.Duration(deadline)))
	round := 0
	for _, o := range ops {
		round = max(round, o.Round+1)
	}
	needUpdate, needList := rec.Update < 0, rec.List < 0
	for (needUpdate || needList) && r.now() < deadline && r.ctx.Err() == nil {
		o := linearize.Op{Client: r.cfg.ConsistencyClients, Base: round % len(r.bases), Round: round}
		var ok bool
		var ex *wire.Exchange
		if needUpdate {
			ex = r.update(&o, round%len(r.pets))
			ok = o.Known
			needUpdate = !ok
		} else {
			o.Barrier, o.Strict = true, true
			ex = r.list(&o)
			ok = o.OK && !o.Stale
			needList = !ok
		}
		ops = append(ops, o)
		round++
		if ok {
			continue
		}
		select {
		case <-time.After(wire.RetryWait(ex, time.Duration(deadline-r.now()))):
		case <-r.ctx.Done():
		}
	}
	return ops
}
