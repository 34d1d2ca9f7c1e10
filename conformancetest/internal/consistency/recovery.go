package consistency

import (
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// recoveryPause is how long the run waits before it asks again whether
// the deployment recovered, when an answer gives no Retry-After.
const recoveryPause = 250 * time.Millisecond

// awaitRecovery waits, after the schedule's last fault ended, until the
// deployment has answered an update and then a strict list with 200
// (honouring Retry-After), within Config.ConsistencyRecovery of that
// end, and returns ops with the requests it sent. What the clients sent
// after the fault counts: a run whose clients met the deployment whole
// again sends nothing more. Each request is sent alone, a round of its
// own, by the client of the barriers; the lists are strict barriers. So
// they are part of the history, judged with it, and a replay measures
// the same recovery (linearize.Recover).
func (r *consistencyRun) awaitRecovery(ops []linearize.Op, faults []linearize.Fault) []linearize.Op {
	rec := linearize.Recover(&linearize.History{Ops: ops, Faults: faults})
	if !rec.Faulted {
		return ops
	}
	deadline := rec.From + int64(r.cfg.ConsistencyRecovery)
	round := 0
	for _, o := range ops {
		round = max(round, o.Round+1)
	}
	needUpdate, needList := rec.Update < 0, rec.List < 0
	for (needUpdate || needList) && r.now() < deadline && r.ctx.Err() == nil {
		o := linearize.Op{Client: r.cfg.ConsistencyClients, Base: round % len(r.bases), Round: round}
		var ok bool
		var wait time.Duration
		if needUpdate {
			ex := r.update(&o, round%len(r.pets))
			ok, wait = o.Known, wire.RetryAfter(ex, recoveryPause)
			needUpdate = !ok
		} else {
			o.Barrier, o.Strict = true, true
			ex := r.list(&o)
			ok, wait = o.OK && !o.Stale, wire.RetryAfter(ex, recoveryPause)
			needList = !ok
		}
		ops = append(ops, o)
		round++
		if ok {
			continue
		}
		select {
		case <-time.After(min(max(wait, recoveryPause), time.Duration(deadline-r.now()))):
		case <-r.ctx.Done():
		}
	}
	return ops
}
