package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

const testKey = "yardstick-test-key"

// setup seeds a yardstick on a redis-server of the test's own with the
// demo inventory and returns it, its HTTP server and the node.
func setup(t *testing.T, items []inventory.Item) (*yardstick, *httptest.Server, *redistest.Node) {
	t.Helper()
	node := redistest.StartNode(t, "yardstick")
	client := redis.NewClient(&redis.Options{Addr: node.Addr()})
	t.Cleanup(func() { client.Close() })
	body, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := inventory.NewKeyAuthenticator(testKey)
	if err != nil {
		t.Fatal(err)
	}
	y, err := newYardstick(client, "ys", body, auth)
	if err != nil {
		t.Fatal(err)
	}
	if err := y.seed(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(y.engine())
	t.Cleanup(srv.Close)
	return y, srv, node
}

// plain sends only the headers a request is given (no Accept-Encoding of
// its own) and never decompresses.
var plain = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func do(t *testing.T, method, url, key, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestListAndUpdate(t *testing.T) {
	items := demo.Items()
	y, srv, node := setup(t, items)

	status, h, body := do(t, "GET", srv.URL+"/v1/inventory", testKey, "")
	if status != 200 || body != string(y.body) {
		t.Fatalf("list: %d %q, want 200 and the bytes it was given", status, body)
	}
	if h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("list headers: %v", h)
	}

	status, _, body = do(t, "PATCH", srv.URL+"/v1/inventory/3", testKey, `{"quantity":42}`)
	if status != 200 || body != `{"petId":3,"quantity":42,"status":"pending"}` {
		t.Fatalf("update: %d %s", status, body)
	}
	if v, err := node.DoString("HGET", "{ys}:items", "3"); err != nil || v != "42:pending" {
		t.Errorf("HGET after the update: %q, %v; want 42:pending", v, err)
	}
	if n, err := node.Do("HLEN", "{ys}:items"); err != nil || n != int64(len(items)) {
		t.Errorf("HLEN: %v, %v; want %d", n, err, len(items))
	}
	entries, err := node.Do("XRANGE", "{ys}:log", "-", "+")
	if err != nil {
		t.Fatal(err)
	}
	es, _ := entries.([]any)
	if len(es) != 1 {
		t.Fatalf("stream: %v, want one entry", entries)
	}
	fields, _ := es[0].([]any)[1].([]any)
	want := []string{"n", y.nonce, "op", "set", "d", "3:42:pending"}
	if len(fields) != len(want) {
		t.Fatalf("stream entry fields %v, want %v", fields, want)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Errorf("stream entry fields %v, want %v", fields, want)
			break
		}
	}

	for _, tc := range []struct {
		method, path, key, body string
		want                    int
	}{
		{"PATCH", "/v1/inventory/999", testKey, `{"quantity":1}`, 404},
		{"PATCH", "/v1/inventory/x", testKey, `{"quantity":1}`, 400},
		{"PATCH", "/v1/inventory/0", testKey, `{"quantity":1}`, 400},
		{"PATCH", "/v1/inventory/3", testKey, `{"quantity":-1}`, 400},
		{"PATCH", "/v1/inventory/3", testKey, `{"quantity":2147483648}`, 400},
		{"PATCH", "/v1/inventory/3", testKey, `{}`, 400},
		{"PATCH", "/v1/inventory/3", testKey, `nope`, 400},
		{"PATCH", "/v1/inventory/3", "", `{"quantity":1}`, 401},
		{"PATCH", "/v1/inventory/3", "wrong", `{"quantity":1}`, 401},
		{"GET", "/v1/inventory", "wrong", "", 401},
	} {
		if status, _, body := do(t, tc.method, srv.URL+tc.path, tc.key, tc.body); status != tc.want {
			t.Errorf("%s %s key %q body %s: %d %s, want %d", tc.method, tc.path, tc.key, tc.body, status, body, tc.want)
		}
	}
	if v, _ := node.DoString("HGET", "{ys}:items", "3"); v != "42:pending" {
		t.Errorf("a refused update changed the pet: %q", v)
	}
}

// The write retries when the pet's guard changes under it, and gives up
// with 503 when it keeps changing.
func TestUpdateRetriesAbortedTransactions(t *testing.T) {
	y, srv, node := setup(t, demo.Items())
	touches := 0
	y.beforeExec = func(id int64) {
		if touches < 2 {
			touches++
			if _, err := node.Do("INCR", "{ys}:guard:"+"5"); err != nil {
				t.Error(err)
			}
		}
	}
	status, _, body := do(t, "PATCH", srv.URL+"/v1/inventory/5", testKey, `{"quantity":7}`)
	if status != 200 || touches != 2 {
		t.Fatalf("update after 2 aborts: %d %s (guard touched %d times)", status, body, touches)
	}
	y.beforeExec = func(int64) {
		if _, err := node.Do("INCR", "{ys}:guard:5"); err != nil {
			t.Error(err)
		}
	}
	if status, _, body := do(t, "PATCH", srv.URL+"/v1/inventory/5", testKey, `{"quantity":8}`); status != 503 {
		t.Errorf("update that always aborts: %d %s, want 503", status, body)
	}
	if v, _ := node.DoString("HGET", "{ys}:items", "5"); v != "7:pending" {
		t.Errorf("pet 5 after the aborted update: %q, want 7:pending", v)
	}
}

func TestBadEntryAndDeadRedis(t *testing.T) {
	_, srv, node := setup(t, demo.Items())
	if _, err := node.Do("HSET", "{ys}:items", "4", "garbage"); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := do(t, "PATCH", srv.URL+"/v1/inventory/4", testKey, `{"quantity":1}`); status != 503 {
		t.Errorf("update of an unparsable entry: %d, want 503", status)
	}
	node.Kill()
	if status, _, _ := do(t, "PATCH", srv.URL+"/v1/inventory/3", testKey, `{"quantity":1}`); status != 503 {
		t.Errorf("update with Redis down: %d, want 503", status)
	}
	if status, _, _ := do(t, "GET", srv.URL+"/v1/inventory", testKey, ""); status != 200 {
		t.Errorf("list with Redis down: %d; the list is served from memory", status)
	}
}

// Seeding writes in chunks, and refuses a prefix that holds items.
func TestSeed(t *testing.T) {
	items := make([]inventory.Item, 2500)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i + 1), Quantity: i, Status: inventory.StatusSold}
	}
	y, _, node := setup(t, items)
	if n, err := node.Do("HLEN", "{ys}:items"); err != nil || n != int64(2500) {
		t.Errorf("HLEN: %v, %v; want 2500", n, err)
	}
	if calls, err := node.Info("commandstats", "cmdstat_hset"); err != nil || !strings.HasPrefix(calls, "calls=3,") {
		t.Errorf("HSET calls: %q, %v; want 3 chunks", calls, err)
	}
	err := y.seed(context.Background(), items)
	if err == nil || !strings.Contains(err.Error(), "fresh -redis-prefix") {
		t.Errorf("seeding a used prefix: %v", err)
	}
	node.Kill()
	if err := y.seed(context.Background(), items); err == nil || !strings.Contains(err.Error(), "seeding") {
		t.Errorf("seeding with Redis down: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "list.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`[{"petId":1,"quantity":2,"status":"sold"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"not":"a list"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "redis://127.0.0.1:1/0"
	notGzip := filepath.Join(dir, "not.gz")
	otherGzip := filepath.Join(dir, "other.gz")
	if err := os.WriteFile(notGzip, []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer
	zw := gzip.NewWriter(&other)
	zw.Write([]byte(`[]`))
	zw.Close()
	if err := os.WriteFile(otherGzip, other.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body, gzip, prefix, url, keys, want string
	}{
		{"", "", "p", url, testKey, "required"},
		{good, "", "", url, testKey, "required"},
		{good, "", "p", "", testKey, "REDIS_URL is not set"},
		{filepath.Join(dir, "missing.json"), "", "p", url, testKey, "no such file"},
		{bad, "", "p", url, testKey, "JSON array of items"},
		{good, "", "p", url, "", "INVENTORY_API_KEYS"},
		{good, "", "p", "http://nope", testKey, "REDIS_URL"},
		{good, filepath.Join(dir, "missing.gz"), "p", url, testKey, "no such file"},
		{good, notGzip, "p", url, testKey, "-gzip-body " + notGzip + ": not gzip"},
		{good, otherGzip, "p", url, testKey, "does not decode to the identity body"},
		{good, "", "p", url, testKey, "seeding"}, // nothing listens on port 1
	} {
		err := run(context.Background(), demo.Logger(), "127.0.0.1:0", tc.body, tc.gzip, tc.prefix, tc.url, tc.keys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(body %q, prefix %q, url %q, keys %q): %v, want an error that mentions %q", tc.body, tc.prefix, tc.url, tc.keys, err, tc.want)
		}
	}
}

// run seeds, then serves until its context is done.
func TestRunServes(t *testing.T) {
	node := redistest.StartNode(t, "yardstick-run")
	path := filepath.Join(t.TempDir(), "list.json")
	if err := os.WriteFile(path, []byte(`[{"petId":1,"quantity":2,"status":"sold"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, demo.Logger(), "127.0.0.1:0", path, "", "run", "redis://"+node.Addr()+"/0", testKey)
	}()
	// Seeded before it listens: wait for the seed, then stop it.
	if err := redistest.Poll(redistest.Timeout, func() error {
		v, err := node.DoString("HGET", "{run}:items", "1")
		if err == nil && v != "2:sold" {
			t.Fatalf("seeded entry %q", v)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after its context ended: %v", err)
	}
}

// xrevranges is how many XREVRANGE commands the node has run: the
// yardstick's one round trip per gzip or conditional list.
func xrevranges(t *testing.T, node *redistest.Node) int {
	t.Helper()
	info, err := node.DoString("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_xrevrange:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestGzipAndConditionalLists(t *testing.T) {
	items := demo.Items()
	y, srv, node := setup(t, items)
	url := srv.URL + "/v1/inventory"

	status, h, body := do(t, "GET", url, testKey, "", "Accept-Encoding", "gzip")
	if status != 200 || h.Get("Content-Encoding") != "gzip" || body != string(y.gzipBody) || h.Get("Content-Length") != strconv.Itoa(len(y.gzipBody)) {
		t.Fatalf("gzip list: %d %v, %d bytes; want 200 with the gzip bytes", status, h, len(body))
	}
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if plainBody, err := io.ReadAll(zr); err != nil || !bytes.Equal(plainBody, y.body) {
		t.Fatalf("the gzip list does not decode to the identity bytes: %v", err)
	}
	tag := h.Get("ETag")
	if tag != `"0-0-gzip"` || h.Get("Vary") != "Accept-Encoding" || h.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("gzip list headers %v: want ETag \"0-0-gzip\" (an empty stream), Vary and private, no-cache", h)
	}
	if n := xrevranges(t, node); n != 1 {
		t.Errorf("%d XREVRANGE after one gzip list, want 1", n)
	}

	status, h, body = do(t, "GET", url, testKey, "", "Accept-Encoding", "gzip", "If-None-Match", `"x", `+tag)
	if status != 304 || body != "" || h.Get("ETag") != tag || h.Get("Vary") != "Accept-Encoding" {
		t.Errorf("If-None-Match with the tag: %d %v %q; want 304 with the tag, Vary and no body", status, h, body)
	}
	status, h, _ = do(t, "GET", url, testKey, "", "If-None-Match", "*")
	if status != 304 || h.Get("ETag") != `"0-0"` {
		t.Errorf("If-None-Match * on identity: %d %v; want 304 with the identity tag", status, h)
	}
	if n := xrevranges(t, node); n != 3 {
		t.Errorf("%d XREVRANGE after three gzip or conditional lists, want 3", n)
	}

	// An update appends to the stream: the old tag no longer matches.
	if status, _, body := do(t, "PATCH", srv.URL+"/v1/inventory/1", testKey, `{"quantity":4}`); status != 200 {
		t.Fatalf("update: %d %s", status, body)
	}
	status, h, body = do(t, "GET", url, testKey, "", "Accept-Encoding", "gzip", "If-None-Match", tag)
	if status != 200 || h.Get("ETag") == tag || !strings.HasSuffix(h.Get("ETag"), `-gzip"`) || body != string(y.gzipBody) {
		t.Errorf("If-None-Match with the tag after an update: %d %v; want 200 with a new gzip tag", status, h)
	}

	// Refused gzip and no If-None-Match: identity, no round trip.
	before := xrevranges(t, node)
	status, h, body = do(t, "GET", url, testKey, "", "Accept-Encoding", "gzip;q=0, identity")
	if status != 200 || h.Get("Content-Encoding") != "" || body != string(y.body) || h.Get("Cache-Control") != "no-store" {
		t.Errorf("gzip;q=0: %d %v; want the identity bytes as before", status, h)
	}
	if n := xrevranges(t, node); n != before {
		t.Errorf("a plain list made %d XREVRANGE, want none", n-before)
	}
	for v, want := range map[string]bool{"gzip": true, "x-gzip": true, "*": true, "deflate, GZIP;q=0.5": true, "gzip;q=0": false, "br": false, "": false, "identity": false} {
		if got := acceptsGzip(v); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", v, got, want)
		}
	}
}
