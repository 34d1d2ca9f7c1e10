package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestConsistencyInEveryReport: the staleness bound, the observed
// staleness and the history file show in the text, HTML and JSON
// reports; a strict deployment's 0 is written, not left out.
func TestConsistencyInEveryReport(t *testing.T) {
	zero := time.Duration(0)
	rep := &Report{BaseURL: "http://a/v1", Level: LevelContract, Results: []Result{{
		Name: "consistency/linearizable", Outcome: Pass, Source: "s", Rule: "r", Detail: "d",
		Consistency: &ConsistencyResult{Staleness: 50 * time.Millisecond, ObservedStaleness: &zero, Observed: "0 (strict)", History: "h.json"},
	}}}
	var text, page bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), page.String()} {
		for _, want := range []string{"observed staleness: 0 (strict)", "judged against a staleness bound of 50ms", "history saved to h.json"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q missing from:\n%s", want, out)
			}
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"observedStalenessNs":0,`) || !strings.Contains(string(b), `"stalenessNs":50000000`) {
		t.Errorf("JSON: %s", b)
	}
}

// TestConsistencyFailureKinds: a consistency failure's kind, count,
// stale lists by base URL and operations are in the JSON report, and its
// words in the text report.
func TestConsistencyFailureKinds(t *testing.T) {
	f := Failure{Problem: "the list by client 1 … missed the update", Expected: "every request …", Kind: "missed-update", Count: 3,
		ByBaseURL:  map[string]int{"http://a/v1": 0, "http://b/v1": 3},
		Operations: []Operation{{Index: 7, Role: "list", Kind: "list", Client: 1, BaseURL: "http://b/v1", CallNs: 10, ReturnNs: 20}}}
	rep := &Report{BaseURL: "http://a/v1", Level: LevelContract, Results: []Result{{Name: "consistency/linearizable", Outcome: Fail, Failures: []Failure{f}}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Results[0].Failures[0]
	if got.Kind != f.Kind || got.Count != 3 || got.ByBaseURL["http://b/v1"] != 3 || len(got.Operations) != 1 || got.Operations[0] != f.Operations[0] {
		t.Errorf("JSON round trip: %+v", got)
	}
	if !strings.Contains(string(b), `"kind":"missed-update"`) {
		t.Errorf("JSON: %s", b)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), f.Problem) {
		t.Errorf("the text report lacks the words:\n%s", text.String())
	}
}
