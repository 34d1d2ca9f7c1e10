package inventory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// faultStore is a real memstore with a hook in front of List, ListChanges and
// SetQuantity that can fail, block or panic: the faults a backend can show.
type faultStore struct {
	*memstore.Store
	hookp atomic.Pointer[func(ctx context.Context, op string) error]
}

// setHook installs hook (nil: none). Atomic: a list's store read runs on a
// goroutine of its own, and may outlive the request that started it.
func (s *faultStore) setHook(hook func(ctx context.Context, op string) error) {
	if hook == nil {
		s.hookp.Store(nil)
		return
	}
	s.hookp.Store(&hook)
}

func (s *faultStore) hook(ctx context.Context, op string) error {
	if h := s.hookp.Load(); h != nil {
		return (*h)(ctx, op)
	}
	return nil
}

func (s *faultStore) List(ctx context.Context) ([]inventory.Item, error) {
	if err := s.hook(ctx, "list"); err != nil {
		return nil, err
	}
	return s.Store.List(ctx)
}

// ListChanges is hooked too: memstore's would otherwise be promoted past
// the hook (the embedding trap ChangeLister's doc warns about).
func (s *faultStore) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if err := s.hook(ctx, "list"); err != nil {
		return inventory.Changes{}, err
	}
	return s.Store.ListChanges(ctx, since)
}

func (s *faultStore) SetQuantity(ctx context.Context, petID int64, q int) (inventory.Item, error) {
	if err := s.hook(ctx, "update"); err != nil {
		return inventory.Item{}, err
	}
	return s.Store.SetQuantity(ctx, petID, q)
}

func newStore(t *testing.T) *faultStore {
	t.Helper()
	ms, err := memstore.New(
		inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable},
		inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
	)
	if err != nil {
		t.Fatal(err)
	}
	return &faultStore{Store: ms}
}

// logBuffer collects log output from every goroutine of a test server.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

const testKey = "test-key-Q7x9"

func newAPI(t *testing.T, store inventory.Store, opts ...inventory.Option) *inventory.API {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // tests that read logs pass their own
	api, err := inventory.New(store, append([]inventory.Option{inventory.WithAPIKeys(testKey), inventory.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// serve runs one request through API.Serve and returns the status, the
// headers and the body.
func serve(api *inventory.API, req adapter.Request) (int, map[string]string, string) {
	if req.Authorization == "" {
		req.Authorization = "Bearer " + testKey
	}
	if req.Authorization == "-" {
		req.Authorization = ""
	}
	if req.ContentLength == 0 {
		req.ContentLength = -1 // unknown, as a chunked body's
	}
	resp := adapter.Serve(context.Background(), api, req)
	defer resp.Release()
	h := map[string]string{}
	resp.VisitHeaders(func(name, value string) { h[http.CanonicalHeaderKey(name)] = value })
	var body strings.Builder
	if _, err := io.Copy(&body, resp.BodyReader()); err != nil {
		panic(err) // a strings.Builder does not fail
	}
	return resp.Status, h, body.String()
}

func patch(petID, body string) adapter.Request {
	return adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: petID, Body: adapter.StreamedBody(strings.NewReader(body))}
}

func errorBody(code inventory.Code, status int, message string) string {
	return fmt.Sprintf(`{"code":%q,"message":%q,"status":%d}`, code, message, status)
}

func TestNewConfigurationErrors(t *testing.T) {
	ms, _ := memstore.New()
	auth := inventory.AuthenticatorFunc(func(context.Context, string) error { return nil })
	cases := []struct {
		name  string
		store inventory.Store
		opts  []inventory.Option
		want  string
	}{
		{"nil store", nil, []inventory.Option{inventory.WithAPIKeys("k")}, "inventory: New: store is nil"},
		{"no keys", ms, nil, "no API key configured"},
		{"nil authenticator", ms, []inventory.Option{inventory.WithAuthenticator(nil)}, "no API key configured"},
		{"empty key list", ms, []inventory.Option{inventory.WithAPIKeys()}, "no API key given"},
		{"both", ms, []inventory.Option{inventory.WithAPIKeys("k"), inventory.WithAuthenticator(auth)}, "both given"},
		{"invalid key", ms, []inventory.Option{inventory.WithAPIKeys("fine", "not fine secret")}, "#2 (of 2)"},
		{"body limit 63", ms, []inventory.Option{inventory.WithAPIKeys("k"), inventory.WithMaxBodyBytes(63)}, "at least 64"},
		{"body limit 0", ms, []inventory.Option{inventory.WithAPIKeys("k"), inventory.WithMaxBodyBytes(0)}, "at least 64"},
		{"body limit negative", ms, []inventory.Option{inventory.WithAPIKeys("k"), inventory.WithMaxBodyBytes(-1)}, "at least 64"},
		{"negative timeout", ms, []inventory.Option{inventory.WithAPIKeys("k"), inventory.WithStoreTimeout(-time.Second)}, "must not be negative"},
		{"nil option", ms, []inventory.Option{inventory.WithAPIKeys("k"), nil}, "option 2 is nil"},
	}
	for _, c := range cases {
		api, err := inventory.New(c.store, c.opts...)
		if err == nil || api != nil {
			t.Errorf("%s: New = %v, %v; want an error", c.name, api, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %q; want it to contain %q and no key", c.name, err, c.want)
		}
	}
	for _, opts := range [][]inventory.Option{
		{inventory.WithAPIKeys("k"), inventory.WithMaxBodyBytes(64), inventory.WithStoreTimeout(0)},
		{inventory.WithAuthenticator(auth), inventory.WithLogger(nil)},
	} {
		if _, err := inventory.New(ms, opts...); err != nil {
			t.Errorf("New with valid options: %v", err)
		}
	}
}

func TestCheckOrder(t *testing.T) {
	api := newAPI(t, newStore(t), inventory.WithMaxBodyBytes(64))
	big := strings.Repeat(" ", 100)
	cases := []struct {
		name string
		req  adapter.Request
		code inventory.Code
	}{
		{"method before auth", adapter.Request{Method: http.MethodGet, Route: inventory.RouteItem, PetID: "x", Authorization: "-"}, inventory.CodeMethodNotAllowed},
		{"auth before petId and body", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "x", ContentType: "text/plain", Body: adapter.StreamedBody(strings.NewReader("{")), Authorization: "-"}, inventory.CodeUnauthorized},
		{"petId before media type", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "x", ContentType: "text/plain", Body: adapter.StreamedBody(strings.NewReader(big))}, inventory.CodeInvalidPetID},
		{"media type before size", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "99", ContentType: "text/plain", ContentLength: 100, Body: adapter.StreamedBody(strings.NewReader(big))}, inventory.CodeUnsupportedMediaType},
		{"media type with an empty body", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "99", ContentType: "text/plain"}, inventory.CodeUnsupportedMediaType},
		{"size before body", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "99", ContentLength: 100, Body: adapter.StreamedBody(strings.NewReader(big))}, inventory.CodePayloadTooLarge},
		{"body before store", patch("99", `{"quantity":-1}`), inventory.CodeInvalidField},
		{"empty body", adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1"}, inventory.CodeInvalidJSON},
		{"store", patch("99", `{"quantity":1}`), inventory.CodeNotFound},
	}
	for _, c := range cases {
		status, _, body := serve(api, c.req)
		if status != c.code.Status() || !strings.Contains(body, `"code":"`+string(c.code)+`"`) {
			t.Errorf("%s: %d %s; want %s", c.name, status, body, c.code)
		}
	}
}

func TestServeSuccessAndErrorBodies(t *testing.T) {
	api := newAPI(t, newStore(t))
	status, h, body := serve(api, patch("0001", `{"quantity": 9}`))
	if status != 200 || body != `{"petId":1,"quantity":9,"status":"available"}` {
		t.Errorf("update: %d %s", status, body)
	}
	if len(h) != 3 || h["Content-Type"] != "application/json" || h["Cache-Control"] != "no-store" || h["X-Content-Type-Options"] != "nosniff" {
		t.Errorf("update headers: %v", h)
	}
	status, _, body = serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList})
	if status != 200 || body != `[{"petId":1,"quantity":9,"status":"available"},{"petId":2,"quantity":0,"status":"sold"}]` {
		t.Errorf("list: %d %s", status, body)
	}
	cases := []struct {
		req     adapter.Request
		status  int
		headers map[string]string
		body    string
	}{
		{adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "-"}, 401,
			map[string]string{"Www-Authenticate": `Bearer realm="inventory"`},
			errorBody("unauthorized", 401, "missing Authorization header; send 'Authorization: Bearer <API key>'")},
		{adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer wrong"}, 401,
			map[string]string{"Www-Authenticate": `Bearer realm="inventory", error="invalid_token"`},
			errorBody("unauthorized", 401, "the API key in the Authorization header is not valid")},
		{adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer"}, 401,
			map[string]string{"Www-Authenticate": `Bearer realm="inventory", error="invalid_token"`},
			errorBody("unauthorized", 401, "the Authorization header has the Bearer scheme but no key")},
		{adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: testKey}, 401,
			map[string]string{"Www-Authenticate": `Bearer realm="inventory"`},
			errorBody("unauthorized", 401, "the Authorization header does not use the Bearer scheme; send 'Authorization: Bearer <API key>'")},
		{adapter.Request{Method: http.MethodDelete, Route: inventory.RouteList}, 405,
			map[string]string{"Allow": "GET, HEAD"},
			errorBody("method_not_allowed", 405, "method DELETE is not allowed here; this path allows GET, HEAD")},
		{adapter.Request{Method: strings.Repeat("X", 100), Route: inventory.RouteItem}, 405,
			map[string]string{"Allow": "PATCH"},
			errorBody("method_not_allowed", 405, "method "+strings.Repeat("X", 32)+"… is not allowed here; this path allows PATCH")},
		{patch("77", `{"quantity":1}`), 404, nil, errorBody("not_found", 404, "no inventory entry exists for pet 77")},
	}
	for _, c := range cases {
		status, h, body := serve(api, c.req)
		if status != c.status || body != c.body {
			t.Errorf("%s %q: %d %s; want %d %s", c.req.Method, c.req.Authorization, status, body, c.status, c.body)
		}
		if len(h) != 3+len(c.headers) {
			t.Errorf("%s %q: headers %v; want the three common ones and %v", c.req.Method, c.req.Authorization, h, c.headers)
		}
		for name, value := range c.headers {
			if h[name] != value {
				t.Errorf("%s %q: %s = %q; want %q", c.req.Method, c.req.Authorization, name, h[name], value)
			}
		}
	}
}

func TestCustomAuthenticator(t *testing.T) {
	var logs logBuffer
	var result error
	var seen []string
	auth := inventory.AuthenticatorFunc(func(_ context.Context, key string) error {
		seen = append(seen, key)
		return result
	})
	api, err := inventory.New(newStore(t), inventory.WithAuthenticator(auth), inventory.WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		result error
		status int
		code   inventory.Code
		header string // WWW-Authenticate or Retry-After
	}{
		{"accept", nil, 200, "", ""},
		{"unauthorized", inventory.ErrUnauthorized, 401, inventory.CodeUnauthorized, `Bearer realm="inventory", error="invalid_token"`},
		{"unauthorized wrapped", fmt.Errorf("key revoked: %w", inventory.ErrUnauthorized), 401, inventory.CodeUnauthorized, `Bearer realm="inventory", error="invalid_token"`},
		{"unavailable", fmt.Errorf("vault: %w", inventory.ErrUnavailable), 503, inventory.CodeUnavailable, "1"},
		{"deadline", context.DeadlineExceeded, 503, inventory.CodeUnavailable, "1"},
		{"other error", errors.New("vault returned garbage"), 500, inventory.CodeInternal, ""},
		// The Authenticator doc: anything but unauthorized or unavailable
		// is a 500, whatever code it carries; a lookup's not_found must not
		// reach an unauthenticated client as 404.
		{"not found", fmt.Errorf("key lookup: %w", inventory.ErrNotFound), 500, inventory.CodeInternal, ""},
		{"invalid field", inventory.Item{PetID: 1, Status: "lost"}.Validate(), 500, inventory.CodeInternal, ""},
	}
	for _, c := range cases {
		result, seen = c.result, nil
		status, h, body := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "bearer   the-key"})
		if status != c.status || (c.code != "" && !strings.Contains(body, `"code":"`+string(c.code)+`"`)) {
			t.Errorf("%s: %d %s; want %d %s", c.name, status, body, c.status, c.code)
		}
		if len(seen) != 1 || seen[0] != "the-key" {
			t.Errorf("%s: the authenticator saw %q; want [the-key]", c.name, seen)
		}
		switch c.status {
		case 401:
			if h["Www-Authenticate"] != c.header {
				t.Errorf("%s: WWW-Authenticate %q", c.name, h["Www-Authenticate"])
			}
		case 503:
			if h["Retry-After"] != c.header {
				t.Errorf("%s: Retry-After %q", c.name, h["Retry-After"])
			}
		}
		if c.status == 500 && (!strings.Contains(body, "internal error; the server logged the details") || strings.Contains(body, "vault")) {
			t.Errorf("%s: 500 body %s is not the generic one", c.name, body)
		}
	}
	if !strings.Contains(logs.String(), "vault returned garbage") {
		t.Errorf("the unexpected authenticator error was not logged: %s", logs.String())
	}
	// No key sent: the authenticator is not asked.
	result, seen = nil, nil
	if status, _, _ := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Basic eA=="}); status != 401 || seen != nil {
		t.Errorf("Basic credentials: %d, authenticator saw %q", status, seen)
	}
}

func TestStoreFaults(t *testing.T) {
	var logs logBuffer
	store := newStore(t)
	api := newAPI(t, store, inventory.WithLogger(logs.logger()), inventory.WithStoreTimeout(50*time.Millisecond))
	cases := []struct {
		name   string
		hook   func(ctx context.Context, op string) error
		status int
		body   string
		logged string
	}{
		{"unavailable", func(context.Context, string) error {
			return inventory.Unavailable(errors.New("redis 10.9.8.7:6379: connection refused"))
		}, 503, errorBody("unavailable", 503, "the inventory store is unavailable; retry later"), "connection refused"},
		{"timeout", func(ctx context.Context, _ string) error {
			<-ctx.Done() // the store timeout ends it
			return fmt.Errorf("redis 10.9.8.7:6379: %w", ctx.Err())
		}, 503, errorBody("unavailable", 503, "the inventory store is unavailable; retry later"), "deadline exceeded"},
		{"unknown error", func(context.Context, string) error {
			return errors.New("redis 10.9.8.7:6379: WRONGTYPE")
		}, 500, errorBody("internal", 500, "internal error; the server logged the details"), "WRONGTYPE"},
		{"panic", func(context.Context, string) error {
			panic("store bug at 10.9.8.7")
		}, 500, errorBody("internal", 500, "internal error; the server logged the details"), "faultStore"},
	}
	for _, c := range cases {
		for _, req := range []adapter.Request{
			{Method: http.MethodGet, Route: inventory.RouteList},
			patch("1", `{"quantity":5}`),
		} {
			store.setHook(c.hook)
			status, h, body := serve(api, req)
			if status != c.status || body != c.body {
				t.Errorf("%s %s: %d %s; want %d %s", c.name, req.Method, status, body, c.status, c.body)
			}
			if (status == 503) != (h["Retry-After"] == "1") {
				t.Errorf("%s %s: Retry-After %q", c.name, req.Method, h["Retry-After"])
			}
			// The API keeps serving.
			store.setHook(nil)
			if status, _, _ := serve(api, patch("2", `{"quantity":1}`)); status != 200 {
				t.Errorf("after %s: the next update got %d", c.name, status)
			}
			// A list's store read may go on past one request's timeout (it
			// serves the lists after it): wait until lists are served again.
			inventory.WaitFor(t, "lists answer 200 again after "+c.name, func() bool {
				status, _, _ := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList})
				return status == 200
			})
		}
		if !strings.Contains(logs.String(), c.logged) {
			t.Errorf("%s: the log lacks %q:\n%s", c.name, c.logged, logs.String())
		}
	}
	// The panic was logged with its stack.
	out := logs.String()
	if !strings.Contains(out, "panic while serving") || !strings.Contains(out, "goroutine") || !strings.Contains(out, "SetQuantity") {
		t.Errorf("the panic's stack was not logged:\n%s", out)
	}
}

func TestAdapterBugIsInternal(t *testing.T) {
	var logs logBuffer
	api := newAPI(t, newStore(t), inventory.WithLogger(logs.logger()))
	status, _, body := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.Route(9)})
	if status != 500 || body != errorBody("internal", 500, "internal error; the server logged the details") {
		t.Errorf("unknown route: %d %s", status, body)
	}
	if !strings.Contains(logs.String(), "unknown route 9") {
		t.Errorf("not logged: %s", logs.String())
	}
}

// TestLogsHoldNoSecrets drives successful and failed authentications,
// store outages, store errors and a panic over real sockets, and then
// looks for the keys and the Authorization values in everything logged.
func TestLogsHoldNoSecrets(t *testing.T) {
	var logs logBuffer
	oldKey, newKey := "rotating-OLD-4f9a1c", "rotating-NEW-b72e0d"
	store := newStore(t)
	api, err := inventory.New(store, inventory.WithAPIKeys(oldKey, newKey), inventory.WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	headers := []string{
		"Bearer " + oldKey, "Bearer " + newKey, "bearer  " + newKey, "Bearer wrong-" + oldKey, "Bearer " + oldKey + "x",
		oldKey, "Basic " + newKey, "Token " + oldKey, "Bearer",
	}
	hooks := []func(context.Context, string) error{
		nil,
		func(context.Context, string) error { return inventory.ErrUnavailable },
		func(context.Context, string) error { return errors.New("boom") },
		func(context.Context, string) error { panic("kaboom") },
	}
	statuses := map[int]int{}
	for _, hook := range hooks {
		store.setHook(hook)
		for _, h := range headers {
			for _, method := range []string{http.MethodGet, http.MethodPatch} {
				path := "/v1/inventory"
				if method == http.MethodPatch {
					path += "/1"
				}
				req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"quantity":4}`))
				req.Header.Set("Authorization", h)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				statuses[resp.StatusCode]++
				for _, secret := range []string{oldKey, newKey, h} {
					if secret != "Bearer" && bytes.Contains(body, []byte(secret)) {
						t.Errorf("the response to %q holds %q: %s", h, secret, body)
					}
				}
			}
		}
	}
	for _, s := range []int{200, 401, 500, 503} {
		if statuses[s] == 0 {
			t.Errorf("no response had status %d (%v): the test did not drive every path", s, statuses)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "boom") || !strings.Contains(out, "kaboom") || !strings.Contains(out, "unavailable") {
		t.Fatalf("the log lacks the failures it should hold:\n%s", out)
	}
	for _, secret := range append([]string{oldKey, newKey, "rotating-"}, headers...) {
		if secret != "Bearer" && strings.Contains(out, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// failIfRead fails the test when the body is read at all.
type failIfRead struct{ t *testing.T }

func (r failIfRead) Read([]byte) (int, error) {
	r.t.Error("the body was read")
	return 0, io.EOF
}

// countingReader serves an endless body (a valid object followed by
// spaces) and counts what was read of it.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	const head = `{"quantity":1}`
	for i := range p {
		if r.n+i < len(head) {
			p[i] = head[r.n+i]
		} else {
			p[i] = ' '
		}
	}
	r.n += len(p)
	return len(p), nil
}

func TestBodyLimit(t *testing.T) {
	for _, limit := range []int64{64, 100, inventory.DefaultMaxBodyBytes} {
		var opts []inventory.Option
		if limit != inventory.DefaultMaxBodyBytes {
			opts = append(opts, inventory.WithMaxBodyBytes(limit))
		}
		api := newAPI(t, newStore(t), opts...)
		tooLarge := errorBody("payload_too_large", 413, fmt.Sprintf("the request body is larger than the limit of %d bytes", limit))

		// Content-Length over the limit: 413 without reading.
		status, _, body := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: limit + 1, Body: adapter.StreamedBody(failIfRead{t})})
		if status != 413 || body != tooLarge {
			t.Errorf("limit %d, Content-Length over it: %d %s", limit, status, body)
		}
		// Unknown length (chunked): 413 after at most limit+1 bytes.
		r := &countingReader{}
		status, _, body = serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: -1, Body: adapter.StreamedBody(r)})
		if status != 413 || body != tooLarge || int64(r.n) > limit+1 {
			t.Errorf("limit %d, endless chunked body: %d %s after reading %d bytes", limit, status, body, r.n)
		}
		// A Content-Length that lies low changes nothing.
		r = &countingReader{}
		status, _, _ = serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: 20, Body: adapter.StreamedBody(r)})
		if status != 413 || int64(r.n) > limit+1 {
			t.Errorf("limit %d, short Content-Length: %d after reading %d bytes", limit, status, r.n)
		}
		// Exactly at the limit: accepted, with or without a length, and
		// however the reader splits it.
		atLimit := `{"quantity":2}` + strings.Repeat(" ", int(limit)-len(`{"quantity":2}`))
		for name, rd := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return strings.NewReader(atLimit) },
			"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(atLimit)) },
			"data+EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(atLimit)) },
			"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(atLimit)) },
		} {
			for _, cl := range []int64{limit, -1} {
				status, _, body := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: cl, Body: adapter.StreamedBody(rd())})
				if status != 200 || body != `{"petId":1,"quantity":2,"status":"available"}` {
					t.Errorf("limit %d, body at the limit (%s, length %d): %d %s", limit, name, cl, status, body)
				}
			}
			status, _, _ := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: -1, Body: adapter.StreamedBody(io.MultiReader(rd(), strings.NewReader(" ")))})
			if status != 413 {
				t.Errorf("limit %d, one byte over (%s): %d", limit, name, status)
			}
		}
	}
}

func TestBodyReadErrors(t *testing.T) {
	api := newAPI(t, newStore(t))
	status, _, body := serve(api, patch("1", ""))
	if status != 400 || !strings.Contains(body, `"code":"invalid_json"`) {
		t.Errorf("empty body: %d %s", status, body)
	}
	// A reader that fails part-way: the body is not whole, so not JSON.
	broken := io.MultiReader(strings.NewReader(`{"quan`), iotest.ErrReader(errors.New("connection reset by peer")))
	status, _, body = serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", Body: adapter.StreamedBody(broken)})
	if status != 400 || body != errorBody("invalid_json", 400, "the request body could not be read completely: connection reset by peer") {
		t.Errorf("broken body: %d %s", status, body)
	}
	// Even when the part read is a complete object.
	broken = io.MultiReader(strings.NewReader(`{"quantity":8}`), iotest.ErrReader(iotest.ErrTimeout))
	if status, _, _ := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", Body: adapter.StreamedBody(broken)}); status != 400 {
		t.Errorf("a complete object followed by a read error: %d; want 400", status)
	}
	// A host's http.MaxBytesReader with a smaller limit is a 413 too.
	limited := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(`{"quantity":1}`+strings.Repeat(" ", 100))), 20)
	status, _, body = serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", Body: adapter.StreamedBody(limited)})
	if status != 413 || !strings.Contains(body, `"code":"payload_too_large"`) {
		t.Errorf("MaxBytesReader: %d %s", status, body)
	}
	// Nothing was written by any of these.
	_, _, list := serve(api, adapter.Request{Method: http.MethodGet, Route: inventory.RouteList})
	if !strings.HasPrefix(list, `[{"petId":1,"quantity":3,`) {
		t.Errorf("a failed update wrote: %s", list)
	}
}

func TestServeHTTP(t *testing.T) {
	api := newAPI(t, newStore(t))
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	do := func(method, path, auth, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	bearer := "Bearer " + testKey
	notFound := errorBody("not_found", 404, "no such route; the inventory API serves GET and HEAD /inventory and PATCH /inventory/{petId}")
	cases := []struct {
		method, path, auth, body string
		status                   int
		want                     string // exact body, or a code
	}{
		{"GET", "/v1/inventory", bearer, "", 200, `[{"petId":1,"quantity":3,"status":"available"},{"petId":2,"quantity":0,"status":"sold"}]`},
		{"GET", "/v1/inventory?limit=1&x", bearer, "", 200, `[{"petId":1,"quantity":3,"status":"available"},{"petId":2,"quantity":0,"status":"sold"}]`},
		{"PATCH", "/v1/inventory/2", bearer, `{"quantity":11}`, 200, `{"petId":2,"quantity":11,"status":"sold"}`},
		{"GET", "/v1/nope", bearer, "", 404, notFound},
		{"GET", "/v1/", "", "", 404, notFound},
		{"GET", "/v1/inventory/1/extra", bearer, "", 404, notFound},
		{"GET", "/v1/inventoryx", bearer, "", 404, notFound},
		{"PATCH", "/v1/inventory/", bearer, `{"quantity":1}`, 400, "invalid_pet_id"},
		{"GET", "/v1/inventory/", bearer, "", 405, "method_not_allowed"},
		{"PATCH", "/v1/inventory/%31", bearer, `{"quantity":1}`, 200, `{"petId":1,"quantity":1,"status":"available"}`},
		{"PATCH", "/v1/inventory/1%2F2", bearer, `{"quantity":1}`, 404, notFound},
		{"PATCH", "/v1/inventory/abc", "", `{"quantity":1}`, 401, "unauthorized"},
	}
	for _, c := range cases {
		resp, body := do(c.method, c.path, c.auth, c.body)
		if resp.StatusCode != c.status || (body != c.want && !strings.Contains(body, `"code":"`+c.want+`"`)) {
			t.Errorf("%s %s: %d %s; want %d %s", c.method, c.path, resp.StatusCode, body, c.status, c.want)
		}
		h := resp.Header
		cache, vary, etag := "no-store", "", false
		if c.method == "GET" && c.status == 200 { // a list answer
			cache, vary, etag = "private, no-cache", "Accept-Encoding", true
		}
		if h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != cache || h.Get("Vary") != vary ||
			(h.Get("ETag") != "") != etag || h.Get("X-Content-Type-Options") != "nosniff" || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s %s: headers %v", c.method, c.path, h)
		}
	}
	resp, _ := do("PATCH", "/v1/inventory/1", "Bearer nope", `{"quantity":1}`)
	if got := resp.Header.Get("Www-Authenticate"); got != `Bearer realm="inventory", error="invalid_token"` {
		t.Errorf("WWW-Authenticate over the wire: %q", got)
	}
}

// Middleware around the handler sees the headers the API set through the
// usual http.Header methods.
func TestServeHTTPHeadersAreCanonical(t *testing.T) {
	api := newAPI(t, newStore(t))
	for _, c := range []struct {
		req    *http.Request
		header string
		want   string
	}{
		{httptest.NewRequest("GET", "/inventory", nil), "Www-Authenticate", `Bearer realm="inventory"`},
		{httptest.NewRequest("PUT", "/inventory", nil), "Allow", "GET, HEAD"},
		{httptest.NewRequest("GET", "/inventory", nil), "Content-Length", "0"},
	} {
		rec := httptest.NewRecorder()
		if c.header != "Www-Authenticate" {
			c.req.Header.Set("Authorization", "Bearer "+testKey)
		}
		api.ServeHTTP(rec, c.req)
		got := rec.Header().Get(c.header)
		if c.header == "Content-Length" {
			if got != fmt.Sprint(rec.Body.Len()) {
				t.Errorf("Content-Length %q for a %d-byte body", got, rec.Body.Len())
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s %s: Header().Get(%q) = %q; want %q (header map %v)", c.req.Method, c.req.URL.Path, c.header, got, c.want, rec.Header())
		}
		for name := range rec.Header() {
			if name != http.CanonicalHeaderKey(name) {
				t.Errorf("header %q is not in canonical form", name)
			}
		}
	}
}

// A limit too large to matter ("no limit") still reads bodies.
func TestHugeBodyLimit(t *testing.T) {
	for _, limit := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt32, 1 << 40} {
		api := newAPI(t, newStore(t), inventory.WithMaxBodyBytes(limit))
		for _, cl := range []int64{-1, 15} {
			status, _, body := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", ContentLength: cl, Body: adapter.StreamedBody(strings.NewReader(`{"quantity":12}`))})
			if status != 200 {
				t.Errorf("WithMaxBodyBytes(%d), Content-Length %d: %d %s", limit, cl, status, body)
			}
		}
	}
}

func TestPanickingAuthenticator(t *testing.T) {
	var logs logBuffer
	calls := 0
	auth := inventory.AuthenticatorFunc(func(context.Context, string) error {
		calls++
		if calls == 1 {
			panic("authenticator bug: no key table")
		}
		return nil
	})
	api, err := inventory.New(newStore(t), inventory.WithAuthenticator(auth), inventory.WithLogger(logs.logger()))
	if err != nil {
		t.Fatal(err)
	}
	req := adapter.Request{Method: http.MethodGet, Route: inventory.RouteList, Authorization: "Bearer k"}
	if status, _, body := serve(api, req); status != 500 || body != errorBody("internal", 500, "internal error; the server logged the details") {
		t.Errorf("panicking authenticator: %d %s", status, body)
	}
	if !strings.Contains(logs.String(), "authenticator bug: no key table") || !strings.Contains(logs.String(), "TestPanickingAuthenticator") {
		t.Errorf("the panic was not logged with its stack: %s", logs.String())
	}
	if status, _, _ := serve(api, req); status != 200 {
		t.Errorf("after the panic: %d", status)
	}
}

// TestOutageWarnedOnce: a store that fails every request alike (a
// configuration fault the store has logged with its fix, Redis down) is
// warned about once, not once per request; the rest go to Debug, and a
// different cause is warned about again.
func TestOutageWarnedOnce(t *testing.T) {
	store := newStore(t)
	cause := errors.New("redis: the ACL user may not run XADD")
	store.setHook(func(context.Context, string) error { return inventory.Unavailable(cause) })
	var logs logBuffer
	api := newAPI(t, store, inventory.WithLogger(logs.logger()))
	for range 50 {
		status, h, _ := serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1",
			Body: adapter.BufferedBody([]byte(`{"quantity":3}`))})
		if status != http.StatusServiceUnavailable || h["Retry-After"] == "" {
			t.Fatalf("status %d, Retry-After %q; want 503 with Retry-After", status, h["Retry-After"])
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d WARN lines over 50 requests failing alike, want 1:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "level=DEBUG msg=\"inventory: store unavailable\""); n != 49 {
		t.Errorf("%d DEBUG lines for the repeats, want 49", n)
	}
	other := errors.New("redis: dial tcp 127.0.0.1:6379: connection refused")
	store.setHook(func(context.Context, string) error { return inventory.Unavailable(other) })
	serve(api, adapter.Request{Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1",
		Body: adapter.BufferedBody([]byte(`{"quantity":3}`))})
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Fatalf("%d WARN lines after a new cause, want 2", n)
	}
}
