package suite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// TestWrongKeyHeadline: a refused key is the first thing every output
// says, with what failed and what was skipped because of it.
func TestWrongKeyHeadline(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: base, APIKey: "not-the-key-0123456789", Run: `^(list|update|concurrency)/`})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Headlines) == 0 || !strings.HasPrefix(rep.Headlines[0], "The API key was refused: GET "+base+`/inventory with it answered 401 (code "unauthorized")`) {
		t.Fatalf("headlines %q", rep.Headlines)
	}
	_, failed, skipped := rep.Counts()
	if failed == 0 || skipped == 0 {
		t.Fatalf("%s: want failures and skips from a refused key", rep.Summary())
	}
	for _, res := range rep.Results {
		if !strings.Contains(rep.Headlines[0], res.Name) {
			t.Errorf("the headline does not name %s (%s)", res.Name, res.Outcome)
		}
		if res.Outcome == conformancetest.Skip && !strings.HasPrefix(res.Reason, "the API key was refused") {
			t.Errorf("%s skipped for %q, without saying the key was refused", res.Name, res.Reason)
		}
	}
	if !strings.Contains(rep.Headlines[0], "INVENTORY_API_KEYS") {
		t.Errorf("the headline does not say which variables hold the key: %s", rep.Headlines[0])
	}

	var text, junit, html bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[2], "READ FIRST: The API key was refused") {
		t.Errorf("the text does not start with the refused key:\n%s", text.String())
	}
	js, _ := json.Marshal(rep)
	if i, j := bytes.Index(js, []byte(`"headlines"`)), bytes.Index(js, []byte(`"results"`)); i < 0 || i > j {
		t.Errorf("the JSON does not hold the headlines before the results:\n%s", js)
	}
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(junit.String(), `<property name="headline" value="The API key was refused`), strings.Index(junit.String(), "<testcase"); i < 0 || i > j {
		t.Errorf("the JUnit report does not hold the headline before the test cases:\n%s", junit.String())
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(html.String(), `<p class="headline"><b>Read first:</b> The API key was refused`), strings.Index(html.String(), `id="counts"`); i < 0 || i > j {
		t.Errorf("the HTML report does not show the refused key at the top")
	}
}

// misconfiguredProxy stands in front of the API as a proxy that passes
// on only GET and PATCH of the exact routes and answers everything else
// itself, as nginx does with its default pages.
func misconfiguredProxy(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "nginx/1.22.1")
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodPatch && r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodDelete && r.Method != http.MethodOptions && r.Method != http.MethodHead:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusMethodNotAllowed)
			w.Write([]byte("<html><head><title>405 Not Allowed</title></head><body><center><h1>405 Not Allowed</h1></center><hr><center>nginx/1.22.1</center></body></html>\n"))
		case strings.HasSuffix(r.URL.Path, "/"):
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte("404 page not found\n"))
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestForeignAnswersNamed: the answers of a proxy in front of the API
// are named as such, with the evidence, in the failures and at the top
// of the report.
func TestForeignAnswersNamed(t *testing.T) {
	base := misconfiguredProxy(t, strings.TrimSuffix((&refserver.Server{}).Start(t), "/v1"))
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: `^routes/`})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"routes/unknown-methods", "routes/trailing-slash"} {
		res, _ := rep.Result(name)
		if res.Outcome != conformancetest.Fail {
			t.Fatalf("%s: %s", name, res.Outcome)
		}
		if p := res.Failures[len(res.Failures)-1].Problem; !strings.Contains(p, "came from something in front of the API (router or proxy)") || !strings.Contains(p, "Server: nginx/1.22.1") {
			t.Errorf("%s: the failure does not name the proxy and its evidence: %s", name, p)
		}
	}
	res, _ := rep.Result("routes/trailing-slash")
	if want := "this 404 came from something in front of the API (router or proxy): the body is `404 page not found`, not an Error; Content-Type: text/plain; charset=utf-8; Server: nginx/1.22.1"; !strings.Contains(res.Failures[0].Problem, want) {
		t.Errorf("problem %q\nwant it to hold %q", res.Failures[0].Problem, want)
	}
	if res, _ := rep.Result("routes/list-other-methods"); res.Outcome != conformancetest.Pass {
		t.Errorf("routes/list-other-methods, passed on by the proxy: %s %v", res.Outcome, res.Failures)
	}
	if len(rep.Headlines) != 1 || !strings.Contains(rep.Headlines[0], "did not come from the API but from something in front of it") || !strings.Contains(rep.Headlines[0], "routes/unknown-methods, routes/trailing-slash") {
		t.Fatalf("headlines %q", rep.Headlines)
	}
	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(html.String(), `class="headline"`), strings.Index(html.String(), `id="counts"`); i < 0 || i > j {
		t.Errorf("the HTML report does not show the proxy at the top")
	}
}

// TestAPIAnswersNotForeign: answers of the API itself, wrong or right,
// are never called a proxy's.
func TestAPIAnswersNotForeign(t *testing.T) {
	rep := runRef(t, &refserver.Server{Broken: "ignores If-None-Match"}, `^(etag|routes)/`)
	if len(rep.Headlines) != 0 {
		t.Errorf("headlines %q for answers of the API", rep.Headlines)
	}
	for _, res := range rep.Results {
		for _, f := range res.Failures {
			if strings.Contains(f.Problem, "in front of the API") {
				t.Errorf("%s: %s", res.Name, f.Problem)
			}
		}
	}
}

// TestWrongBaseURLHeadline: a base URL without its version segment, where
// the list gets a router's plain-text 404, is the first headline, before
// the answers from in front of the API that follow from it.
func TestWrongBaseURLHeadline(t *testing.T) {
	base := (&refserver.Server{}).Start(t) // serves under /v1
	root := strings.TrimSuffix(base, "/v1")
	if root == base {
		t.Fatalf("the reference server's base %s has no /v1 to drop", base)
	}
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: root, APIKey: refserver.Key, Run: `^(list|auth)/`})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Headlines) == 0 || !strings.Contains(rep.Headlines[0], "is the base URL right, version segment included") {
		t.Fatalf("headlines %q; want the base URL first", rep.Headlines)
	}
}

// runRef runs the checks run selects against rs.
func runRef(t *testing.T, rs *refserver.Server, run string) *conformancetest.Report {
	t.Helper()
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: rs.Start(t), APIKey: refserver.Key, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
