package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is a request as a server received it.
type seen struct {
	method, path, auth, contentType string
	cacheControl                    string
	chunked                         bool
	hasContentType                  bool
	body                            []byte
}

// recordingServer records every request it receives.
func recordingServer(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var all []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, hasCT := r.Header["Content-Type"]
		mu.Lock()
		all = append(all, seen{
			method: r.Method, path: r.URL.RequestURI(), auth: r.Header.Get("Authorization"),
			contentType: r.Header.Get("Content-Type"), hasContentType: hasCT, cacheControl: r.Header.Get("Cache-Control"),
			chunked: len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked", body: b,
		})
		mu.Unlock()
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		out := all
		all = nil
		return out
	}
}

const curlKey = "k3y-with-$pecial\"chars`-0123456789"

// TestCurlReproducesRequests runs every curl command the suite would print
// with the real curl, and compares what the server receives with what the
// runner itself sent.
func TestCurlReproducesRequests(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv, received := recordingServer(t)
	cl := &Client{BaseURL: srv.URL + "/v1", APIKey: curlKey, HTTP: &http.Client{}, Timeout: 10 * time.Second}
	requests := []Request{
		{Method: http.MethodGet, Path: "/inventory?limit=1&sort=desc"},
		{Method: http.MethodHead, Path: "/inventory"},
		StateList(),
		{Method: http.MethodOptions, Path: "/inventory/1", Auth: NoAuth},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: []byte(`{"quantity":1}`)},
		{Method: http.MethodPatch, Path: "/inventory/1", Body: []byte(`{"quantity":1}`)},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: []byte{}},
		{Method: http.MethodPatch, Path: "/inventory/%201", ContentType: "text/plain", Body: []byte(`it's 100% "quoted" \ text`)},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: []byte("{\"quantity\":1,\"n\xffe\":2}\n\t")},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: padded(20000, 3)},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: padded(20000, 3), Chunked: true},
		{Method: http.MethodPatch, Path: "/inventory/1", ContentType: "application/json", Body: []byte("{" + strings.Repeat("x", 300) + strings.Repeat("\x00", 100) + "'}")},
		{Method: http.MethodGet, Path: "/inventory", Auth: WithAuth(curlKey)},
		{Method: http.MethodGet, Path: "/inventory", Auth: WithAuth("Bearer " + curlKey + "x")},
		{Method: http.MethodGet, Path: "/inventory", Auth: WithAuth("bearer   " + curlKey)},
		{Method: http.MethodGet, Path: "/inventory", Auth: WithAuth(`Digest username="inventory"`)},
	}
	for _, r := range requests {
		ex := cl.Send(context.Background(), r)
		if ex.Err != nil {
			t.Fatal(ex.Err)
		}
		want := received()
		cmdline := cl.Curl(ex)
		if strings.Contains(cmdline, curlKey) {
			t.Errorf("the curl command holds the key: %s", cmdline)
		}
		cmd := exec.Command("sh", "-c", cmdline+" -o /dev/null")
		cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+curlKey)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", cmdline, err, out)
			continue
		}
		got := received()
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("%s: %d and %d requests received", cmdline, len(want), len(got))
		}
		w, g := want[0], got[0]
		if w.method != g.method || w.path != g.path || w.auth != g.auth || w.contentType != g.contentType || w.cacheControl != g.cacheControl ||
			w.hasContentType != g.hasContentType || w.chunked != g.chunked || !bytes.Equal(w.body, g.body) {
			t.Errorf("curl sent another request than the runner:\n%s\n runner: %+v\n curl:   %+v", cmdline, short(w), short(g))
		}
	}
}

func short(s seen) seen {
	if len(s.body) > 80 {
		s.body = append(s.body[:80:80], "…"...)
	}
	return s
}

// padded is a valid update body of exactly n bytes, as the size checks
// send: the object with spaces before its closing brace.
func padded(n int, qty int64) []byte {
	head := fmt.Sprintf(`{"quantity":%d`, qty)
	return []byte(head + strings.Repeat(" ", n-len(head)-1) + "}")
}
