package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// hostileMarkup is what the hostile server puts in its answers: markup
// that would close the report's own elements and run script if the
// report rendered it instead of showing it as text.
const hostileMarkup = `</textarea></pre></code></details><script>window.__injected = "script"</script>` +
	`<img src="x" onerror="window.__injected = 'img'"><b id="injected">injected</b>`

// hostile is the real API whose error answers hold hostileMarkup: 404s as
// an HTML page, other errors in the Error body's code and message; every
// answer also carries it in a header.
func hostile(api *inventory.API, next http.Handler) http.Handler {
	return onResponse(func(_ *http.Request, rec *recorded) {
		rec.header.Set("X-Hostile", strings.ReplaceAll(hostileMarkup, "\n", " "))
		switch {
		case rec.status == http.StatusNotFound:
			rec.header.Set("Content-Type", "text/html; charset=utf-8")
			rec.body = []byte("<!DOCTYPE html><html><body><h1>Not found</h1>" + hostileMarkup + "</body></html>")
		case rec.status >= 400:
			rec.editError(func(m map[string]any) { m["code"] = hostileMarkup; m["message"] = hostileMarkup })
		}
	})(api, next)
}

// brokenCase returns the broken server of brokenCases with that name.
func brokenCaseNamed(t *testing.T, name string) brokenCase {
	t.Helper()
	i := slices.IndexFunc(brokenCases, func(b brokenCase) bool { return b.name == name })
	if i < 0 {
		t.Fatalf("no broken server %q", name)
	}
	return brokenCases[i]
}

// htmlReport runs every check against bc's server and writes the HTML
// report into dir/name.html; it returns the path and the report.
func htmlReport(t *testing.T, bc brokenCase, dir, name string) (string, *conformancetest.Report) {
	t.Helper()
	base, _ := serveBroken(t, bc)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(testKey)) {
		t.Errorf("the HTML report of %s holds the API key", name)
	}
	path := filepath.Join(dir, name+".html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, rep
}

// page is a parsed report with the queries the tests need.
type page struct {
	root *html.Node
}

func parsePage(t *testing.T, path string) *page {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return &page{root: root}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// all returns the elements under n, in document order, that match.
func all(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := range n.Descendants() {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	}
	return out
}

func byClass(tag atom.Atom, class string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.DataAtom == tag && hasClass(n, class) }
}

func byID(id string) func(*html.Node) bool {
	return func(n *html.Node) bool { v, ok := attr(n, "id"); return ok && v == id }
}

// text is the text content of n.
func text(n *html.Node) string {
	var sb strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			sb.WriteString(c.Data)
		}
	}
	return sb.String()
}

func (p *page) one(t *testing.T, what string, match func(*html.Node) bool) *html.Node {
	t.Helper()
	found := all(p.root, match)
	if len(found) != 1 {
		t.Fatalf("%d elements are %s, want 1", len(found), what)
	}
	return found[0]
}

// checks are the report's check elements, in document order.
func (p *page) checks() []*html.Node { return all(p.root, byClass(atom.Details, "check")) }

// summary checks the header of a report against rep.
func (p *page) summary(t *testing.T, rep *conformancetest.Report, verdict string) {
	t.Helper()
	h1 := p.one(t, "the verdict", byID("verdict"))
	if v, _ := attr(h1, "data-verdict"); v != verdict || !strings.HasPrefix(text(h1), strings.ToUpper(verdict)) {
		t.Errorf("verdict %q (%q), want %s", v, text(h1), verdict)
	}
	if got := text(p.one(t, "the target", byID("target"))); got != rep.BaseURL {
		t.Errorf("target %q, want %q", got, rep.BaseURL)
	}
	if got := text(p.one(t, "the level", byID("level"))); !strings.HasPrefix(got, string(rep.Level)) {
		t.Errorf("level %q", got)
	}
	if got := text(p.one(t, "the date", byID("date"))); got != rep.Started.UTC().Format("2006-01-02 15:04:05 UTC") {
		t.Errorf("date %q", got)
	}
	if got := text(p.one(t, "the duration", byID("duration"))); got == "" || got == "0s" {
		t.Errorf("duration %q", got)
	}
	passed, failed, skipped := rep.Counts()
	counts := p.one(t, "the counts", byID("counts"))
	for k, want := range map[string]int{"data-passed": passed, "data-failed": failed, "data-skipped": skipped} {
		if v, _ := attr(counts, k); v != itoa(want) {
			t.Errorf("%s %q, want %d", k, v, want)
		}
	}
	if len(p.checks()) != len(rep.Results) {
		t.Errorf("%d checks shown, %d in the report", len(p.checks()), len(rep.Results))
	}
	// One script, ours, allowed by its hash; nothing loaded from anywhere.
	scripts := all(p.root, func(n *html.Node) bool { return n.DataAtom == atom.Script })
	if len(scripts) != 1 {
		t.Fatalf("%d script elements, want 1 (the copy buttons)", len(scripts))
	}
	if _, ok := attr(scripts[0], "src"); ok {
		t.Error("the script is loaded from elsewhere")
	}
	sum := sha256.Sum256([]byte(text(scripts[0])))
	csp := p.one(t, "the policy", func(n *html.Node) bool { v, _ := attr(n, "http-equiv"); return v == "Content-Security-Policy" })
	if v, _ := attr(csp, "content"); !strings.Contains(v, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || !strings.Contains(v, "default-src 'none'") {
		t.Errorf("the policy does not allow exactly the page's script: %s", v)
	}
	for _, n := range all(p.root, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "href" && n.DataAtom == atom.Link || strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s=%q>: the report loads or runs something", n.Data, a.Key, a.Val)
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestHTMLReport: the structure of the report (not its bytes) for a
// passing target, a target with one rule broken, and a hostile target.
func TestHTMLReport(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	dir := t.TempDir()

	t.Run("passing target", func(t *testing.T) {
		path, rep := htmlReport(t, brokenCase{}, dir, "pass")
		p := parsePage(t, path)
		p.summary(t, rep, "pass")
		for _, n := range p.checks() {
			// The seed's list is below any compression threshold: the
			// gzip comparison is skipped (see TestGzipListDecodes).
			// The consistency check runs only when asked.
			name, _ := attr(n, "data-name")
			pass := hasClass(n, "status-pass") || (name == "gzip/decodes-to-identity" || name == "consistency/linearizable") && hasClass(n, "status-skip")
			if _, open := attr(n, "open"); open || !pass {
				t.Errorf("check %v: want passed and collapsed", n.Attr)
			}
		}
		if len(all(p.root, byID("failed"))) != 0 {
			t.Error("a passing report has a failed section")
		}
		// Every area has its filter, and each check is in one.
		areas := all(p.root, func(n *html.Node) bool { v, _ := attr(n, "name"); return n.DataAtom == atom.Input && v == "area" })
		var names []string
		for _, a := range areas {
			id, _ := attr(a, "id")
			names = append(names, strings.TrimPrefix(id, "area-"))
		}
		for _, want := range []string{"all", "list", "routes", "auth", "petid", "media", "body", "update", "headers", "errors", "openapi", "concurrency", "gzip", "etag"} {
			if !slices.Contains(names, want) {
				t.Errorf("no area filter %q (have %v)", want, names)
			}
		}
	})

	t.Run("a broken rule is shown first, open, with a curl line that reproduces it", func(t *testing.T) {
		bc := brokenCaseNamed(t, "drops Allow on 405")
		path, rep := htmlReport(t, bc, dir, "fail")
		p := parsePage(t, path)
		p.summary(t, rep, "fail")
		checks := p.checks()
		_, failed, _ := rep.Counts()
		if failed == 0 {
			t.Fatal("the broken server failed no check")
		}
		for i, n := range checks {
			_, open := attr(n, "open")
			if isFail := hasClass(n, "status-fail"); i < failed != isFail || open != isFail {
				t.Errorf("check %d %v: the failed checks come first, open, the others collapsed", i, n.Attr)
			}
		}
		first := checks[0]
		if v, _ := attr(first, "data-name"); v != bc.check {
			t.Fatalf("the first check is %s, want %s", v, bc.check)
		}
		body := text(first)
		res, _ := rep.Result(bc.check)
		for _, want := range []string{res.Rule, res.Source, bc.mention, "Authorization: Bearer $INVENTORY_API_KEY", "405 Method Not Allowed"} {
			if !strings.Contains(body, want) {
				t.Errorf("the failed check does not show %q", want)
			}
		}
		curls := all(first, byClass(atom.Pre, "curl-line"))
		if len(curls) == 0 {
			t.Fatal("no curl line")
		}
		for _, c := range curls {
			id, _ := attr(c, "id")
			button := all(first, func(n *html.Node) bool { v, _ := attr(n, "data-copy"); return n.DataAtom == atom.Button && v == id })
			if id == "" || len(button) != 1 {
				t.Errorf("curl line %q has no copy button", id)
			}
		}
		// The curl line, run as a user would with the key in the
		// environment, shows the broken rule: a 405 without Allow.
		line := text(curls[0])
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+testKey)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if !regexp.MustCompile(`(?m)^HTTP/1\.1 405 `).Match(out) || regexp.MustCompile(`(?mi)^Allow:`).Match(out) {
			t.Errorf("the curl line does not reproduce a 405 without Allow:\n%s\n%s", line, out)
		}
	})

	t.Run("a hostile target injects nothing", func(t *testing.T) {
		path, rep := htmlReport(t, brokenCase{wrap: hostile}, dir, "hostile")
		p := parsePage(t, path)
		p.summary(t, rep, "fail") // one script, no src, no on* attribute
		if n := all(p.root, byID("injected")); len(n) != 0 {
			t.Error("an element of the target's body became part of the page")
		}
		if n := all(p.root, func(n *html.Node) bool { return n.DataAtom == atom.Img || n.DataAtom == atom.Textarea }); len(n) != 0 {
			t.Errorf("%d img or textarea elements came from the target", len(n))
		}
		// The markup is there, as text, in the bodies and the headers.
		var bodies, heads int
		for _, n := range all(p.root, byClass(atom.Pre, "response-body")) {
			if strings.Contains(text(n), hostileMarkup) {
				bodies++
			}
		}
		for _, n := range all(p.root, byClass(atom.Pre, "response")) {
			if strings.Contains(text(n), "X-Hostile: "+hostileMarkup) {
				heads++
			}
		}
		if bodies == 0 || heads == 0 {
			t.Errorf("the target's markup is not shown as text (%d bodies, %d headers)", bodies, heads)
		}
		// Each check is still its own element: nothing closed one early.
		if len(p.checks()) != len(rep.Results) {
			t.Errorf("%d checks, want %d", len(p.checks()), len(rep.Results))
		}
	})
}

// TestCommandHTML: -html works with -junit and -json in one run, and a
// file that cannot be written is a clear error.
func TestCommandHTML(t *testing.T) {
	bin := buildCommand(t)
	base, _ := serveBroken(t, brokenCaseNamed(t, "drops Allow on 405"))
	dir := t.TempDir()
	htmlPath, junit := filepath.Join(dir, "report.html"), filepath.Join(dir, "junit.xml")
	r := runCmd(t, bin, "-base-url", base, "-run", "^routes/", "-html", htmlPath, "-junit", junit, "-json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	var rep conformancetest.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("-json output: %v", err)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("-junit: %v", err)
	}
	p := parsePage(t, htmlPath)
	p.summary(t, &rep, "fail")
	if v, _ := attr(p.checks()[0], "data-name"); v != "routes/list-other-methods" {
		t.Errorf("the first check of the page is %s", v)
	}

	r = runCmd(t, bin, "-base-url", base, "-run", "^list/ok$", "-html", filepath.Join(dir, "no-such-dir", "r.html"))
	if r.code != 2 || !strings.Contains(r.stderr, "-html: ") || !strings.Contains(r.stderr, "no-such-dir") {
		t.Errorf("an unwritable -html file: exit %d, want 2 and a message naming it\n%s", r.code, r.stderr)
	}
}

// TestRunHTMLReport: go test users get the same page from Run.
func TestRunHTMLReport(t *testing.T) {
	base, _ := serveBroken(t, brokenCase{})
	path := filepath.Join(t.TempDir(), "report.html")
	t.Run("suite", func(t *testing.T) {
		conformancetest.Run(t, conformancetest.Config{BaseURL: base, APIKey: testKey, Run: "^(list|auth)/", HTMLReport: path})
	})
	p := parsePage(t, path)
	checks := p.checks()
	if len(checks) == 0 {
		t.Fatal("the report shows no check")
	}
	for _, n := range checks {
		name, _ := attr(n, "data-name")
		if !strings.HasPrefix(name, "list/") && !strings.HasPrefix(name, "auth/") || !hasClass(n, "status-pass") {
			t.Errorf("check %s %v: want a passed list/ or auth/ check", name, n.Attr)
		}
	}
	if v, _ := attr(p.one(t, "the verdict", byID("verdict")), "data-verdict"); v != "pass" {
		t.Errorf("verdict %s", v)
	}
}
