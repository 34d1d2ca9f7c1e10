package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

const testKey = "loadgen-test-key"

// seen counts, on the server side, the requests the load generator sent,
// so that its report can be checked against what really arrived.
type seen struct {
	mu      sync.Mutex
	lists   int
	updates map[string]int // by path
}

// apiServer serves the real API (net/http handler over memstore, mounted
// under /v1 as the docs say) on a real socket. wrap, if not nil, sits in
// front of the API to make it fail on purpose.
func apiServer(t *testing.T, items []inventory.Item, wrap func(http.Handler) http.Handler) (*httptest.Server, *seen) {
	t.Helper()
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(testKey))
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = api
	if wrap != nil {
		h = wrap(api)
	}
	s := &seen{updates: map[string]int{}}
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if r.Method == http.MethodGet {
			s.lists++
		} else {
			s.updates[r.URL.Path]++
		}
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, s
}

// opLine reads the "list N  200: N …" line of a report: the total and the
// count of each status.
func opLine(t *testing.T, out, op string) (int, map[int]int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + op + `\s+(\d+)((?:\s+\d{3}: \d+)*)\s*$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s line in the report:\n%s", op, out)
	}
	total, _ := strconv.Atoi(m[1])
	byStatus := map[int]int{}
	for _, sm := range regexp.MustCompile(`(\d{3}): (\d+)`).FindAllStringSubmatch(m[2], -1) {
		code, _ := strconv.Atoi(sm[1])
		n, _ := strconv.Atoi(sm[2])
		byStatus[code] = n
	}
	return total, byStatus
}

func TestLoadAgainstRealAPI(t *testing.T) {
	items := demo.Items()
	srv, s := apiServer(t, items, nil)
	var out bytes.Buffer
	err := run([]string{"-base-url", srv.URL + "/v1/", "-api-key", testKey,
		"-mix", "list=1,update=3", "-connections", "4", "-duration", "1s"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	report := out.String()
	if want := "; " + strconv.Itoa(len(items)) + " pets)"; !strings.Contains(report, want) {
		t.Errorf("report does not say the %d discovered pets:\n%s", len(items), report)
	}
	lists, listStatus := opLine(t, report, "list")
	updates, updateStatus := opLine(t, report, "update")
	if lists == 0 || updates == 0 {
		t.Fatalf("want both kinds of request, got %d lists and %d updates:\n%s", lists, updates, report)
	}
	if listStatus[200] != lists || updateStatus[200] != updates || len(listStatus) != 1 || len(updateStatus) != 1 {
		t.Errorf("want only 200s, got list %v update %v:\n%s", listStatus, updateStatus, report)
	}
	if !strings.Contains(report, "\nerrors       0\n") {
		t.Errorf("want 0 errors:\n%s", report)
	}
	m := regexp.MustCompile(`requests\s+(\d+) answered, (\d+) failed`).FindStringSubmatch(report)
	if m == nil || m[1] != strconv.Itoa(lists+updates) || m[2] != "0" {
		t.Errorf("requests line does not add up to %d+%d:\n%s", lists, updates, report)
	}

	// What the server saw is what the report says, plus the one list that
	// found the pets; updates went to known pets only.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists != lists+1 {
		t.Errorf("server saw %d lists, report says %d (+1 to discover pets)", s.lists, lists)
	}
	known := map[string]bool{}
	for _, it := range items {
		known["/inventory/"+strconv.FormatInt(it.PetID, 10)] = true
	}
	total := 0
	for path, n := range s.updates {
		if !known[path] {
			t.Errorf("update sent to %s, not a pet of the inventory", path)
		}
		total += n
	}
	if total != updates {
		t.Errorf("server saw %d updates, report says %d", total, updates)
	}

	lat := regexp.MustCompile(`p50 (\S+)  p99 (\S+)  p99\.9 (\S+)  max (\S+)`).FindStringSubmatch(report)
	if lat == nil {
		t.Fatalf("no latency line:\n%s", report)
	}
	q := regexp.MustCompile(`\nquantiles    p50 (\S+) p90 (\S+) p99 (\S+) p99\.9 (\S+) max (\S+) ms\n`).FindStringSubmatch(report)
	if q == nil {
		t.Fatalf("no quantiles line:\n%s", report)
	}
	prevMS := 0.0
	for i, s := range q[1:] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 || v < prevMS {
			t.Errorf("quantiles %v are not positive and increasing", q[1:])
		}
		prevMS = v
		if i == 0 {
			// p50 in ms is the latency line's p50, rounded to 1 µs.
			d, _ := time.ParseDuration(lat[1])
			if diff := v - float64(d)/1e6; diff > 0.0005 || diff < -0.0005 {
				t.Errorf("quantiles p50 %v ms, latency line p50 %v", v, d)
			}
		}
	}
	var prev time.Duration
	for _, s := range lat[1:] {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d < prev {
			t.Errorf("latencies %v are not positive and increasing", lat[1:])
		}
		prev = d
	}
}

func TestPetsFlagSkipsDiscovery(t *testing.T) {
	srv, s := apiServer(t, demo.Items(), nil)
	var out bytes.Buffer
	err := run([]string{"-base-url", srv.URL + "/v1", "-api-key", testKey,
		"-mix", "update=1", "-pets", "3, 5", "-connections", "2", "-duration", "300ms"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists != 0 {
		t.Errorf("server saw %d lists; -pets and an update-only mix need none", s.lists)
	}
	for path := range s.updates {
		if path != "/inventory/3" && path != "/inventory/5" {
			t.Errorf("update sent to %s; -pets was 3,5", path)
		}
	}
	if len(s.updates) == 0 {
		t.Errorf("no update arrived:\n%s", out.String())
	}
}

// With -rate, every slot due before the end is sent, and no other: the
// count is exact whatever the machine's speed.
func TestRateSendsTheScheduledRequests(t *testing.T) {
	srv, s := apiServer(t, demo.Items(), nil)
	var out bytes.Buffer
	err := run([]string{"-base-url", srv.URL + "/v1", "-api-key", testKey,
		"-mix", "list=1,update=0", "-rate", "40", "-connections", "3", "-duration", "500ms"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if lists, _ := opLine(t, out.String(), "list"); lists != 20 {
		t.Errorf("report says %d lists; 40/s for 0.5s is 20:\n%s", lists, out.String())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists != 20 {
		t.Errorf("server saw %d lists; want 20", s.lists)
	}
}

func TestFailuresExitNonZero(t *testing.T) {
	// Every 5th update is refused, as an overloaded host would.
	flaky := func(next http.Handler) http.Handler {
		var mu sync.Mutex
		n := 0
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			fail := r.Method == http.MethodPatch && n%5 == 0
			mu.Unlock()
			if fail {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	// The connection is dropped without an answer.
	hangUp := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		})
	}
	listFails := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	notJSON := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) })
	}

	cases := []struct {
		name    string
		items   []inventory.Item
		wrap    func(http.Handler) http.Handler
		args    []string
		errLike string // in the error
		outLike string // in the report, if one is printed
	}{
		{"some 503s", demo.Items(), flaky, []string{"-mix", "update=1"}, "unexpected statuses", "503: "},
		{"unknown pet", demo.Items(), nil, []string{"-mix", "update=1", "-pets", "999"}, "unexpected statuses", "404: "},
		{"wrong key", demo.Items(), nil, []string{"-mix", "list=1,update=0", "-api-key", "wrong"}, "unexpected statuses", "401: "},
		{"dropped connections", demo.Items(), hangUp, []string{"-mix", "update=1", "-pets", "1"}, "transport errors", "EOF"},
		{"discovery fails", demo.Items(), listFails, []string{"-mix", "update=1"}, "status 500", ""},
		{"discovery not JSON", demo.Items(), notJSON, []string{"-mix", "update=1"}, "not a JSON array", ""},
		{"empty inventory", nil, nil, []string{"-mix", "update=1"}, "no pet to update", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := apiServer(t, tc.items, tc.wrap)
			args := append([]string{"-base-url", srv.URL + "/v1", "-api-key", testKey,
				"-connections", "2", "-duration", "300ms"}, tc.args...)
			var out bytes.Buffer
			err := run(args, &out)
			if err == nil || !strings.Contains(err.Error(), tc.errLike) {
				t.Fatalf("run: error %v, want one containing %q\n%s", err, tc.errLike, out.String())
			}
			if !strings.Contains(out.String(), tc.outLike) {
				t.Errorf("report lacks %q:\n%s", tc.outLike, out.String())
			}
		})
	}

	t.Run("server gone", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		var out bytes.Buffer
		err := run([]string{"-base-url", url + "/v1", "-api-key", testKey, "-mix", "update=1", "-pets", "1",
			"-connections", "1", "-duration", "100ms"}, &out)
		if err == nil || !strings.Contains(out.String(), "connection refused") {
			t.Fatalf("run: error %v, want transport errors (connection refused)\n%s", err, out.String())
		}
	})
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("INVENTORY_API_KEY", "")
	ok := []string{"-base-url", "http://127.0.0.1:1/v1", "-api-key", "k"}
	cases := map[string][]string{
		"no base URL":        {"-api-key", "k"},
		"relative base URL":  {"-base-url", "/v1", "-api-key", "k"},
		"ftp base URL":       {"-base-url", "ftp://h/v1", "-api-key", "k"},
		"no key":             {"-base-url", "http://127.0.0.1:1/v1"},
		"unknown op in mix":  append(ok, "-mix", "list=1,delete=2"),
		"mix without weight": append(ok, "-mix", "list"),
		"negative weight":    append(ok, "-mix", "list=-1,update=2"),
		"op twice":           append(ok, "-mix", "list=1,list=2"),
		"all weights zero":   append(ok, "-mix", "list=0,update=0"),
		"no connections":     append(ok, "-connections", "0"),
		"zero duration":      append(ok, "-duration", "0s"),
		"negative rate":      append(ok, "-rate", "-1"),
		"infinite rate":      append(ok, "-rate", "+Inf"),
		"zero timeout":       append(ok, "-timeout", "0s"),
		"bad pet id":         append(ok, "-pets", "1,two"),
		"unknown flag":       append(ok, "-workers", "3"),
		"extra argument":     append(ok, "now"),
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(args, &out)
			if !errors.As(err, new(usageError)) {
				t.Errorf("run(%q): %v, want a usage error", args, err)
			}
		})
	}
}

func TestKeyFromEnvironment(t *testing.T) {
	t.Setenv("INVENTORY_API_KEY", "from-env")
	c, err := parseFlags([]string{"-base-url", "http://h/v1/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.apiKey != "from-env" || c.baseURL != "http://h/v1" || c.weights != [opCount]int{1, 9} {
		t.Errorf("got key %q, base %q, weights %v", c.apiKey, c.baseURL, c.weights)
	}
}

// The exit status is what a script sees: 0, 1 for failed requests, 2 for a
// usage mistake. The test binary re-runs itself as the command.
func TestExitStatus(t *testing.T) {
	if args := os.Getenv("LOADGEN_TEST_MAIN"); args != "" {
		os.Args = append([]string{"loadgen"}, strings.Split(args, " ")...)
		main()
		os.Exit(0)
	}
	srv, _ := apiServer(t, demo.Items(), nil)
	base := "-base-url " + srv.URL + "/v1 -connections 1 -duration 100ms -api-key "
	for _, tc := range []struct {
		args string
		want int
	}{
		{base + testKey, 0},
		{base + "wrong", 1},
		{base + testKey + " -mix nonsense", 2},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExitStatus$")
		cmd.Env = append(os.Environ(), "LOADGEN_TEST_MAIN="+tc.args)
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != tc.want {
			t.Errorf("loadgen %s: exit status %d, want %d\n%s", tc.args, got, tc.want, out)
		}
	}
}

// caching wraps the API's list in what the library's list caching
// answers (gzip when accepted, a strong ETag per content-coding, 304 on a
// matching If-None-Match) and counts, on the server side, what it sent.
type caching struct {
	mu          sync.Mutex
	acceptGzip  int   // lists that arrived with Accept-Encoding: gzip
	conditional int   // lists that arrived with If-None-Match
	wrongTag    int   // If-None-Match values this server never sent
	notModified int   // 304s sent
	bodies      int   // 200 lists sent
	bodyBytes   int64 // their body bytes
	firstBytes  int64 // body bytes of the first list (the discovery list)
	tags        map[string]bool
}

func (c *caching) wrap(next http.Handler) http.Handler {
	c.tags = map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		sum := sha256.Sum256(body)
		gz := r.Header.Get("Accept-Encoding") == "gzip"
		tag := `"` + hex.EncodeToString(sum[:8])
		if gz {
			tag += "-gzip"
		}
		tag += `"`
		inm := r.Header.Get("If-None-Match")
		c.mu.Lock()
		defer c.mu.Unlock()
		if gz {
			c.acceptGzip++
		}
		if inm != "" {
			c.conditional++
			if !c.tags[inm] {
				c.wrongTag++
			}
		}
		c.tags[tag] = true
		w.Header().Set("ETag", tag)
		if inm == tag {
			c.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if gz {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(body)
			zw.Close()
			body = b.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
		if c.bodies == 0 {
			c.firstBytes = int64(len(body))
		}
		c.bodies++
		c.bodyBytes += int64(len(body))
	})
}

// listBodies reads the "list-bodies" and "conditional" lines of a report.
func listBodies(t *testing.T, out string) (bodies, bytes, gz, tagged, sent, notModified int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^list-bodies\s+(\d+) bytes (\d+) mean \d+ gzip (\d+) etag (\d+)$`).FindStringSubmatch(out)
	c := regexp.MustCompile(`(?m)^conditional\s+sent (\d+) 304 (\d+)$`).FindStringSubmatch(out)
	if m == nil || c == nil {
		t.Fatalf("no list-bodies or conditional line in the report:\n%s", out)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return n(m[1]), n(m[2]), n(m[3]), n(m[4]), n(c[1]), n(c[2])
}

// -gzip sends Accept-Encoding: gzip on every list and counts the bytes as
// they came over the wire, not decompressed; without it no list asks for
// gzip.
func TestGzipCountsWireBytes(t *testing.T) {
	for _, gz := range []bool{false, true} {
		c := &caching{}
		srv, s := apiServer(t, demo.Items(), c.wrap)
		args := []string{"-base-url", srv.URL + "/v1", "-api-key", testKey, "-mix", "list=1,update=1", "-connections", "2", "-duration", "300ms"}
		if gz {
			args = append(args, "-gzip")
		}
		var out bytes.Buffer
		if err := run(args, &out); err != nil {
			t.Fatalf("gzip %v: run: %v\n%s", gz, err, out.String())
		}
		bodies, n, gzips, _, sent, _ := listBodies(t, out.String())
		c.mu.Lock()
		s.mu.Lock()
		discovery := 1 // the list that found the pets asks for identity
		if bodies == 0 || bodies != c.bodies-discovery || sent != 0 {
			t.Errorf("gzip %v: report counts %d list bodies (%d conditional), the server sent %d and the discovery list:\n%s", gz, bodies, sent, c.bodies-discovery, out.String())
		}
		want := 0
		if gz {
			want = bodies
		}
		if c.acceptGzip != want || gzips != want {
			t.Errorf("gzip %v: %d lists asked for gzip and the report counts %d gzip bodies; want %d", gz, c.acceptGzip, gzips, want)
		}
		// The report's bytes are exactly those the server sent, the
		// discovery list's aside; gzip ones are smaller than identity.
		if int64(n) != c.bodyBytes-c.firstBytes {
			t.Errorf("gzip %v: the report counts %d bytes; the server sent %d after the discovery list", gz, n, c.bodyBytes-c.firstBytes)
		}
		if gz && int64(n) >= int64(bodies)*c.firstBytes/2 {
			t.Errorf("gzip: %d bytes for %d bodies is not what gzip makes of a %d-byte list", n, bodies, c.firstBytes)
		}
		c.mu.Unlock()
		s.mu.Unlock()
	}
}

// -conditional revalidates each worker's last list: the server sees only
// tags it sent, answers 304 when nothing changed, and the report counts
// the 304s as answered (exit 0) and equal to what the server sent.
func TestConditionalCountsNotModified(t *testing.T) {
	c := &caching{}
	srv, _ := apiServer(t, demo.Items(), c.wrap)
	var out bytes.Buffer
	err := run([]string{"-base-url", srv.URL + "/v1", "-api-key", testKey, "-mix", "list=1,update=0",
		"-connections", "3", "-duration", "300ms", "-conditional", "-gzip"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	bodies, _, gzips, tagged, sent, notModified := listBodies(t, out.String())
	lists, byStatus := opLine(t, out.String(), "list")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wrongTag != 0 {
		t.Errorf("%d lists sent an If-None-Match the server never gave", c.wrongTag)
	}
	if notModified == 0 || notModified != c.notModified || byStatus[304] != notModified || sent != c.conditional {
		t.Errorf("report: %d sent with If-None-Match, %d 304s (list line %v); server: %d and %d\n%s", sent, notModified, byStatus, c.conditional, c.notModified, out.String())
	}
	// Each worker's first list has no tag to send; the rest do.
	if sent != lists-3 || bodies != 3 || tagged != 3 || gzips != 3 {
		t.Errorf("%d lists, %d conditional, %d bodies (%d tagged, %d gzip); want every list but each worker's first conditional and 3 bodies:\n%s", lists, sent, bodies, tagged, gzips, out.String())
	}
	if !strings.Contains(out.String(), "\nerrors       0\n") || regexp.MustCompile(`(?m)^unexpected`).MatchString(out.String()) {
		t.Errorf("a 304 to a conditional list counted as unexpected:\n%s", out.String())
	}
}
