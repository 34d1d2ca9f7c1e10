package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Route names one of the two routes of the API. Adapters know which route
// they registered, so they pass it instead of the path.
type Route int

const (
	// RouteList is {prefix}/inventory: GET lists the inventory.
	RouteList Route = iota + 1
	// RouteItem is {prefix}/inventory/{petId}: PATCH sets a quantity.
	RouteItem
)

// Method is the one method a route serves, which is also its Allow header
// on a 405.
func (r Route) Method() string {
	if r == RouteList {
		return http.MethodGet
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

// Request is what an adapter copies out of its framework's request. Its
// strings and body need stay valid only until Serve returns: Serve copies
// whatever it keeps or hands to user code (an Authenticator), so an adapter
// may pass memory its framework reuses (fasthttp's).
type Request struct {
	Method        string
	Route         Route
	PetID         string // the raw {petId} path segment, for RouteItem
	Authorization string // the Authorization header value
	ContentType   string // the Content-Type header value
	// ContentLength is the declared length of a streamed body, -1 when
	// unknown (chunked); a larger one than the limit is refused before
	// anything is read. Ignored for a body from BodyBytes.
	ContentLength int64
	// Body is read only for an update, at most to the body limit + 1
	// byte. The zero Body is an empty body.
	Body Body
}

// Body is a request body as the adapter has it: still to be read
// (BodyReader) or already in memory (BodyBytes). The zero Body is empty.
type Body struct {
	r io.Reader
	b []byte
}

// BodyReader is a body still to be read from r (net/http's, or a streamed
// fasthttp body). A nil r is an empty body.
func BodyReader(r io.Reader) Body { return Body{r: r} }

// BodyBytes is a body already in memory (as fasthttp buffers it); it is
// used in place, not copied.
func BodyBytes(b []byte) Body { return Body{b: b} }

// API serves the inventory routes. It is safe for concurrent use. Build it
// with New, then mount it: as an http.Handler, with ServeRoute for routers
// built on net/http (Gin, chi, echo), or with Serve for any other framework
// (Fiber). Every rule of the contract is applied here, once.
type API struct {
	svc          *Service
	auth         Authenticator
	maxBody      int64
	log          *slog.Logger
	storeTimeout time.Duration
	obs          Observer                    // nil: nothing is measured
	listCache    atomic.Pointer[encodedList] // for a VersionedLister store
}

// New returns an API over store. It fails, rather than serve the API open,
// when neither WithAPIKeys nor WithAuthenticator is given, and on any
// invalid option.
func New(store Store, opts ...Option) (*API, error) {
	svc, err := NewService(store)
	if err != nil {
		return nil, fmt.Errorf("inventory: New: %w", err)
	}
	c := config{maxBodyBytes: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&c)
	}
	a := &API{svc: svc, maxBody: c.maxBodyBytes, log: c.logger, storeTimeout: c.storeTimeout, obs: c.observer}
	switch {
	case c.keysSet && c.authenticator != nil:
		return nil, errors.New("inventory: New: WithAPIKeys and WithAuthenticator both given; use one")
	case c.authenticator != nil:
		a.auth = c.authenticator
	case c.keysSet:
		a.auth, err = NewKeyAuthenticator(c.keys...)
		if err != nil {
			return nil, fmt.Errorf("inventory: New: WithAPIKeys: %w", err)
		}
	default:
		return nil, errors.New("inventory: New: no API key configured: pass WithAPIKeys or WithAuthenticator (the API is never served without authentication)")
	}
	if a.maxBody < 64 {
		return nil, fmt.Errorf("inventory: New: WithMaxBodyBytes(%d): the limit must be at least 64 bytes", a.maxBody)
	}
	if a.storeTimeout < 0 {
		return nil, fmt.Errorf("inventory: New: WithStoreTimeout(%v): must not be negative", a.storeTimeout)
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	return a, nil
}

// Service returns the Service the API serves, for seeding and
// administration with the same rules.
func (a *API) Service() *Service { return a.svc }

// Serve answers one request: the entry point for adapters of frameworks
// not built on net/http. It never panics: a panic below it (in a store,
// say) is logged with its stack and answered 500 internal.
//
// The checks run in the contract's order: route (method), authentication,
// petId, media type, body size, body, then the store.
func (a *API) Serve(ctx context.Context, req Request) Response {
	if a.obs == nil {
		return a.serve(ctx, req)
	}
	start := time.Now()
	resp := a.serve(ctx, req)
	a.observeRequest(ctx, req, &resp, start)
	return resp
}

func (a *API) serve(ctx context.Context, req Request) (resp Response) {
	defer func() {
		if v := recover(); v != nil {
			a.log.ErrorContext(ctx, "inventory: panic while serving a request",
				"method", req.Method, "route", req.Route, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			resp = errorResponse(ErrInternal)
		}
	}()
	if req.Route != RouteList && req.Route != RouteItem {
		// An adapter bug, not a client error.
		panic(fmt.Sprintf("inventory: Serve: unknown route %d", req.Route))
	}
	if req.Method != req.Route.Method() {
		resp = errorResponse(newError(CodeMethodNotAllowed, "method %s is not allowed here; this path allows %s", methodForMessage(req.Method), req.Route.Method()))
		resp.allow = req.Route.Method()
		return resp
	}
	if r, ok := a.authenticate(ctx, req.Authorization); !ok {
		return r
	}
	if req.Route == RouteList {
		return a.list(ctx)
	}
	return a.update(ctx, req)
}

func methodForMessage(m string) string {
	if len(m) > 32 {
		return m[:32] + "…"
	}
	return m
}

func (a *API) authenticate(ctx context.Context, header string) (Response, bool) {
	key, sent, msg := bearerKey(header)
	if msg == "" {
		if _, builtin := a.auth.(*keySet); !builtin {
			// A user's Authenticator may keep the key (a cache): give it
			// a copy, not the adapter's possibly reused memory.
			key = strings.Clone(key)
		}
		err := a.auth.Authenticate(ctx, key)
		if err == nil {
			return Response{}, true
		}
		if !errors.Is(err, ErrUnauthorized) {
			if e, _ := asError(err); e.Code != CodeUnavailable {
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
	r.wwwAuthenticate = challengeNoCredentials
	if sent {
		r.wwwAuthenticate = challengeInvalidToken
	}
	return r, false
}

func (a *API) list(ctx context.Context) Response {
	cached := a.listCache.Load()
	var since uint64
	if cached != nil {
		since = cached.version
	}
	items, version, changed, err := a.listSince(ctx, since)
	if err != nil {
		return a.fail(ctx, "list", err)
	}
	if version == 0 {
		// A store without versions: encode every time.
		buf := getBuf()
		r := Response{Status: http.StatusOK}
		r.setBody(buf, appendList(*buf, items))
		return r
	}
	if changed || cached == nil {
		body := appendList(nil, items)
		cached = &encodedList{version: version, body: body, contentLength: []string{strconv.Itoa(len(body))}}
		// A concurrent list may store an older version after this one:
		// the next list then sees a version mismatch and encodes again.
		// The cache is never served for a version the store does not hold.
		a.listCache.Store(cached)
	}
	return Response{Status: http.StatusOK, Body: cached.body, contentLength: cached.contentLength}
}

// listSince is the store call of a list, under the store deadline and
// observed.
func (a *API) listSince(ctx context.Context, since uint64) (items []Item, version uint64, changed bool, err error) {
	ctx, cancel := a.storeContext(ctx)
	defer cancel()
	if a.obs != nil {
		defer a.observeStore(ctx, StoreOpList, time.Now(), &err)
	}
	return a.svc.listSince(ctx, since)
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

// encodedList is the list body of one version of a VersionedLister's
// contents. It is immutable once stored.
type encodedList struct {
	version       uint64
	body          []byte
	contentLength []string // the header value, for net/http, made once
}

// appendList appends the JSON array of items to b[:0], sized up front so
// that a large inventory is not regrown step by step.
func appendList(b []byte, items []Item) []byte {
	const perItem = 56 // {"petId":…,"quantity":…,"status":"available"} with typical numbers
	if need := 2 + len(items)*perItem; cap(b) < need {
		b = make([]byte, 0, need)
	}
	b = append(b[:0], '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = it.appendJSON(b)
	}
	return append(b, ']')
}

func (a *API) update(ctx context.Context, req Request) Response {
	petID, err := parsePetID(req.PetID)
	if err != nil {
		return errorResponse(err)
	}
	if err := checkMediaType(req.ContentType); err != nil {
		return errorResponse(err)
	}
	buf := getBuf()
	defer func() { bufPool.Put(buf) }()
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
	out := getBuf()
	r := Response{Status: http.StatusOK}
	r.setBody(out, item.appendJSON((*out)[:0]))
	return r
}

// readBody reads the body into buf, failing with 413 as soon as it is known
// to be larger than the limit: from Content-Length before reading anything,
// or after reading one byte past the limit.
func (a *API) readBody(req Request, buf *[]byte) ([]byte, *Error) {
	tooLarge := func() *Error {
		return newError(CodePayloadTooLarge, "the request body is larger than the limit of %d bytes", a.maxBody)
	}
	if req.Body.r == nil {
		if int64(len(req.Body.b)) > a.maxBody {
			return nil, tooLarge()
		}
		return req.Body.b, nil
	}
	if req.ContentLength > a.maxBody {
		return nil, tooLarge()
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
		n, err := req.Body.r.Read(b[len(b):min(cap(b), limit)])
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
			return nil, newError(CodeInvalidJSON, "the request body could not be read completely: %v", err)
		}
	}
	if cap(b) <= maxPooledBuf {
		*buf = b
	}
	return b, nil
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
func (a *API) fail(ctx context.Context, op string, err error) Response {
	e, unexpected := asError(err)
	switch {
	case !unexpected && errors.Is(ctx.Err(), context.Canceled):
		// The client went away: the answer (503) reaches nobody, and a
		// disconnect is no outage worth a warning. A store deadline
		// passing is one, and is warned about below.
		a.log.DebugContext(ctx, "inventory: request context ended", "op", op, "error", err.Error())
	case unexpected:
		a.log.ErrorContext(ctx, "inventory: unexpected error", "op", op, "error", err.Error())
	case e.Code == CodeUnavailable:
		a.log.WarnContext(ctx, "inventory: store unavailable", "op", op, "error", err.Error())
	}
	return errorResponse(e)
}
