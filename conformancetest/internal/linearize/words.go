package linearize

import (
	"fmt"
	"strings"
	"time"
)

// The words of a verdict: Words is the one place that turns a failure's
// data into sentences; nothing else of the package says what broke.

// Words says in words what failure f of a verdict on h found, and what
// the promise expected there.
func Words(h *History, f Failure) (problem, expected string) {
	d := int64(f.Bound)
	w := words{h: h, f: &f}
	switch f.Kind {
	case NoLists:
		problem, expected = w.noLists(), "lists answered 200 through every base URL of the deployment"
	case MissedUpdate, OlderThanBound:
		problem = w.missed(d)
	case WriteTakenBack:
		problem = w.takenBack()
	case MixedInstants:
		problem = w.mixed()
	case FutureWrite:
		problem = fmt.Sprintf("%s showed pet %d at quantity %d, written by %s: a write sent after the list was answered",
			w.op(RoleList), w.pet(), w.shown(), w.op(RoleWrittenBy))
	case NeverWritten:
		problem = fmt.Sprintf("%s showed pet %d at quantity %d, a write that was never made (no update of the run sent it to pet %d, and it was not the quantity before)",
			w.op(RoleList), w.pet(), w.shown(), w.pet())
	case MissingPet:
		problem = fmt.Sprintf("%s lacked pet %d, which the run only updated (entries are never removed through the API)", w.op(RoleList), w.pet())
	case AnotherWrite:
		problem = w.anotherWrite()
	case Unorderable:
		problem = w.unorderable()
	case CheckerBug:
		problem = "conformancetest bug: porcupine accepted a history that the direct rules reject; the rules' findings above stand"
	case ThinHistory:
		problem, expected = w.thin()
	case UnexpectedStale:
		problem = fmt.Sprintf("%s was marked stale: the deployment answered it from a state its store confirmed earlier, but the run was not told it may (-consistency-stale-if-error), so it is judged as any list", w.op(RoleList))
		expected = "every list answered from the current state, or a deployment that declares its stale-if-error bound judged with it (-consistency-stale-if-error D; CONTRACT.md §Consistency)"
	case StaleBeyondBound:
		problem = w.staleBeyond()
	case NotRecovered:
		problem, expected = w.notRecovered()
	default:
		problem = fmt.Sprintf("a failure of kind %q", f.Kind)
	}
	if f.Count > 1 {
		problem = fmt.Sprintf("%d such requests; the first: %s", f.Count, problem)
	}
	if f.ByBase != nil {
		var by []string
		for b, n := range f.ByBase {
			by = append(by, fmt.Sprintf("%s: %d", h.Bases[b], n))
		}
		problem += "; stale lists by base URL: " + strings.Join(by, ", ")
	}
	problem += w.afterFault()
	switch {
	case expected != "":
	case w.staleList():
		expected = staleExpected(f)
	default:
		expected = linearizable(d)
	}
	return problem, expected
}

// afterFault says which fault of the schedule the failure followed, ""
// for a run without faults or a failure that names no request.
func (w words) afterFault() string {
	switch f := w.f; {
	case f.Kind == NotRecovered: // its words name the fault
	case f.Fault >= 0 && f.Fault < len(w.h.Faults):
		ft := w.h.Faults[f.Fault]
		return fmt.Sprintf(" (after the fault %q, applied at %s)", ft.Fault, at(ft.AppliedNs))
	case len(w.h.Faults) > 0 && len(f.Ops) > 0:
		return " (before any fault of the schedule)"
	}
	return ""
}

// staleList reports whether the failure is of a list marked stale.
func (w words) staleList() bool {
	o := w.req(RoleList)
	return o != nil && o.Kind == List && o.Stale
}

func (w words) thin() (problem, expected string) {
	f := w.f
	problem = fmt.Sprintf("the history holds %d updates answered 200, fewer than the minimum of %d (-consistency-min-updates): "+
		"a verdict resting on so few writes says little, so it is no pass. %d clients ran for %v over %d base URLs; "+
		"run longer (-consistency), with more clients (-consistency-clients), or find what kept the updates from being answered 200 (the faults of the schedule, a slow path to the deployment)",
		f.Updates, f.MinUpdates, w.h.Clients, w.h.Duration, len(w.h.Bases))
	return problem, fmt.Sprintf("at least %d updates answered 200 in the run, so that its verdict rests on enough writes", f.MinUpdates)
}

// staleBy says what the list's bound is made of: the stale-if-error
// bound, or its Age plus one second when less.
func (w words) staleBy() string {
	o, f := w.req(RoleList), w.f
	switch {
	case o.Age < 0:
		return fmt.Sprintf("the stale-if-error bound of %v (it gave no Age)", f.StaleIfError)
	case f.Bound < f.StaleIfError:
		return fmt.Sprintf("its Age of %d s plus 1 s, less than the stale-if-error bound of %v", o.Age, f.StaleIfError)
	}
	return fmt.Sprintf("the stale-if-error bound of %v (its Age: %d s)", f.StaleIfError, o.Age)
}

func (w words) staleBeyond() string {
	l, missed := w.req(RoleList), w.req(RoleMissed)
	since := missed.Return
	how := fmt.Sprintf("%s had replaced by the time it was answered", w.op(RoleMissed))
	if sb := w.req(RoleShownBy); sb != nil {
		since = sb.Return
		how = fmt.Sprintf("%s had shown replaced by %s", w.op(RoleShownBy), w.op(RoleMissed))
	}
	return fmt.Sprintf("%s showed pet %d at quantity %d (%s), which %s: a state at least %s older than the list's call, more than its bound of %s, %s",
		w.op(RoleList), w.pet(), w.shown(), w.was(), how, msOf(l.Call-since), msOf(int64(w.f.Bound)), w.staleBy())
}

// staleExpected is what the promise expects of a list marked stale.
func staleExpected(f Failure) string {
	return fmt.Sprintf("a list marked stale to show the inventory as it was at one instant at most %s before the list was sent (the lesser of the stale-if-error bound, %v, and its Age plus 1 s): every pet as one write left it, no write that was never made (CONTRACT.md §Consistency)",
		msOf(int64(f.Bound)), f.StaleIfError)
}

// words are the parts of a failure's sentences.
type words struct {
	h *History
	f *Failure
}

// req is the request of role r (nil when none is).
func (w words) req(r Role) *Op {
	if i, ok := w.f.Op(r); ok {
		return &w.h.Ops[i]
	}
	return nil
}

// op names the request of role r.
func (w words) op(r Role) string { return describeOp(w.h, w.req(r)) }

func (w words) pet() int64 { return w.h.Pets[w.f.Pet].ID }

// shown is the quantity the failure's list showed of its pet.
func (w words) shown() int64 { return w.req(RoleList).Seen[w.f.Pet] }

// was says where the value the list showed came from.
func (w words) was() string {
	if w.req(RoleWrittenBy) == nil {
		return "the quantity before the run"
	}
	return "written by " + w.op(RoleWrittenBy)
}

func (w words) noLists() string {
	why := ""
	if o := w.req(RoleFailedList); o != nil {
		why = o.Answer
	}
	return fmt.Sprintf("no list through %s was answered in %v (the first: %s): its requests tell nothing, so the deployment cannot be judged consistent through it",
		w.h.Bases[w.f.Base], w.h.Duration, why)
}

func (w words) missed(d int64) string {
	l, missed := w.req(RoleList), w.req(RoleMissed)
	more := ""
	if d > 0 {
		more = fmt.Sprintf(": %s more than the staleness bound of %s", msOf(l.Call-d-missed.Return), msOf(d))
	}
	return fmt.Sprintf("%s showed pet %d at quantity %d (%s) and so missed %s, answered %s before the list was sent%s",
		w.op(RoleList), w.pet(), w.shown(), w.was(), w.op(RoleMissed), msOf(l.Call-missed.Return), more)
}

func (w words) takenBack() string {
	l, earlier, back := w.req(RoleList), w.req(RoleShownBy), w.req(RoleTakenBack)
	return fmt.Sprintf("%s showed pet %d at quantity %d (%s), although %s, answered %s before this list was sent, had shown pet %d at %d, written by %s, after that: a write taken back (once a list shows a write, every list sent after it was answered shows that write or a later one)",
		w.op(RoleList), w.pet(), w.shown(), w.was(), w.op(RoleShownBy), msOf(l.Call-earlier.Return), w.pet(), back.Qty, w.op(RoleTakenBack))
}

func (w words) mixed() string {
	newest := w.req(RoleNewest)
	replaced := fmt.Sprintf("%s, answered before that write was sent, had replaced it", w.op(RoleMissed))
	if w.req(RoleShownBy) != nil {
		replaced = fmt.Sprintf("%s, answered before that write was sent, had shown it replaced by %s", w.op(RoleShownBy), w.op(RoleMissed))
	}
	return fmt.Sprintf("%s mixed two instants: it showed pet %d at %d, written by %s, and pet %d at %d although %s",
		w.op(RoleList), w.h.Pets[newest.Slot].ID, newest.Qty, w.op(RoleNewest), w.pet(), w.shown(), replaced)
}

func (w words) anotherWrite() string {
	o := w.req(RoleUpdate)
	made := "a quantity no write of the run sent"
	if w.req(RoleWrittenBy) != nil {
		made = "the write of " + w.op(RoleWrittenBy)
	} else if o.Got == w.h.Pets[o.Slot].Qty {
		made = "the quantity before the run"
	}
	return fmt.Sprintf("%s carried quantity %d, not its own write: %s", w.op(RoleUpdate), o.Got, made)
}

func (w words) unorderable() string {
	f := w.f
	where := fmt.Sprintf("porcupine found none in %d of %d pieces of the history, the first from %s to %s", f.Pieces, f.OfPieces, at(f.Span[0]), at(f.Span[1]))
	if w.req(RoleStuck) != nil {
		where = "no order survives " + w.op(RoleStuck)
	}
	why := "see the picture (-consistency-html) for how far the best order got"
	if f.From != nil {
		why = w.smallest()
	}
	return fmt.Sprintf("no order of the requests, each at an instant between its call and its return, could have been produced by one copy of the inventory (%s), "+
		"though no single list or update breaks a rule on its own: %s", where, why)
}

// smallest says which requests of the smallest set found cannot be
// ordered, and from which state.
func (w words) smallest() string {
	var parts []string
	for _, x := range w.f.Ops {
		if x.Role == RoleMember {
			parts = append(parts, describeOp(w.h, &w.h.Ops[x.Index]))
		}
	}
	const most = 12
	more := ""
	if len(parts) > most {
		more = fmt.Sprintf("; and %d more", len(parts)-most)
		parts = parts[:most]
	}
	whose := "several pets together"
	if w.f.Pet >= 0 {
		whose = fmt.Sprintf("pet %d", w.pet())
	}
	var from cstate
	copy(from[:], w.f.From)
	return fmt.Sprintf("the smallest set of requests found that cannot be ordered, of %s, from the state %s: %s%s", whose, describeState(w.h, from), strings.Join(parts, "; "), more)
}

// alwaysWords names the rules that no staleness bound makes pass, for
// the words of the observed staleness.
var alwaysWords = map[FailureKind]string{
	MixedInstants: "a list mixed two instants",
	FutureWrite:   "a list showed a write sent after it was answered",
	NeverWritten:  "a list showed a write that was never made",
	MissingPet:    "a list lacked a pet",
	AnotherWrite:  "an update's answer carried another write",
}

// linearizable is what the promise expects of every request, for a
// staleness bound d.
func linearizable(d int64) string {
	if d == 0 {
		return "every request to appear to take effect at one instant between its call and its return, on one copy of the inventory (CONTRACT.md §Consistency)"
	}
	return fmt.Sprintf("every request to appear to take effect at one instant between its call and its return, a list's call moved %s earlier (the staleness bound), on one copy of the inventory (CONTRACT.md §Consistency)", msOf(d))
}

// describeOp names a request for the words of a failure.
func describeOp(h *History, o *Op) string {
	if o.Kind == List {
		stale := ""
		switch {
		case o.Stale && o.Age >= 0:
			stale = fmt.Sprintf(" (marked stale, Age %d s)", o.Age)
		case o.Stale:
			stale = " (marked stale, without an Age)"
		}
		return fmt.Sprintf("the list by client %d through %s, sent at %s and answered at %s%s", o.Client, h.Bases[o.Base], at(o.Call), at(o.Return), stale)
	}
	return fmt.Sprintf("the update of pet %d to %d by client %d through %s, sent at %s and answered %s at %s",
		h.Pets[o.Slot].ID, o.Qty, o.Client, h.Bases[o.Base], at(o.Call), o.Answer, at(o.Return))
}

// describeState names the quantities of the pets in play.
func describeState(h *History, st cstate) string {
	var parts []string
	for i, p := range h.Pets {
		if st[i] == -1 {
			parts = append(parts, fmt.Sprintf("%d: missing", p.ID))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d: %d", p.ID, st[i]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func petNames(h *History) string {
	var ids []string
	for _, p := range h.Pets {
		ids = append(ids, fmt.Sprint(p.ID))
	}
	return strings.Join(ids, ", ")
}

// at formats a time of the run: "1.234s".
func at(ns int64) string {
	return fmt.Sprintf("%.3fs", time.Duration(ns).Seconds())
}

// msOf formats a duration in milliseconds: "87 ms", "2.4 ms", "0.03 ms".
func msOf(ns int64) string {
	d := time.Duration(ns)
	if d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
