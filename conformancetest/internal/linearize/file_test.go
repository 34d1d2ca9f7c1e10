package linearize

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestReadFormat1: a history saved before statuses were kept (format 1,
// testdata/format1.json, written by the suite of that version: a fault,
// updates answered 503, refused and unanswered, a list that failed, a
// list that missed an update) still reads, its requests answered ok as
// 200 and the others as not recorded, and judges again to the verdict it
// saved: the same outcome, kind and words, to which the words now add
// the fault the failure followed; the fault figures count the answers
// it did not keep as not recorded.
func TestReadFormat1(t *testing.T) {
	saved := readFile(t, filepath.Join("testdata", "format1.json"))
	h := saved.History
	for i, o := range h.Ops {
		answered := o.Kind == List && o.OK || o.Kind == Update && o.Known
		if answered && o.Status != 200 || !answered && o.Status != StatusUnrecorded || o.Refused || o.Stale {
			t.Errorf("request %d: status %d, refused %v, stale %v", i+1, o.Status, o.Refused, o.Stale)
		}
	}
	if saved.MinUpdates != 0 || saved.StaleIfError != 0 || saved.Verdict == nil {
		t.Fatalf("options %d %v, verdict %v", saved.MinUpdates, saved.StaleIfError, saved.Verdict)
	}
	v := Judge(h, Options{Staleness: saved.Staleness, MinUpdates: saved.MinUpdates, StaleIfError: saved.StaleIfError})
	was := saved.Verdict
	if v.Outcome() != was.Outcome() || len(v.Failures) != len(was.Failures) || len(v.Failures) != 1 {
		t.Fatalf("judged again: %s %v, saved: %s %v", v.Outcome(), kinds(v), was.Outcome(), kinds(*was))
	}
	now, then := v.Failures[0], was.Failures[0]
	if now.Kind != then.Kind || now.Expected != then.Expected || now.Problem != then.Problem+` (after the fault "150ms redis-pause 100ms", applied at 0.150s)` {
		t.Errorf("judged again:\n%s %s\n%s\nsaved:\n%s %s\n%s", now.Kind, now.Problem, now.Expected, then.Kind, then.Problem, then.Expected)
	}
	if then.Fault != -1 || now.Fault != 0 {
		t.Errorf("the fault followed: saved %d, judged again %d", then.Fault, now.Fault)
	}
	fr := FaultResults(h)
	if len(fr) != 1 || fr[0].Answers["not recorded"] != 4 || len(fr[0].Answers) != 1 || fr[0].Unknown != 3 || fr[0].Refused != 0 {
		t.Errorf("fault figures of a format-1 history: %+v", fr)
	}
}

func readFile(t *testing.T, path string) *Saved {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

// fileHistory is a history with every member format 2 added: statuses,
// a refusal, lists marked stale with an Age and without, a fault, and a
// failure that followed it.
func fileHistory() *History {
	h := outageHistory(
		staleList(2, 0, 4*sec, 4*sec+1*ms, 1, 1000000, 0, 12), // older than its Age says
		staleList(3, 1, 5*sec, 5*sec+1*ms, NoAge, 1000001, 0, 12),
	)
	refused := update(3, 1, 6*sec, 6*sec+1*ms, 2, 1000005, false)
	refused.Status, refused.Refused, refused.Answer = 400, true, `400 (code "bad_request")`
	cut := update(2, 0, 7*sec, 7*sec+1*ms, 2, 1000006, false)
	cut.Status, cut.Answer = StatusNone, "no answer (EOF)"
	h.Ops = append(h.Ops[:len(h.Ops)-1], refused, cut, h.Ops[len(h.Ops)-1])
	return h
}

// TestHistoryRoundTrip: a history written in format 2 reads back with
// every request as it was (statuses, refusals, stale marks and Ages),
// the options it was judged with, and its verdict's failures with their
// kinds and the fault each followed.
func TestHistoryRoundTrip(t *testing.T) {
	h := fileHistory()
	opt := Options{Staleness: 3 * time.Millisecond, MinUpdates: 20, StaleIfError: 30 * time.Second}
	v := Judge(h, opt)
	if got := kinds(v); !reflect.DeepEqual(got, []FailureKind{StaleBeyondBound, ThinHistory}) {
		t.Fatalf("%v", got)
	}
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h, time.Now(), opt, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"format": "`+Format+`"`) || !strings.Contains(buf.String(), `"stale":true,"ageSeconds":1`) {
		t.Fatalf("not format 2:\n%s", buf.String())
	}
	saved, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(saved.History.Ops, h.Ops) || !reflect.DeepEqual(saved.History.Faults, h.Faults) {
		t.Errorf("the requests read back differ:\n%+v\n%+v", saved.History.Ops, h.Ops)
	}
	if saved.Staleness != opt.Staleness || saved.MinUpdates != opt.MinUpdates || saved.StaleIfError != opt.StaleIfError {
		t.Errorf("options read back: %v %d %v", saved.Staleness, saved.MinUpdates, saved.StaleIfError)
	}
	for i, f := range saved.Verdict.Failures {
		g := v.Failures[i]
		if f.Kind != g.Kind || f.Fault != g.Fault || f.Problem != g.Problem || f.Expected != g.Expected {
			t.Errorf("failure %d read back: %s %d, want %s %d", i, f.Kind, f.Fault, g.Kind, g.Fault)
		}
	}
	if saved.Verdict.Failures[0].Fault != 0 || saved.Verdict.Failures[1].Fault != -1 {
		t.Errorf("faults followed: %d %d", saved.Verdict.Failures[0].Fault, saved.Verdict.Failures[1].Fault)
	}
	again := Judge(saved.History, Options{Staleness: saved.Staleness, MinUpdates: saved.MinUpdates, StaleIfError: saved.StaleIfError})
	if !reflect.DeepEqual(kinds(again), kinds(v)) || again.Failures[0].Problem != v.Failures[0].Problem {
		t.Errorf("judged again: %v", kinds(again))
	}
}

// TestReadHistoryRefuses: a file whose members contradict each other is
// refused with an error that names what is wrong.
func TestReadHistoryRefuses(t *testing.T) {
	h := fileHistory()
	v := Judge(h, Options{StaleIfError: 30 * time.Second})
	var buf bytes.Buffer
	if err := WriteHistory(&buf, h, time.Now(), Options{StaleIfError: 30 * time.Second}, &v); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	v1, err := os.ReadFile(filepath.Join("testdata", "format1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, from, to, want string
	}{
		{"another format", good, Format, "inventory-conformance consistency history 9", "want \"" + Format + "\""},
		{"no status", good, `"status":200,`, ``, "without its status"},
		{"ok with 503", good, `"outcome":"ok","seen":[1000000,0,12],"status":200`, `"outcome":"ok","seen":[1000000,0,12],"status":503`, "answered ok with the status 503"},
		{"not a status", good, `"status":503`, `"status":42`, "status 42 is not an HTTP status"},
		{"refused with 503", good, `"status":400,"refused":true`, `"status":503,"refused":true`, "refused with the status 503"},
		{"a list refused", good, `"seen":[1000001,0,12],"status":200}`, `"seen":[1000001,0,12],"status":200,"refused":true}`, "a list marked refused"},
		{"an update stale", good, `"status":400,"refused":true`, `"status":400,"stale":true`, "an update marked stale"},
		{"an Age without the mark", good, `"stale":true,"ageSeconds":1`, `"ageSeconds":1`, "an Age on a list not marked stale"},
		{"a negative Age", good, `"ageSeconds":1`, `"ageSeconds":-2`, "a negative one"},
		{"the fault followed", good, `"afterFault": 0`, `"afterFault": 3`, "it follows fault 4, not one of the 1"},
		{"a negative minimum", good, `"staleIfErrorNs": 30000000000`, `"staleIfErrorNs": -1`, "is negative"},
		{"format 1 with a status", string(v1), `"got":1000000}`, `"got":1000000,"status":200}`, "which did not keep them"},
		{"format 1 with a bound", string(v1), `"stalenessNs": 0,`, `"stalenessNs": 0, "minUpdates": 3,`, "which that format did not have"},
	} {
		if !strings.Contains(tc.file, tc.from) {
			t.Fatalf("%s: %q is not in the file", tc.name, tc.from)
		}
		_, err := ReadHistory(strings.NewReader(strings.Replace(tc.file, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
