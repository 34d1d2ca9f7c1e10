package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as people read it: a table of every check
// (result, name, source, and the reason of a skip), the details of every
// failure with a curl command that reproduces it, and the summary line
// "N passed, N failed, N skipped". verbose adds each check's rule.
func (r *Report) WriteText(w io.Writer, verbose bool) error {
	ew := &errWriter{w: w}
	target := r.BaseURL
	if len(r.Replicas) > 0 {
		target += " (and its replicas " + strings.Join(r.Replicas, ", ") + ")"
	}
	fmt.Fprintf(ew, "inventory conformance: %s (level %s%s)\n\n", target, r.Level, map[bool]string{true: ", read-only"}[r.ReadOnly])
	for _, h := range r.Headlines {
		fmt.Fprintf(ew, "READ FIRST: %s\n\n", h)
	}
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tCHECK\tSOURCE")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.ToUpper(string(res.Outcome)), res.Name, res.Source)
		if verbose {
			fmt.Fprintf(tw, "\t  %s\n", res.Rule)
		}
	}
	tw.Flush()
	first := true
	for _, res := range r.Results {
		if res.Detail != "" {
			if first {
				fmt.Fprintln(ew)
				first = false
			}
			fmt.Fprintf(ew, "%s: %s\n", res.Name, res.Detail)
		}
		for _, line := range res.Consistency.Lines() {
			fmt.Fprintf(ew, "%s: %s\n", res.Name, line)
		}
	}
	first = true
	for _, res := range r.Results {
		if res.Outcome == Skip {
			if first {
				fmt.Fprintln(ew)
				first = false
			}
			fmt.Fprintf(ew, "--- SKIP: %s: %s\n", res.Name, res.Reason)
		}
	}
	for _, res := range r.Results {
		if res.Outcome != Fail {
			continue
		}
		fmt.Fprintf(ew, "\n--- FAIL: %s (%s)\n", res.Name, res.Source)
		WriteFailures(ew, res, "    ")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(ew, "\nnote: %s\n", n)
	}
	if r.Interrupted {
		fmt.Fprintf(ew, "\ninterrupted: the checks left were skipped; quantities changed so far were restored\n")
	}
	fmt.Fprintf(ew, "\n%s\n", r.Summary())
	return ew.err
}

// WriteFailures writes the failures of res, each with its evidence.
func WriteFailures(w io.Writer, res Result, indent string) {
	fmt.Fprintf(w, "%srule:     %s\n", indent, res.Rule)
	if res.Visualization != "" {
		fmt.Fprintf(w, "%spicture:  %s (open it in a browser)\n", indent, res.Visualization)
	}
	for i, f := range res.Failures {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%sproblem:  %s\n", indent, f.Problem)
		if f.Expected != "" {
			fmt.Fprintf(w, "%sexpected: %s\n", indent, f.Expected)
		}
		if ex := f.Exchange; ex != nil {
			fmt.Fprintf(w, "%ssent:     %s %s\n", indent, ex.Request.Method, ex.Request.URL)
			for _, name := range SortedHeaderNames(ex.Request.Header) {
				fmt.Fprintf(w, "%s          %s: %s\n", indent, name, ex.Request.Header[name])
			}
			if ex.Request.Chunked {
				fmt.Fprintf(w, "%s          Transfer-Encoding: chunked\n", indent)
			}
			if ex.Request.BodySize > 0 {
				fmt.Fprintf(w, "%s          %s\n", indent, ex.Request.Body)
			}
			if ex.Response != nil {
				fmt.Fprintf(w, "%sreceived: %d\n", indent, ex.Response.Status)
				for _, name := range SortedHeaderNames(ex.Response.Header) {
					fmt.Fprintf(w, "%s          %s: %s\n", indent, name, ex.Response.Header[name])
				}
				if ex.Response.BodySize > 0 {
					fmt.Fprintf(w, "%s          %s\n", indent, ex.Response.Body)
				}
			} else if ex.Error != "" {
				fmt.Fprintf(w, "%sreceived: no answer: %s\n", indent, ex.Error)
			}
		}
		if f.Curl != "" {
			fmt.Fprintf(w, "%scurl:     %s\n", indent, f.Curl)
		}
	}
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub
// actions that publish test reports).
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	// SystemOut holds the headlines, for a reader of the suite.
	SystemOut string `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as a JUnit XML document: one testsuite,
// one testcase per check (classname: the check's group, such as "auth"),
// failures with their details and curl commands, skips with their reason.
func (r *Report) WriteJUnit(w io.Writer) error {
	p, f, s := r.Counts()
	suite := junitSuite{
		Name: "inventory-conformance", Tests: p + f + s, Failures: f, Skipped: s,
		Time:      fmt.Sprintf("%.3f", r.Duration.Seconds()),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{Name: "baseURL", Value: r.BaseURL},
			{Name: "level", Value: string(r.Level)},
			{Name: "readOnly", Value: fmt.Sprint(r.ReadOnly)},
		},
	}
	// The headlines come first: as properties, which come before the
	// test cases, and as the suite's output.
	headlines := make([]junitProperty, 0, len(r.Headlines))
	for _, h := range r.Headlines {
		headlines = append(headlines, junitProperty{Name: "headline", Value: h})
	}
	suite.Properties = append(headlines, suite.Properties...)
	if len(r.Headlines) > 0 {
		suite.SystemOut = "READ FIRST: " + strings.Join(r.Headlines, "\nREAD FIRST: ")
	}
	for _, res := range r.Results {
		group, _, _ := strings.Cut(res.Name, "/")
		tc := junitCase{
			Name: res.Name, Classname: "inventory-conformance." + group,
			Time:      fmt.Sprintf("%.3f", res.Duration.Seconds()),
			SystemOut: res.Source + ": " + res.Rule,
		}
		if res.Detail != "" {
			tc.SystemOut += "\n" + res.Detail
		}
		for _, line := range res.Consistency.Lines() {
			tc.SystemOut += "\n" + line
		}
		switch res.Outcome {
		case Fail:
			var sb strings.Builder
			WriteFailures(&sb, res, "")
			tc.Failure = &junitMessage{Message: res.Failures[0].Problem, Text: sb.String()}
		case Skip:
			tc.Skipped = &junitMessage{Message: res.Reason}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
