package linearize

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What each fault of the schedule cost the clients. The figures follow
// from the history alone (its requests and the faults it keeps), so they
// are computed here, beside the faults the history holds, the same for a
// run and for a replay of its saved history; package internal/faults
// applies faults and knows nothing of requests, and the reports show
// these figures as they are (report.FaultResult is this type): this is
// their one home.

// FaultResult is one fault of a history and what it cost. Its JSON form
// is the one the suite's -json report gives each fault
// (consistency.faults): the fault's own members, then its figures.
type FaultResult struct {
	// Fault is the fault as the history keeps it.
	Fault
	// Window is the longest stretch around the fault (overlapping the
	// time from its AppliedNs to its EndedNs, or its AppliedNs alone) in
	// which no update was answered 200: from the return of the last
	// update answered 200 before it (or the start of the run) to the
	// return of the first after it (or the end of the run). WindowFrom
	// and WindowTo are its ends, offsets from the start of the run.
	Window     time.Duration `json:"windowNs"`
	WindowFrom time.Duration `json:"windowFromNs"`
	WindowTo   time.Duration `json:"windowToNs"`
	// Answers counts the answers other than 200 to the requests sent
	// from the fault's AppliedNs to the next fault's (or the end of the
	// run), by Op.Status named by StatusName: "503", "500", "no answer",
	// and "not recorded" in a history of format 1.
	Answers map[string]int `json:"answers"`
	// Unknown counts the updates of unknown outcome sent in that time,
	// refusals (answered 4xx: they changed nothing) apart: Refused.
	Unknown int `json:"unknownUpdates"`
	Refused int `json:"refusedUpdates"`
	// ListFigures are the lists sent within the window: how available
	// the lists were during it.
	ListFigures
}

// ListFigures are the lists of a fault's window.
type ListFigures struct {
	// Sent counts the lists sent within the window (the barriers
	// included); Answered those answered 200 with a list, and Stale
	// those of them marked stale.
	Sent     int `json:"listsSent"`
	Answered int `json:"listsOK"`
	Stale    int `json:"listsStale"`
	// OldestAge is the largest Age of a list marked stale among them,
	// in seconds; nil when none gave one.
	OldestAge *int64 `json:"oldestAgeSeconds,omitempty"`
}

// StatusName names a status of Op.Status as the reports key it: "503",
// "no answer", "not recorded".
func StatusName(status int) string {
	switch status {
	case StatusNone:
		return "no answer"
	case StatusUnrecorded:
		return "not recorded"
	}
	return strconv.Itoa(status)
}

// FaultResults says what each fault of h cost, in the order of
// h.Faults; nil for a history without faults.
func FaultResults(h *History) []FaultResult {
	if len(h.Faults) == 0 {
		return nil
	}
	end := int64(h.Duration)
	var oks []int64
	for _, o := range h.Ops {
		end = max(end, o.Return)
		if o.Kind == Update && o.Known {
			oks = append(oks, o.Return)
		}
	}
	slices.Sort(oks)
	edges := append(append([]int64{0}, oks...), end)
	out := make([]FaultResult, 0, len(h.Faults))
	for i, f := range h.Faults {
		r := FaultResult{Fault: f, Answers: map[string]int{}}
		r.window(edges)
		r.answers(h, nextAfter(h.Faults, i))
		r.lists(h)
		out = append(out, r)
	}
	return out
}

// nextAfter is when the fault after fault i of faults (by application)
// was applied, math.MaxInt64 for the last.
func nextAfter(faults []Fault, i int) int64 {
	next := int64(math.MaxInt64)
	for j, g := range faults {
		if j != i && (g.AppliedNs > faults[i].AppliedNs || g.AppliedNs == faults[i].AppliedNs && j > i) {
			next = min(next, g.AppliedNs)
		}
	}
	return next
}

// window finds the longest stretch between two updates answered 200
// (their returns, edges, with the run's start and end) that overlaps the
// fault.
func (r *FaultResult) window(edges []int64) {
	last := r.AppliedNs
	if r.EndedNs != nil {
		last = *r.EndedNs
	}
	for k := 1; k < len(edges); k++ {
		from, to := edges[k-1], edges[k]
		if from <= last && to >= r.AppliedNs && time.Duration(to-from) > r.Window {
			r.Window, r.WindowFrom, r.WindowTo = time.Duration(to-from), time.Duration(from), time.Duration(to)
		}
	}
}

// answers counts the answers other than 200 and the updates of unknown
// outcome among the requests of h sent from the fault to until.
func (r *FaultResult) answers(h *History, until int64) {
	for _, o := range h.Ops {
		if o.Call < r.AppliedNs || o.Call >= until {
			continue
		}
		if o.Status != 200 {
			r.Answers[StatusName(o.Status)]++
		}
		switch {
		case o.Kind != Update || o.Known:
		case o.Refused:
			r.Refused++
		default:
			r.Unknown++
		}
	}
}

// lists counts the lists of h sent within the fault's window.
func (r *FaultResult) lists(h *History) {
	l := &r.ListFigures
	for _, o := range h.Ops {
		if o.Kind != List || o.Call < int64(r.WindowFrom) || o.Call > int64(r.WindowTo) {
			continue
		}
		l.Sent++
		if !o.OK {
			continue
		}
		l.Answered++
		if o.Stale {
			l.Stale++
			if o.Age != NoAge && (l.OldestAge == nil || o.Age > *l.OldestAge) {
				age := o.Age
				l.OldestAge = &age
			}
		}
	}
}

// Line says f in one line, for the text, JUnit and HTML reports: when the
// fault was applied and ended, what it did, and what it cost.
func (f *FaultResult) Line() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "fault %q: %s applied at %s", f.Fault.Fault, f.Kind, at(f.AppliedNs))
	if f.EndedNs != nil {
		fmt.Fprintf(&sb, ", ended at %s", at(*f.EndedNs))
	}
	if f.Note != "" {
		fmt.Fprintf(&sb, " (%s)", f.Note)
	}
	if f.ExitStatus != nil {
		fmt.Fprintf(&sb, " (exit status %d", *f.ExitStatus)
		if f.Output != "" {
			fmt.Fprintf(&sb, ", output: %s", strings.ReplaceAll(f.Output, "\n", " | "))
		}
		sb.WriteString(")")
	}
	fmt.Fprintf(&sb, "; window %s with no update answered 200 (%s to %s)", f.Window.Round(time.Millisecond), at(int64(f.WindowFrom)), at(int64(f.WindowTo)))
	if len(f.Answers) == 0 {
		sb.WriteString("; every answer 200")
	} else {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(f.Answers)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, f.Answers[k]))
		}
		fmt.Fprintf(&sb, "; answers other than 200: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&sb, "; %d updates of unknown outcome", f.Unknown)
	if f.Refused > 0 {
		fmt.Fprintf(&sb, ", %d refused", f.Refused)
	}
	l := f.ListFigures
	fmt.Fprintf(&sb, "; lists in the window: %d of %d answered 200, %d of them stale", l.Answered, l.Sent, l.Stale)
	if l.OldestAge != nil {
		fmt.Fprintf(&sb, " (oldest Age %d s)", *l.OldestAge)
	}
	return sb.String()
}
