package linearize

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// TestFaultResults: each fault's figures follow from the history: the
// longest window around it with no update answered 200, the answers
// other than 200 by status and the updates of unknown outcome (refusals
// apart) from it to the next fault, and the lists of its window: sent,
// answered, marked stale, and the oldest Age.
func TestFaultResults(t *testing.T) {
	h := fileHistory() // the outage from 2 s, stale lists at 4 s (Age 1) and 5 s (no Age)
	tooMany := update(1, 1, 9500*ms, 9501*ms, 1, 1000007, false)
	tooMany.Status, tooMany.Answer = 429, `429 (code "too_many_requests")`
	failed := Op{Client: 3, Base: 0, Kind: List, Call: 3 * sec, Return: 3*sec + 1*ms, Status: 503, Age: NoAge, Answer: "503"}
	h.Ops = append(h.Ops, tooMany)
	h.Ops = append(h.Ops[:6], append([]Op{failed}, h.Ops[6:]...)...)
	ended := 7 * sec
	h.Faults = []Fault{
		{Fault: "2s redis-pause 5s", Kind: "redis-pause", OffsetNs: 2 * sec, AppliedNs: 2 * sec, EndedNs: &ended},
		{Fault: "9s redis-kill-clients", Kind: "redis-kill-clients", OffsetNs: 9 * sec, AppliedNs: 9*sec + 2*ms},
	}
	got := FaultResults(h)
	if len(got) != 2 {
		t.Fatalf("%d results", len(got))
	}
	first, second := got[0], got[1]
	// No update answered 200 after the one answered at 1.001 s: the
	// window runs to the end of the run (10 s), for both faults.
	if first.Fault.Fault != h.Faults[0].Fault || first.WindowFrom != 1001*time.Millisecond || first.WindowTo != 10*time.Second || first.Window != 8999*time.Millisecond {
		t.Errorf("the first fault's window: %v from %v to %v", first.Window, first.WindowFrom, first.WindowTo)
	}
	// From 2 s to 9.002 s: two updates 503, one refused 400, one cut
	// off, one list 503.
	if want := map[string]int{"503": 3, "400": 1, "no answer": 1}; !maps.Equal(first.Answers, want) || first.Unknown != 3 || first.Refused != 1 {
		t.Errorf("the first fault's answers %v, %d unknown, %d refused", first.Answers, first.Unknown, first.Refused)
	}
	// From 9.002 s: the update answered 429 (the list at 9 s was sent
	// before the fault).
	if want := map[string]int{"429": 1}; !maps.Equal(second.Answers, want) || second.Unknown != 1 || second.Refused != 0 {
		t.Errorf("the second fault's answers %v, %d unknown, %d refused", second.Answers, second.Unknown, second.Refused)
	}
	// The lists from 1.001 s on: at 1.002 s and 9 s strict, 3 s failed,
	// 4 s and 5 s stale (Ages 1 and none).
	for _, l := range []ListFigures{first.ListFigures, second.ListFigures} {
		if l.Sent != 5 || l.Answered != 4 || l.Stale != 2 || l.OldestAge == nil || *l.OldestAge != 1 {
			t.Errorf("lists %+v, want 5 sent, 4 answered, 2 stale, the oldest Age 1", l)
		}
	}
	for _, want := range []string{"answers other than 200: 400 ×1, 503 ×3, no answer ×1", "3 updates of unknown outcome, 1 refused", "lists in the window: 4 of 5 answered 200, 2 of them stale (oldest Age 1 s)"} {
		if !strings.Contains(first.Line(), want) {
			t.Errorf("%q missing from the line: %s", want, first.Line())
		}
	}
	if FaultResults(wordsHistory()) != nil {
		t.Error("a history without faults has fault results")
	}
}

// TestFaultResultsNoStaleList: a fault whose window holds no list marked
// stale has no oldest Age, and one whose window holds none has no list.
func TestFaultResultsNoStaleList(t *testing.T) {
	h := wordsHistory(
		update(0, 0, 0, 1*ms, 0, 1000000, true),
		list(1, 1, 2*ms, 3*ms, 1000000, 0, 12),
		update(0, 0, 10*ms, 11*ms, 0, 1000001, true),
	)
	h.Faults = []Fault{{Fault: "5ms redis-kill-clients", AppliedNs: 5 * ms}, {Fault: "20ms redis-kill-clients", AppliedNs: 20 * ms}}
	got := FaultResults(h)
	if l := got[0].ListFigures; l.Sent != 1 || l.Answered != 1 || l.Stale != 0 || l.OldestAge != nil {
		t.Errorf("the first fault's lists: %+v (window %v to %v)", l, got[0].WindowFrom, got[0].WindowTo)
	}
	if l := got[1].ListFigures; l.Sent != 0 || l.OldestAge != nil || len(got[1].Answers) != 0 || !strings.Contains(got[1].Line(), "every answer 200") {
		t.Errorf("the second fault: %+v", got[1])
	}
	for status, want := range map[int]string{503: "503", StatusNone: "no answer", StatusUnrecorded: "not recorded"} {
		if StatusName(status) != want {
			t.Errorf("StatusName(%d) = %q", status, StatusName(status))
		}
	}
}
