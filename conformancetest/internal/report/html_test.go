package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestWriteHTMLEscapesEverything: markup in any field of a report, also
// in fields a target never controls, is shown as text; the page has one
// script (its own) and one style element.
func TestWriteHTMLEscapesEverything(t *testing.T) {
	const evil = `</pre></textarea><script>alert(1)</script><style>*{display:none}</style>"'&`
	rep := &Report{
		BaseURL: "http://127.0.0.1:1/v1?" + evil, Level: LevelContract, Started: time.Unix(0, 0),
		Duration: 1500 * time.Millisecond, Interrupted: true, Notes: []string{evil},
		Results: []Result{
			{Name: `E<v>"i l/` + evil, Outcome: Fail, Source: evil, Rule: evil, Failures: []Failure{
				{Problem: evil, Expected: evil, Curl: "curl " + evil, Exchange: &Exchange{
					Request:  RequestRecord{Method: "GET", URL: evil, Header: map[string]string{evil: evil}, Body: evil, BodySize: len(evil)},
					Response: &ResponseRecord{Status: 500, Header: map[string]string{"X": evil}, Body: evil, BodySize: len(evil)},
				}},
				{Problem: "no answer", Exchange: &Exchange{Request: RequestRecord{Method: "GET", URL: "u"}, Error: evil}},
				{Problem: "no single request"},
			}},
			{Name: "list/ok", Outcome: Skip, Source: "s", Rule: "r", Reason: evil},
		},
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for tag, want := range map[string]int{"<script": 1, "<style": 1, "<textarea": 0, "</textarea": 0} {
		if got := strings.Count(page, tag); got != want {
			t.Errorf("%d %s in the page, want %d", got, tag, want)
		}
	}
	if !strings.Contains(page, "&lt;/pre&gt;&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the markup is not shown escaped")
	}
	if !strings.Contains(page, "no answer: ") || !strings.Contains(page, "no single request") {
		t.Error("a failure without an answer or without a request is missing")
	}
	// The area of a check is a CSS class and a filter id: only [a-z0-9].
	if !strings.Contains(page, `id="area-evil"`) {
		t.Error("the area of a hostile check name is not reduced to [a-z0-9]")
	}
	if !strings.Contains(page, `data-verdict="fail"`) || !strings.Contains(page, "Interrupted:") {
		t.Error("verdict or interruption missing")
	}
	rep.Results = rep.Results[1:]
	buf.Reset()
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `data-verdict="interrupted"`) {
		t.Error("an interrupted run without failures is not called interrupted")
	}
}
