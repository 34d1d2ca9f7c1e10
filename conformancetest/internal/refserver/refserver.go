package refserver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BodyTimeout is how long the reference server waits for a body.
const BodyTimeout = 300 * time.Millisecond

// Key is the key of the reference server.
const Key = "reference-key-0123456789"

// maxBodyBytes is the server's body limit: the library's default, and
// the suite's (conformancetest.DefaultMaxBodyBytes).
const maxBodyBytes = 16 << 10

// Server is the reference server; its zero value keeps every rule. Start
// serves it.
type Server struct {
	// GzipMin is the smallest list body that is compressed.
	GzipMin int
	// LostUpdate stores, unlocks, waits half a millisecond and reads the
	// value back for the answer: an update whose answer is not atomic
	// with its write.
	LostUpdate bool
	// Broken names one rule the server breaks (see serveList).
	Broken string
	// ExtraPets adds pets 1000, 1001, … to the seed.
	ExtraPets int
	// MaxStaleness, when not zero, is a staleness bound: a list without
	// Cache-Control: no-cache is answered from the state held since a
	// read sent at most this long before, as late as the bound lets it
	// (no renewal before), so that every default list that may be stale
	// is; a strict list reads the state as it is.
	MaxStaleness time.Duration
	// StaleIfError, when not zero, is a stale-if-error bound (see
	// stale.go): every list answer declares it, and during an outage
	// (Outage) a default list is answered from the last state read,
	// marked stale, while that state is at most this old.
	StaleIfError time.Duration
	// Outage, when not nil, says whether the store is unavailable: then
	// every update and every strict list is answered 503, and a default
	// list as StaleIfError says (503 without it).
	Outage func() bool

	mu      sync.Mutex
	qty     map[int64]int64
	status  map[int64]string
	version uint64
	held    *refState // under mu
	// confirmed is the last state read from the inventory (strict or
	// not); frozen the state "stale beyond its bound" serves.
	confirmed, frozen *refState
}

// refState is a state of the inventory as a list shows it, and when the
// read that took it was sent.
type refState struct {
	body    []byte
	version uint64
	read    time.Time
}

// state returns the state a list r shows: the held one under a bound
// unless r asks for no-cache or it is older than the bound, else the
// current one (then held).
func (rs *Server) state(r *http.Request) refState {
	sent := time.Now() // before the lock: a write it misses was answered after
	rs.mu.Lock()
	defer rs.mu.Unlock()
	strict := strict(r)
	if rs.MaxStaleness > 0 && !strict && rs.held != nil && sent.Sub(rs.held.read) <= rs.MaxStaleness {
		return *rs.held
	}
	st := rs.current(sent)
	if !strict {
		rs.held = &st
	}
	return st
}

// current is the state of the inventory now, read at sent (under mu).
func (rs *Server) current(sent time.Time) refState {
	ids := make([]int64, 0, len(rs.qty))
	for id := range rs.qty {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"petId":%d,"quantity":%d,"status":%q}`, id, rs.qty[id], rs.status[id])
	}
	buf.WriteByte(']')
	st := refState{body: buf.Bytes(), version: rs.version, read: sent}
	rs.confirmed = &st
	return st
}

// Seed gives the server its inventory: pets 1 to 4 (available, sold,
// pending, available) and the ExtraPets. Start seeds it; a test that
// serves it otherwise (behind a wrapper of its own) seeds it first.
func (rs *Server) Seed() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.qty = map[int64]int64{1: 5, 2: 0, 3: 12, 4: 7}
	rs.status = map[int64]string{1: "available", 2: "sold", 3: "pending", 4: "available"}
	for i := range int64(rs.ExtraPets) {
		rs.qty[1000+i], rs.status[1000+i] = i, "available"
	}
}

// Start seeds the server and serves it on a new httptest server, closed
// when t ends, and returns its base URL (…/v1).
func (rs *Server) Start(t testing.TB) string {
	t.Helper()
	rs.Seed()
	srv := httptest.NewServer(rs)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// Quantities returns the quantity of every pet, as they are now.
func (rs *Server) Quantities() map[int64]int64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return maps.Clone(rs.qty)
}

// NewState makes the state a new one without changing a quantity, as a
// write of the quantity a pet has does: the lists' body stays, their tag
// changes.
func (rs *Server) NewState() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.version++
}

// Error answers an Error body, as the API does.
func Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"code": code, "message": msg, "status": status})
	w.Write(b)
}

// ServeHTTP serves the routes under /v1.
func (rs *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var list bool
	var idText string
	switch {
	case p == "/v1/inventory":
		list = true
	case strings.HasPrefix(p, "/v1/inventory/") && !strings.Contains(p[len("/v1/inventory/"):], "/"):
		idText = p[len("/v1/inventory/"):]
	default:
		http.NotFound(w, r)
		return
	}
	allow := http.MethodPatch
	if list {
		allow = "GET, HEAD"
	}
	if r.Method != allow && !(list && (r.Method == http.MethodGet || r.Method == http.MethodHead && rs.Broken != "405 for HEAD")) {
		if rs.Broken == "plain 404 for unknown methods" && !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}, r.Method) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		Error(w, http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed; use "+allow)
		return
	}
	if list && rs.Broken == "304 before auth" && r.Header.Get("If-None-Match") == "*" {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if auth := r.Header.Get("Authorization"); auth != "Bearer "+Key && !(r.Method == http.MethodHead && rs.Broken == "HEAD before auth") {
		challenge := `Bearer realm="inventory"`
		if auth != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		Error(w, http.StatusUnauthorized, "unauthorized", "a valid Authorization: Bearer key is required")
		return
	}
	if list {
		rs.serveList(w, r) // it knows which lists an outage leaves answered
		return
	}
	if rs.down() {
		unavailable(w)
		return
	}
	rs.serveUpdate(w, r, idText)
}

// unavailable answers 503, as a deployment whose store is unavailable.
func unavailable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	Error(w, http.StatusServiceUnavailable, "unavailable", "the store is unavailable")
}

// acceptsGzip applies Accept-Encoding's q-values to gzip.
func acceptsGzip(h string) bool {
	gz, star := -1.0, -1.0
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, _ = strconv.ParseFloat(v, 64)
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "gzip", "x-gzip":
			gz = q
		case "*":
			star = q
		}
	}
	if gz < 0 {
		gz = star
	}
	return gz > 0
}

// serveList answers a list (GET or HEAD), conditional or not, gzip when
// asked and the list is long enough.
func (rs *Server) serveList(w http.ResponseWriter, r *http.Request) {
	st, stale, ok := rs.listState(r)
	if !ok {
		unavailable(w)
		return
	}
	version := st.version
	if rs.Broken == "tag never changes" {
		version = 0
	}
	tag := fmt.Sprintf(`"v%d"`, version)
	if rs.Broken == "a new tag on every list" {
		tag = fmt.Sprintf(`"t%d"`, time.Now().UnixNano())
	}
	body := st.body
	zip := acceptsGzip(r.Header.Get("Accept-Encoding")) && len(body) >= rs.GzipMin
	if rs.Broken == "gzip ignoring q=0" && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		zip = true
	}
	if zip {
		tag = strings.TrimSuffix(tag, `"`) + `-gzip"`
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	if rs.Broken == "no-store on the list" {
		h.Set("Cache-Control", "no-store")
	}
	rs.staleHeaders(h, st, stale)
	if rs.Broken != "no Vary" {
		h.Set("Vary", "Accept-Encoding")
	}
	h.Set("ETag", tag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && rs.Broken != "ignores If-None-Match" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag || rs.Broken == "304 for any tag" {
				h.Del("Content-Type")
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	if zip {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if rs.Broken == "gzip of another body" {
			zw.Write(body[:len(body)-1])
			zw.Write([]byte(" ]"))
		} else {
			zw.Write(body)
		}
		zw.Close()
		body = z.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if rs.Broken == "HEAD with another Content-Length" && r.Method == http.MethodHead {
		h.Set("Content-Length", strconv.Itoa(len(body)+1))
	}
	w.Write(body)
}

// serveUpdate answers an update of pet idText.
func (rs *Server) serveUpdate(w http.ResponseWriter, r *http.Request, idText string) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 0 || strconv.FormatInt(id, 10) != idText {
		Error(w, http.StatusBadRequest, "invalid_pet_id", "petId must be a non-negative integer")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && mt != "application/merge-patch+json") || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
			Error(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
			return
		}
	}
	var buf bytes.Buffer
	if rs.Broken != "no body timeout" {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(BodyTimeout))
	}
	n, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBodyBytes+1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		Error(w, http.StatusRequestTimeout, "request_timeout", "the body did not arrive in time")
		return
	}
	if n > maxBodyBytes {
		Error(w, http.StatusRequestEntityTooLarge, "payload_too_large", "the body is over 16384 bytes")
		return
	}
	rs.mu.Lock()
	_, known := rs.qty[id]
	rs.mu.Unlock()
	if !known {
		Error(w, http.StatusNotFound, "not_found", "no pet "+idText)
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m == nil {
		Error(w, http.StatusBadRequest, "invalid_json", "the body is not a JSON object")
		return
	}
	for k := range m {
		if k != "quantity" {
			Error(w, http.StatusBadRequest, "unknown_field", "unknown member "+k)
			return
		}
	}
	raw, ok := m["quantity"]
	if !ok {
		Error(w, http.StatusBadRequest, "missing_field", "quantity is required")
		return
	}
	q, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || q < 0 {
		Error(w, http.StatusBadRequest, "invalid_field", "quantity must be an integer from 0 to 2147483647")
		return
	}
	rs.mu.Lock()
	rs.qty[id] = q
	rs.version++
	if rs.LostUpdate {
		rs.mu.Unlock()
		time.Sleep(500 * time.Microsecond)
		rs.mu.Lock()
		q = rs.qty[id]
	}
	st := rs.status[id]
	rs.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprintf(w, `{"petId":%d,"quantity":%d,"status":%q}`, id, q, st)
}
