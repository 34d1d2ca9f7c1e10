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
