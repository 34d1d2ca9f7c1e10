package linearize

import (
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// draw writes porcupine's picture of the pieces of the history found not
// linearizable (the first few: a page that opens fast), or of every piece
// when none was (a direct rule found what porcupine had no time to), with
// the violations marked, to Options.Picture.
func (r *judgement) draw(pieces []piece, illegal []int, findings []finding, limit time.Duration) error {
	model := r.model
	const most = 3
	var hist []porcupine.Operation
	var bounds []int
	show := illegal
	if len(show) == 0 {
		show = make([]int, len(pieces))
		for i := range show {
			show[i] = i
		}
	}
	for _, i := range show[:min(most, len(show))] {
		hist = append(hist, pieces[i].ops...)
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
	res, info := porcupine.CheckOperationsVerbose(model, hist, limit)
	var notes []porcupine.Annotation
	first, last := hist[0].Call, int64(math.MinInt64)
	for _, op := range hist {
		last = max(last, op.Return)
	}
	for _, f := range findings {
		if f.op.Call < first || f.op.Return > last {
			continue // in a piece not shown
		}
		notes = append(notes, porcupine.Annotation{ClientId: f.op.Client, Start: f.op.Call, End: f.op.Return,
			Description: "violation", Details: f.words, BackgroundColor: "#f4c7c3"})
	}
	notes = append(notes, faultBands(r.h.Faults, first, last)...)
	if res == porcupine.Unknown {
		notes = append(notes, porcupine.Annotation{Tag: "checker", Description: "the checker ran out of time: the linearizations shown are partial"})
	}
	info.AddAnnotations(notes)
	f, err := os.Create(r.opt.Picture)
	if err != nil {
		return err
	}
	if err := porcupine.Visualize(model, info, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
