package e2e

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
)

// TestConsistencyCommand runs inventory-conformance as the README shows:
// one -base-url per replica, -run '^consistency/', -consistency 10s,
// -consistency-html FILE. It passes three examples/redis replicas on one
// Redis, fails when one of them sits behind a cache that answers lists up
// to 300 ms old, even judged against a staleness bound of 50 ms (and
// writes FILE, an HTML page that the -html report
// links to and that a browser draws, and saves the history, which
// -consistency-replay judges again alike), and fails a server whose
// update answers carry another write.
func TestConsistencyCommand(t *testing.T) {
	proctest.Long(t)
	t.Parallel() // its verdicts are of correctness alone: a correct deployment passes, a stale cache fails, however loaded the machine
	bin := commandBinary(t)
	node := redisFor(t)
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-consistency-cmd", threeFrameworks)
	args := func(picture string, bases ...string) []string {
		var a []string
		for _, b := range bases {
			a = append(a, "-base-url", b)
		}
		return append(a, "-json", "-run", "^consistency/", "-consistency", "10s", "-consistency-html", picture)
	}
	dir := t.TempDir()

	t.Run("passes three replicas", func(t *testing.T) {
		picture := filepath.Join(dir, "pass.html")
		start := time.Now()
		res := runCmd(t, bin, args(picture, bases(rs)...)...)
		t.Logf("exit %d in %v:\n%s", res.code, time.Since(start).Round(time.Millisecond), res.stdout)
		if outcome, lin := linearizable(t, res.stdout); res.code != 0 || outcome != "PASS" || lin.Visualization != "" {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, outcome, res.stdout, res.stderr)
		}
		if _, err := os.Stat(picture); !os.IsNotExist(err) {
			t.Errorf("a passing run wrote the picture (%v)", err)
		}
	})

	t.Run("fails a replica behind a stale cache", func(t *testing.T) {
		origin, err := url.Parse(strings.TrimSuffix(rs[1].base, "/v1"))
		if err != nil {
			t.Fatal(err)
		}
		cache := httptest.NewServer(staleCache(httputil.NewSingleHostReverseProxy(origin), 300*time.Millisecond))
		t.Cleanup(cache.Close)
		picture := filepath.Join(dir, "stale.html")
		report := filepath.Join(dir, "report.html")
		history := filepath.Join(dir, "stale.json")
		res := runCmd(t, bin, append(args(picture, rs[0].base, cache.URL+"/v1", rs[2].base), "-html", report, "-consistency-history", history,
			"-consistency-staleness", "50ms")...)
		t.Logf("exit %d:\n%s", res.code, res.stdout)
		outcome, lin := linearizable(t, res.stdout)
		if res.code != 1 || outcome != "FAIL" || lin.Visualization != picture {
			t.Fatalf("exit %d, %s, want 1, FAIL and the picture:\n%s%s", res.code, outcome, res.stdout, res.stderr)
		}
		if !staleThrough(lin, cache.URL+"/v1") {
			t.Errorf("the failure does not count the lists through the cache older than the bound, with the list and the update it missed (kinds %q):\n%s", kindsOf(lin), res.stdout)
		}
		// The saved history, judged again without the deployment:
		// the same verdict, kinds, words and exit status.
		again := runCmd(t, bin, "-json", "-consistency-replay", history)
		_, relin := linearizable(t, again.stdout)
		if again.code != res.code || !slices.Equal(kindsOf(relin), kindsOf(lin)) || !slices.Equal(problemsOf(relin.Failures), problemsOf(lin.Failures)) ||
			relin.Consistency == nil || !relin.Consistency.Replayed {
			t.Errorf("replayed: exit %d (the run %d):\n%s", again.code, res.code, again.stdout)
		}
		b, err := os.ReadFile(picture)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 || !strings.Contains(string(b[:min(len(b), 200)]), "<html") {
			t.Fatalf("the picture is not an HTML page: %d bytes: %.200s", len(b), b)
		}
		page, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), `id="consistency-picture" href="`+picture+`"`) {
			t.Errorf("the -html report does not link to the picture")
		}
		t.Run("the picture in a browser", func(t *testing.T) {
			wd := startBrowser(t)
			wd.open(picture)
			var drawn int
			// The page draws the history with script once loaded.
			for deadline := time.Now().Add(20 * time.Second); drawn == 0 && time.Now().Before(deadline); {
				wd.script(`return document.querySelectorAll('#canvas svg rect').length`, &drawn)
			}
			if drawn == 0 {
				t.Fatal("the picture draws no history")
			}
			t.Logf("the picture draws %d boxes", drawn)
		})
	})

	t.Run("fails a server whose update answers carry another write", func(t *testing.T) {
		api := newAPI(t, readBackStore{openMemory(t, seed...)})
		base := serveNetHTTP(t, nil, api)
		res := runCmd(t, bin, args(filepath.Join(dir, "other.html"), base)...)
		if _, lin := linearizable(t, res.stdout); res.code != 1 || !slices.Contains(kindsOf(lin), conformancetest.KindAnotherWrite) {
			t.Fatalf("exit %d, want 1 and a failure of kind %s:\n%s%s", res.code, conformancetest.KindAnotherWrite, res.stdout, res.stderr)
		}
	})
}
