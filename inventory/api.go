package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/petinventory/petinventory/internal/logrepeat"
	"github.com/petinventory/petinventory/inventory/internal/wire"
)

// Route names one of the two routes of the API. An adapter that matched
// the route itself passes it (API.ServeRoute, adapter.Request) instead of
// the path; observers see it in RequestObservation.
type Route int

const (
	// RouteList is {prefix}/inventory: GET lists the inventory; HEAD
	// answers as GET without the body.
	RouteList Route = iota + 1
	// RouteItem is {prefix}/inventory/{petId}: PATCH sets a quantity.
	RouteItem
)

// Method is the method a route serves: GET for the list (which also
// answers HEAD, as GET without the body), PATCH for the item.
func (r Route) Method() string {
	if r == RouteList {
		return http.MethodGet
	}
	return http.MethodPatch
}

// Allow is the route's Allow header on a 405: "GET, HEAD" for the list,
// "PATCH" for the item.
func (r Route) Allow() string {
	if r == RouteList {
		return "GET, HEAD"
	}
	return http.MethodPatch
}

// String returns "list" or "item", the route's name in metrics and logs.
func (r Route) String() string {
	switch r {
	case RouteList:
		return "list"
	case RouteItem:
		return "item"
	}
	return "Route(" + strconv.Itoa(int(r)) + ")"
}

// API serves the inventory routes. It is safe for concurrent use. Build it
// with New, then mount it: as an http.Handler, on a ServeMux with Register,
// before a router's matching with Middleware (chi, echo), with the Gin and
// Fiber adapters, or through package inventory/adapter for any other
// framework. Every rule of the contract is applied here, once.
type API struct {
	svc          *Service
	auth         Authenticator
	maxBody      int64
	log          *slog.Logger
	storeTimeout time.Duration
	bodyTimeout  time.Duration  // 0: the server's timeouts bound the body
	obs          Observer       // nil: nothing is measured
	lists        lister         // the list body, kept current (listcache.go)
	outages      logrepeat.Gate // the store-unavailable warnings
	listCache    *wire.Header   // a list's Cache-Control under WithStaleIfError; nil: the default
}

// New returns an API over store. It fails, rather than serve the API open,
// when neither WithAPIKeys nor WithAuthenticator is given, and on any
// invalid option.
func New(store Store, opts ...Option) (*API, error) {
	if store == nil {
		return nil, errors.New("inventory: New: store is nil")
	}
	svc := &Service{store: store}
	c := config{maxBodyBytes: DefaultMaxBodyBytes, bodyTimeout: DefaultBodyTimeout}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("inventory: New: option %d is nil", i+1)
		}
		o(&c)
	}
	a := &API{svc: svc, maxBody: c.maxBodyBytes, log: c.logger, storeTimeout: c.storeTimeout, bodyTimeout: c.bodyTimeout, obs: c.observer}
	a.lists.api, a.lists.maxStale, a.lists.staleIfError, a.lists.now = a, c.maxStaleness, c.staleIfError, time.Now
	switch {
	case c.keysSet && c.authenticator != nil:
		return nil, errors.New("inventory: New: WithAPIKeys and WithAuthenticator both given; use one")
	case c.authenticator != nil:
		a.auth = c.authenticator
	case c.keysSet:
		var err error
		if a.auth, err = NewKeyAuthenticator(c.keys...); err != nil {
			return nil, fmt.Errorf("inventory: New: WithAPIKeys: %w", err)
		}
	default:
		return nil, errors.New("inventory: New: no API key configured: pass WithAPIKeys or WithAuthenticator (the API is never served without authentication)")
	}
	if a.maxBody < 64 {
		return nil, fmt.Errorf("inventory: New: WithMaxBodyBytes(%d): the limit must be at least 64 bytes", a.maxBody)
	}
	if a.bodyTimeout < 0 {
		return nil, fmt.Errorf("inventory: New: WithBodyTimeout(%v): must not be negative", a.bodyTimeout)
	}
	if c.maxStaleness < 0 {
		return nil, fmt.Errorf("inventory: New: WithMaxStaleness(%v): must not be negative", c.maxStaleness)
	}
	if a.storeTimeout < 0 {
		return nil, fmt.Errorf("inventory: New: WithStoreTimeout(%v): must not be negative", a.storeTimeout)
	}
	if err := checkStaleIfError(c); err != nil {
		return nil, fmt.Errorf("inventory: New: %w", err)
	}
	if c.staleIfError > 0 {
		a.listCache = wire.ListCacheControl(int64(c.staleIfError / time.Second))
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	return a, nil
}

// checkStaleIfError checks WithStaleIfError's bound against the options
// it works with.
func checkStaleIfError(c config) error {
	d := c.staleIfError
	switch {
	case d == 0:
		return nil
	case d < 0:
		return fmt.Errorf("WithStaleIfError(%v): must not be negative (0 turns it off)", d)
	case d%time.Second != 0:
		return fmt.Errorf("WithStaleIfError(%v): must be a whole number of seconds, as Age and Cache-Control's stale-if-error count it", d)
	case c.storeTimeout <= 0:
		return fmt.Errorf("WithStaleIfError(%v) needs WithStoreTimeout: without a store timeout a list waits for a store that stopped answering as long as its request lasts, and is never answered stale", d)
	case d <= c.maxStaleness:
		return fmt.Errorf("WithStaleIfError(%v): must be longer than WithMaxStaleness(%v), which already answers lists from a state that old", d, c.maxStaleness)
	}
	return nil
}

// BodyTimeout returns how long the API waits for an update's body
// (WithBodyTimeout); 0 when the server's timeouts bound it. An adapter
// whose framework reads a body before any handler runs (fasthttp) bounds
// that read with it.
func (a *API) BodyTimeout() time.Duration { return a.bodyTimeout }

// Service returns the Service the API serves, for seeding and
// administration with the same rules.
func (a *API) Service() *Service { return a.svc }

func init() {
	wire.Serve = func(api any, ctx context.Context, req *wire.Request) wire.Response {
		return api.(*API).serveObserved(ctx, req)
	}
}

// serveObserved answers one request and tells the observer, if any. The
// answer to HEAD is the GET's without its body (RFC 9110 9.3.2): the same
// status and headers, Content-Length and Content-Encoding included.
func (a *API) serveObserved(ctx context.Context, req *wire.Request) wire.Response {
	var start time.Time
	if a.obs != nil {
		start = time.Now()
	}
	resp := a.serve(ctx, req)
	if req.Method == http.MethodHead {
		resp.OmitBody()
	}
	if a.obs != nil {
		a.observeRequest(ctx, req, &resp, start)
	}
	return resp
}

// serve answers one request. It never panics: a panic below it (in a
// store, say) is logged with its stack and answered 500 internal.
//
// The checks run in the contract's order: route (method), authentication,
// petId, media type, body size, body, then the store.
func (a *API) serve(ctx context.Context, req *wire.Request) (resp wire.Response) {
	defer func() {
		if v := recover(); v != nil {
			a.logPanic(ctx, v, "method", req.Method, "route", Route(req.Route))
			resp = errorResponse(errInternal)
		}
	}()
	route := Route(req.Route)
	if route != RouteList && route != RouteItem {
		// An adapter bug, not a client error.
		panic(fmt.Sprintf("inventory: Serve: unknown route %d", req.Route))
	}
	if req.Method != route.Method() && (route != RouteList || req.Method != http.MethodHead) {
		resp = errorResponse(newError(CodeMethodNotAllowed, "method %s is not allowed here; this path allows %s", methodForMessage(req.Method), route.Allow()))
		resp.Allow = route.Allow()
		return resp
	}
	if r, ok := a.authenticate(ctx, req.Authorization); !ok {
		return r
	}
	if route == RouteList {
		return a.list(ctx, req)
	}
	return a.update(ctx, req)
}

func methodForMessage(m string) string {
	if len(m) > 32 {
		return m[:32] + "…"
	}
	return m
}

func (a *API) authenticate(ctx context.Context, header string) (wire.Response, bool) {
	key, sent, msg := bearerKey(header)
	if msg == "" {
		if _, builtin := a.auth.(*keySet); !builtin {
			// A user's Authenticator may keep the key (a cache): give it
			// a copy, not the adapter's possibly reused memory.
			key = strings.Clone(key)
		}
		err := a.auth.Authenticate(ctx, key)
		if err == nil {
			return wire.Response{}, true
		}
		if !errors.Is(err, ErrUnauthorized) {
			if e, _ := asError(err); e.code != CodeUnavailable {
				// As the Authenticator doc says, anything but unauthorized
				// or unavailable is a 500: a key lookup's not_found (say)
				// must not reach an unauthenticated client as a 404.
				err = fmt.Errorf("the Authenticator failed: %v", err)
			}
			return a.fail(ctx, "authenticate", err), false
		}
		msg = "the API key in the Authorization header is not valid"
	}
	r := errorResponse(newError(CodeUnauthorized, "%s", msg))
	r.WWWAuthenticate = challengeNoCredentials
	if sent {
		r.WWWAuthenticate = challengeInvalidToken
	}
	return r, false
}

// list answers a list: the store's current state (asked for first, also
// for a conditional list, so that no 304 is older than a write answered
// before the request began), or under WithMaxStaleness a state read within
// the bound unless the request asks for no-cache, or under
// WithStaleIfError, when the store is out, the held state within that
// bound, marked stale; gzip when the client accepts it and the body is
// large enough, 304 when If-None-Match names the tag of what would be
// sent.
func (a *API) list(ctx context.Context, req *wire.Request) wire.Response {
	strict := noCache(req.CacheControl)
	st, err := a.lists.recent(ctx, strict)
	var age time.Duration
	stale := false
	if err != nil {
		if st, age, stale = a.lists.stale(ctx, err, strict); !stale {
			return a.fail(ctx, "list", err)
		}
	}
	r := wire.Response{Status: http.StatusOK, Pieces: st.Pieces, ContentLength: st.ContentLength, ETag: st.ETag,
		ListCache: a.listCache, Stale: stale, StaleAge: age}
	if st.GzipPieces != nil && acceptsGzip(req.AcceptEncoding) {
		r.Pieces, r.ContentLength, r.ETag, r.Gzip = st.GzipPieces, st.GzipContentLength, st.GzipETag, true
	}
	if req.IfNoneMatch != "" && noneMatch(req.IfNoneMatch, r.ETag[0]) {
		r.Status, r.Pieces, r.ContentLength, r.Gzip = http.StatusNotModified, nil, nil, false
	}
	return r
}

// setQuantity is the store call of an update, under the store deadline and
// observed.
func (a *API) setQuantity(ctx context.Context, petID int64, qty int) (item Item, err error) {
	ctx, cancel := a.storeContext(ctx)
	defer cancel()
	if a.obs != nil {
		defer a.observeStore(ctx, StoreOpSetQuantity, time.Now(), &err)
	}
	return a.svc.SetQuantity(ctx, petID, qty)
}

func (a *API) update(ctx context.Context, req *wire.Request) wire.Response {
	petID, err := parsePetID(req.PetID)
	if err != nil {
		return errorResponse(err)
	}
	if err := checkMediaType(req.ContentType); err != nil {
		return errorResponse(err)
	}
	buf := wire.GetBuf()
	defer func() { wire.PutBuf(buf) }()
	body, err := a.readBody(req, buf)
	if err != nil {
		return errorResponse(err)
	}
	qty, err := parseUpdate(body)
	if err != nil {
		return errorResponse(err)
	}
	item, serr := a.setQuantity(ctx, petID, qty)
	if serr != nil {
		if errors.Is(serr, ErrNotFound) {
			// Name the pet: the store's sentinel cannot.
			return errorResponse(newError(CodeNotFound, "no inventory entry exists for pet %d", petID))
		}
		return a.fail(ctx, "update", serr)
	}
	out := wire.GetBuf()
	r := wire.Response{Status: http.StatusOK}
	r.SetBody(out, item.appendJSON((*out)[:0]))
	return r
}

// readBody reads the body into buf, failing with 413 as soon as it is known
// to be larger than the limit: from Content-Length before reading anything,
// or after reading one byte past the limit; and with 408 when it has not
// all come within the body timeout.
func (a *API) readBody(req *wire.Request, buf *[]byte) ([]byte, *Error) {
	tooLarge := func() *Error {
		return newError(CodePayloadTooLarge, "the request body is larger than the limit of %d bytes", a.maxBody)
	}
	if req.BodyReader == nil {
		if int64(len(req.BodyBytes)) > a.maxBody {
			return nil, tooLarge()
		}
		return req.BodyBytes, nil
	}
	if req.ContentLength > a.maxBody {
		return nil, tooLarge()
	}
	timedOut := false
	if a.bodyTimeout > 0 && req.SetReadDeadline != nil && req.SetReadDeadline(time.Now().Add(a.bodyTimeout)) == nil {
		// Cleared once read, so that what else the connection carries is
		// the server's to bound; kept past after a timeout, so that the
		// server reads no more of a body that stalled and closes the
		// connection after the answer.
		defer func() {
			if !timedOut {
				_ = req.SetReadDeadline(time.Time{})
			}
		}()
	}
	b := (*buf)[:0]
	// min: a limit meant as "none" (math.MaxInt64) must not overflow.
	limit := int(min(a.maxBody, math.MaxInt-1)) + 1
	for {
		if len(b) == cap(b) {
			grow := min(2*cap(b)+512, limit)
			nb := make([]byte, len(b), max(grow, len(b)+1))
			copy(nb, b)
			b = nb
		}
		n, err := req.BodyReader.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if int64(len(b)) > a.maxBody {
			return nil, tooLarge()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge()
			}
			if isTimeout(err) {
				timedOut = true
				return nil, newError(CodeRequestTimeout, "the request body did not all arrive within %v of the server starting to read it", a.bodyTimeout)
			}
			return nil, newError(CodeInvalidJSON, "the request body could not be read completely: %v", err)
		}
	}
	if cap(b) <= wire.MaxPooledBuf {
		*buf = b
	}
	return b, nil
}

// isTimeout reports whether a body read failed on a deadline: the API's
// body timeout, or the server's own read timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// parsePetID parses the {petId} path segment: a base-10 signed 64-bit
// integer, as strconv.ParseInt reads it (an optional sign, decimal digits,
// nothing else). Anything else is an invalid_pet_id error.
func parsePetID(s string) (int64, *Error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return id, nil
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	if s == "" {
		return 0, newError(CodeInvalidPetID, "the petId path segment is empty; it must be a base-10 64-bit integer")
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, newError(CodeInvalidPetID, "petId %q is outside the 64-bit integer range", shown)
	}
	return 0, newError(CodeInvalidPetID, "petId %q is not a base-10 64-bit integer", shown)
}

// checkMediaType accepts an absent Content-Type (read as JSON),
// application/json and application/merge-patch+json, with any parameters
// but a charset other than UTF-8 (JSON is UTF-8, RFC 8259).
func checkMediaType(ct string) *Error {
	if ct == "" || ct == "application/json" {
		return nil // the common cases, without parsing
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return newError(CodeUnsupportedMediaType, "the Content-Type header could not be parsed; send application/json")
	}
	if mt != "application/json" && mt != "application/merge-patch+json" {
		if len(mt) > 64 {
			mt = mt[:64] + "…"
		}
		return newError(CodeUnsupportedMediaType, "Content-Type %q is not supported; send application/json", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		if len(cs) > 32 {
			cs = cs[:32] + "…"
		}
		return newError(CodeUnsupportedMediaType, "charset %q is not supported; JSON bodies must be UTF-8", cs)
	}
	return nil
}

func (a *API) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.storeTimeout > 0 {
		return context.WithTimeout(ctx, a.storeTimeout)
	}
	return ctx, func() {}
}

// fail turns a store or authenticator error into its response, logging
// what a person should look at: unexpected errors with detail, outages as
// warnings.
func (a *API) fail(ctx context.Context, op string, err error) wire.Response {
	e, unexpected := asError(err)
	switch {
	case !unexpected && errors.Is(ctx.Err(), context.Canceled):
		// The client went away: the answer (503) reaches nobody, and a
		// disconnect is no outage worth a warning. A store deadline
		// passing is one, and is warned about below.
		a.log.DebugContext(ctx, "inventory: request context ended", "op", op, "error", err.Error())
	case unexpected:
		a.log.ErrorContext(ctx, "inventory: unexpected error", "op", op, "error", err.Error())
	case e.code == CodeUnavailable:
		// An outage fails every request alike, and the Observer counts
		// them: it is warned about once a minute, not once per request.
		msg := err.Error()
		if ok, held := a.outages.Allow(msg, time.Now()); ok {
			a.log.WarnContext(ctx, "inventory: store unavailable", "op", op, "error", msg, "repeats_held_back", held)
		} else {
			a.log.DebugContext(ctx, "inventory: store unavailable", "op", op, "error", msg)
		}
	}
	return errorResponse(e)
}

// logPanic logs a panic below the API (in a store, say) with its stack:
// the request is answered 500, the process goes on.
func (a *API) logPanic(ctx context.Context, v any, attrs ...any) {
	a.log.ErrorContext(ctx, "inventory: panic while serving a request",
		append(attrs, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
}
