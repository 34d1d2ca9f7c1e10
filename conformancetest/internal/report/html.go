package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The HTML report is one file with nothing external: its style and its
// only script (the copy buttons) are inline, and a Content-Security-Policy
// allows that script by its hash and nothing else. Every value from the
// target goes through html/template, so a body that holds markup or
// script is shown as text: the policy is a second line of defence, not
// the first.

//go:embed report.html.tmpl
var reportTemplate string

//go:embed report.css
var reportCSS string

//go:embed report.js
var reportJS string

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"requestHead":  requestHead,
	"responseHead": responseHead,
	"upper":        func(o Outcome) string { return strings.ToUpper(string(o)) },
	"ms": func(d time.Duration) string {
		if d < time.Millisecond {
			return d.String()
		}
		return d.Round(time.Millisecond).String()
	},
}).Parse(reportTemplate))

// reportCSP is the page's policy: inline style, the copy script by its
// hash, nothing else (no fetch, no image, no form, no frame).
var reportCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
	sha256Base64(reportJS) + "'; base-uri 'none'; form-action 'none'"

func sha256Base64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// htmlView is what the template reads.
type htmlView struct {
	R       *Report
	Verdict string // "pass", "fail" or "interrupted"
	Title   string
	Date    string
	Passed  int
	Failed  int
	Skipped int
	// Requests is the number of requests every check sent in all.
	Requests int
	// Areas are the groups of the checks, in run order.
	Areas   []string
	Fails   []htmlResult
	Others  []htmlResult // passed and skipped, in run order
	CSP     string
	CSS     template.CSS
	AreaCSS template.CSS
	JS      template.JS
}

type htmlResult struct {
	Result
	Area string
	// ID is the result's anchor, "check-3".
	ID string
}

// area is the group of a check name: "auth" for "auth/missing-header".
// It is used as a CSS class, so anything but [a-z0-9] is dropped.
func area(name string) string {
	group, _, _ := strings.Cut(name, "/")
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return r
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return -1
	}, group)
}

// WriteHTML writes the report as one self-contained HTML page, for a
// person who opens the CI artifact after a red build: the verdict, target,
// level, date, duration and counts at the top; the failed checks next, open,
// each with its rule, source, every problem, the request sent and the
// answer received (the key shown as $INVENTORY_API_KEY) and the curl
// command that reproduces it; then the passed and skipped checks,
// collapsed. A filter by status and by area (the check's group) works
// without JavaScript. The page loads nothing: no script, font or style
// from elsewhere, so it works offline, from an artifact store and printed.
//
// Every value that came from the target (bodies, headers, error texts) is
// escaped and shown as text, never rendered.
func (r *Report) WriteHTML(w io.Writer) error {
	v := htmlView{R: r, CSP: reportCSP, CSS: template.CSS(reportCSS), JS: template.JS(reportJS)}
	v.Passed, v.Failed, v.Skipped = r.Counts()
	switch {
	case v.Failed > 0:
		v.Verdict = "fail"
		v.Title = fmt.Sprintf("FAIL: %d of %d checks failed", v.Failed, len(r.Results))
	case r.Interrupted:
		v.Verdict = "interrupted"
		v.Title = "INTERRUPTED: not every check ran"
	default:
		v.Verdict = "pass"
		v.Title = fmt.Sprintf("PASS: no check failed (%d passed, %d skipped)", v.Passed, v.Skipped)
	}
	if !r.Started.IsZero() {
		v.Date = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for i, res := range r.Results {
		v.Requests += res.Requests
		hr := htmlResult{Result: res, Area: area(res.Name), ID: fmt.Sprintf("check-%d", i+1)}
		if !slices.Contains(v.Areas, hr.Area) {
			v.Areas = append(v.Areas, hr.Area)
		}
		if res.Outcome == Fail {
			v.Fails = append(v.Fails, hr)
		} else {
			v.Others = append(v.Others, hr)
		}
	}
	// One rule per area: while its radio button is checked, every check
	// of another area is hidden. Area names are [a-z0-9] only (see area).
	var css strings.Builder
	for _, a := range v.Areas {
		fmt.Fprintf(&css, "#area-%s:checked ~ main .check:not(.area-%s) { display: none; }\n", a, a)
		fmt.Fprintf(&css, "#area-%s:checked ~ nav label[for=area-%s] { background: #1a1a1a; color: #fff; border-color: #1a1a1a; }\n", a, a)
	}
	v.AreaCSS = template.CSS(css.String())
	return htmlReport.Execute(w, v)
}

// requestHead is a request's first line and headers, as sent.
func requestHead(r RequestRecord) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", r.Method, r.URL)
	for _, name := range SortedHeaderNames(r.Header) {
		fmt.Fprintf(&sb, "\n%s: %s", name, r.Header[name])
	}
	if r.Chunked {
		sb.WriteString("\nTransfer-Encoding: chunked")
	}
	if r.BodySize > 0 {
		fmt.Fprintf(&sb, "\n(body: %d bytes)", r.BodySize)
	}
	return sb.String()
}

// responseHead is an answer's status and headers, as received.
func responseHead(r *ResponseRecord) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d %s", r.Status, http.StatusText(r.Status))
	for _, name := range SortedHeaderNames(r.Header) {
		fmt.Fprintf(&sb, "\n%s: %s", name, r.Header[name])
	}
	if r.BodySize > 0 {
		fmt.Fprintf(&sb, "\n(body: %d bytes)", r.BodySize)
	}
	return sb.String()
}
