package consistency_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"

	"github.com/petinventory/petinventory/conformancetest/internal/linearize"
)

var updateHistories = flag.Bool("update-histories", false, "record the consistency histories of testdata/consistency again, against the reference server")

// savedHistories are the histories kept as test data: each recorded by a
// run against the reference server, as it is or behind a wrapper that
// breaks the promise. A change of the checker must judge them as the run
// that saved them did (or the files are recorded again, on purpose, with
// -update-histories).
var savedHistories = []struct {
	file string
	// front wraps the second base URL's handler (nil: none).
	front func(http.Handler) http.Handler
	// lostUpdate breaks the reference server's update answers.
	lostUpdate bool
	outcome    string
	kind       string // of the first failure
}{
	{"pass.json", nil, false, "pass", ""},
	{"stale.json", func(h http.Handler) http.Handler { return staleLists(h, 40*time.Millisecond) }, false, "fail", conformancetest.KindMissedUpdate},
	{"another-write.json", nil, true, "fail", conformancetest.KindAnotherWrite},
}

// slowly delays every request by a millisecond, so that a short run of
// few clients gives a small history.
func slowly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		h.ServeHTTP(w, r)
	})
}

// staleLists answers lists from a copy up to maxAge old, as a cache in
// front of a replica that ignores Cache-Control: no-store.
func staleLists(next http.Handler, maxAge time.Duration) http.Handler {
	var (
		mu   sync.Mutex
		rec  *httptest.ResponseRecorder
		when time.Time
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if rec == nil || time.Since(when) > maxAge {
			rec, when = httptest.NewRecorder(), time.Now()
			next.ServeHTTP(rec, r)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// recordHistory runs the consistency check for d against the reference
// server through two base URLs (the second behind front, when not nil)
// and saves its history to path.
func recordHistory(t *testing.T, rs *refserver.Server, front func(http.Handler) http.Handler, d time.Duration, path string) conformancetest.Result {
	t.Helper()
	rs.Start(t) // for its seed: both base URLs below serve rs slowly
	serve := func(h http.Handler) string {
		srv := httptest.NewServer(slowly(h))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	first, second := serve(rs), ""
	if front != nil {
		second = serve(front(rs))
	} else {
		second = serve(rs)
	}
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: first, Replicas: []string{second}, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
		Consistency: d, ConsistencyClients: 2, ConsistencyHistory: path})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	return res
}

// TestReplaySavedHistories: each history of testdata/consistency, judged
// again, gives the verdict and the words the run that saved it gave.
func TestReplaySavedHistories(t *testing.T) {
	for _, tc := range savedHistories {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "consistency", tc.file)
			if *updateHistories {
				res := recordHistory(t, &refserver.Server{LostUpdate: tc.lostUpdate}, tc.front, 300*time.Millisecond, path)
				t.Logf("recorded %s: %s", res.Outcome, res.Detail)
			}
			saved := readSaved(t, path)
			if saved.Verdict == nil || saved.Verdict.Outcome() != tc.outcome {
				t.Fatalf("the saved verdict is %+v, want %s", saved.Verdict, tc.outcome)
			}
			rep, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: path})
			if err != nil {
				t.Fatal(err)
			}
			res := rep.Results[0]
			if string(res.Outcome) != tc.outcome || !slices.Equal(problems(res.Failures), problemsOf(saved.Verdict)) {
				t.Fatalf("replayed: %s %q; saved: %s %q", res.Outcome, problems(res.Failures), saved.Verdict.Outcome(), problemsOf(saved.Verdict))
			}
			if tc.kind != "" && res.Failures[0].Kind != tc.kind {
				t.Errorf("the failure is of kind %q, want %q: %s", res.Failures[0].Kind, tc.kind, res.Failures[0].Problem)
			}
			if !strings.Contains(rep.Notes[0], "concluded the same") {
				t.Errorf("note: %s", rep.Notes[0])
			}
			t.Log(res.Detail)
		})
	}
}

// TestHistoryRoundTrip: a run's saved history, replayed, gives the run's
// verdict and words; the file never holds the key, also when the server
// echoes it in a refusal.
func TestHistoryRoundTrip(t *testing.T) {
	for _, rs := range []*refserver.Server{{}, {LostUpdate: true}} {
		path := filepath.Join(t.TempDir(), "history.json")
		base := rs.Start(t)
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPatch && time.Now().UnixNano()%7 == 0 {
				refserver.Error(w, http.StatusServiceUnavailable, "busy "+refserver.Key, "echoes "+refserver.Key)
				return
			}
			rs.ServeHTTP(w, r)
		}))
		t.Cleanup(echo.Close)
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, Replicas: []string{echo.URL + "/v1"}, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
			Consistency: 300 * time.Millisecond, ConsistencyClients: 2, ConsistencyHistory: path})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("consistency/linearizable")
		if res.Consistency == nil || res.Consistency.History != path {
			t.Fatalf("the result does not name the history: %+v", res.Consistency)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(refserver.Key)) || !bytes.Contains(b, []byte(wire.KeyVar)) {
			t.Errorf("the history holds the key, or not the refusals that echoed it (%d bytes)", len(b))
		}
		again, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: path})
		if err != nil {
			t.Fatal(err)
		}
		got := again.Results[0]
		if got.Outcome != res.Outcome || !slices.Equal(problems(got.Failures), problems(res.Failures)) {
			t.Fatalf("run: %s %q; replay: %s %q", res.Outcome, problems(res.Failures), got.Outcome, problems(got.Failures))
		}
		t.Logf("%s, replayed the same: %s", res.Outcome, again.Notes[0])
	}
}

// TestReplayRefusesOtherFiles: a file that is not a history, or one that
// does not hold together, is refused with the reason.
func TestReplayRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "consistency", "pass.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ content, want string }{
		"not json":       {"<html>", "not a consistency history"},
		"other format":   {`{"format":"x"}`, "format"},
		"unknown base":   {strings.Replace(string(good), `"baseURL":"http://127.0.0.1`, `"baseURL":"http://elsewhere`, 1), "is not one of the history's"},
		"unknown member": {strings.Replace(string(good), `"clients"`, `"clientz"`, 1), "unknown field"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: path}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func readSaved(t *testing.T, path string) *linearize.Saved {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := linearize.ReadHistory(io.Reader(f))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func problems(fs []conformancetest.Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Problem)
	}
	return out
}

func problemsOf(v *linearize.Verdict) []string {
	var out []string
	for _, f := range v.Failures {
		out = append(out, f.Problem)
	}
	return out
}

// TestReplayDrawsPicture: a failed history judged again draws its picture
// where conformancetest.ReplayConfig.ConsistencyHTML asks, and names it; a picture that
// cannot be written is a failure of its own kind, beside the verdict's.
func TestReplayDrawsPicture(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "consistency", "another-write.json")
	pic := filepath.Join(t.TempDir(), "picture.html")
	rep, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: path, ConsistencyHTML: pic})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Results[0]
	if b, err := os.ReadFile(pic); err != nil || !bytes.Contains(b, []byte("<html")) || res.Visualization != pic {
		t.Fatalf("picture %q: %v, %d bytes", res.Visualization, err, len(b))
	}
	nowhere := filepath.Join(t.TempDir(), "missing", "picture.html")
	rep, err = conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: path, ConsistencyHTML: nowhere})
	if err != nil {
		t.Fatal(err)
	}
	res = rep.Results[0]
	var kinds []string
	for _, f := range res.Failures {
		kinds = append(kinds, f.Kind)
	}
	if res.Visualization != "" || !slices.Equal(kinds, []string{conformancetest.KindAnotherWrite, conformancetest.KindPictureNotWritten}) {
		t.Errorf("an unwritable picture: %q, kinds %q", res.Visualization, kinds)
	}
	// A passing history has no picture.
	pass := filepath.Join(t.TempDir(), "pass.html")
	if rep, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: filepath.Join("..", "..", "testdata", "consistency", "pass.json"), ConsistencyHTML: pass}); err != nil || rep.Results[0].Visualization != "" {
		t.Fatalf("%v %+v", err, rep)
	}
	if _, err := os.Stat(pass); !os.IsNotExist(err) {
		t.Errorf("a passing history drew its picture (%v)", err)
	}
}

// TestHistoryNotSaved: a history that cannot be saved is a failure of its
// own kind.
func TestHistoryNotSaved(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1, Consistency: 300 * time.Millisecond, ConsistencyClients: 2,
		ConsistencyHistory: filepath.Join(t.TempDir(), "missing", "history.json")})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Result("consistency/linearizable")
	if res.Outcome != conformancetest.Fail || len(res.Failures) != 1 || res.Failures[0].Kind != conformancetest.KindHistoryNotSaved || res.Consistency.History != "" {
		t.Fatalf("%s %+v", res.Outcome, res.Failures)
	}
}

// TestReplaySameBaseTwice: a run given the same base URL twice judges it
// as one, and its saved history replays to the run's verdict; a file
// that names the base twice (as runs saved before did) replays so too.
func TestReplaySameBaseTwice(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	path := filepath.Join(t.TempDir(), "history.json")
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, Replicas: []string{base}, APIKey: refserver.Key, Run: "^consistency/", ConsistencyMinUpdates: 1,
		Consistency: 300 * time.Millisecond, ConsistencyHistory: path})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("consistency/linearizable"); res.Outcome != conformancetest.Pass {
		t.Fatalf("the run: %s %v", res.Outcome, res.Failures)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	one := `"baseURLs": [
    "` + base + `"
  ]`
	if !strings.Contains(string(b), one) {
		t.Fatalf("the history does not name the base once:\n%.400s", b)
	}
	twice := filepath.Join(t.TempDir(), "twice.json")
	os.WriteFile(twice, []byte(strings.Replace(string(b), one, `"baseURLs": ["`+base+`", "`+base+`"]`, 1)), 0o600)
	for _, file := range []string{path, twice} {
		again, err := conformancetest.ReplayConsistency(conformancetest.ReplayConfig{History: file})
		if err != nil {
			t.Fatal(err)
		}
		if res := again.Results[0]; res.Outcome != conformancetest.Pass || !strings.Contains(again.Notes[0], "concluded the same") {
			t.Errorf("%s replayed: %s %v; %s", filepath.Base(file), res.Outcome, res.Failures, again.Notes[0])
		}
	}
}
