package linearize

import (
	"io"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// drawing is what the picture of a failed history is drawn from: the
// judgement, its pieces and those found not linearizable.
type drawing struct {
	r       *judgement
	pieces  []piece
	illegal []int
	limit   time.Duration
}

// draw writes porcupine's picture of the pieces of the history found not
// linearizable (the first few: a page that opens fast), or of every piece
// when none was (a direct rule found what porcupine had no time to), with
// the violations of failures marked, to w.
func (g *drawing) draw(w io.Writer, failures []Failure) error {
	model := g.r.model
	const most = 3
	var hist []porcupine.Operation
	var bounds []int
	show := g.illegal
	if len(show) == 0 {
		show = make([]int, len(g.pieces))
		for i := range show {
			show[i] = i
		}
	}
	for _, i := range show[:min(most, len(show))] {
		hist = append(hist, g.pieces[i].ops...)
		bounds = append(bounds, len(hist))
	}
	model.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
		var out [][]porcupine.Operation
		from := 0
		for _, to := range bounds {
			out = append(out, h[from:to])
			from = to
		}
		return out
	}
	res, info := porcupine.CheckOperationsVerbose(model, hist, g.limit)
	notes := g.violations(hist, failures)
	if res == porcupine.Unknown {
		notes = append(notes, porcupine.Annotation{Tag: "checker", Description: "the checker ran out of time: the linearizations shown are partial"})
	}
	info.AddAnnotations(notes)
	return porcupine.Visualize(model, info, w)
}

// violations marks, in the pieces hist shows, the request that broke each
// direct rule, with the failure's words.
func (g *drawing) violations(hist []porcupine.Operation, failures []Failure) []porcupine.Annotation {
	var notes []porcupine.Annotation
	first, last := hist[0].Call, int64(math.MinInt64)
	for _, op := range hist {
		last = max(last, op.Return)
	}
	for _, f := range failures {
		if len(f.Ops) == 0 || f.Ops[0].Role != RoleList && f.Ops[0].Role != RoleUpdate {
			continue // not a direct rule's
		}
		o := &g.r.h.Ops[f.Ops[0].Index]
		if o.Call < first || o.Return > last {
			continue // in a piece not shown
		}
		notes = append(notes, porcupine.Annotation{ClientId: o.Client, Start: o.Call, End: o.Return,
			Description: "violation", Details: f.Problem, BackgroundColor: "#f4c7c3"})
	}
	notes = append(notes, faultBands(g.r.h.Faults, first, last)...)
	return notes
}

// faultBands are the faults of the run's schedule that overlap the time
// shown (first to last), each a band of the "faults" row across the
// timeline, from when it was applied to when it ended (a moment's width
// for one that does not last).
func faultBands(faults []Fault, first, last int64) []porcupine.Annotation {
	var out []porcupine.Annotation
	for _, f := range faults {
		end := f.AppliedNs + int64(time.Millisecond)
		if f.EndedNs != nil {
			end = max(end, *f.EndedNs)
		}
		if end < first || f.AppliedNs > last {
			continue
		}
		details := "applied at " + at(f.AppliedNs)
		if f.EndedNs != nil {
			details += ", ended at " + at(*f.EndedNs)
		}
		if f.Note != "" {
			details += ": " + f.Note
		}
		out = append(out, porcupine.Annotation{Tag: "faults", Start: max(f.AppliedNs, first), End: min(end, last),
			Description: f.Fault, Details: details, BackgroundColor: "#fde2b8"})
	}
	return out
}
