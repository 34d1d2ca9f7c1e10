package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

// faultyPets is a real memstore whose SetQuantity fails for two pets the
// seed does not hold: 503 answers an outage, 500 a panicking backend.
type faultyPets struct{ inventory.Store }

const (
	petUnavailable = 503
	petPanics      = 500
)

func (s faultyPets) SetQuantity(ctx context.Context, petID int64, q int) (inventory.Item, error) {
	switch petID {
	case petUnavailable:
		return inventory.Item{}, inventory.Unavailable(errors.New("redis 10.0.0.1:6379: connection refused"))
	case petPanics:
		panic("backend bug")
	}
	return s.Store.SetQuantity(ctx, petID, q)
}

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	requests []inventory.RequestObservation
	stores   []inventory.StoreObservation
}

func (r *recorder) ObserveRequest(_ context.Context, o inventory.RequestObservation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, o)
}

func (r *recorder) ObserveStore(_ context.Context, o inventory.StoreObservation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stores = append(r.stores, o)
}

// take returns and forgets what was recorded.
func (r *recorder) take() ([]inventory.RequestObservation, []inventory.StoreObservation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	req, st := r.requests, r.stores
	r.requests, r.stores = nil, nil
	return req, st
}

// observedCase is one kind of answer and what an observer must see of it.
type observedCase struct {
	name, method, path, key, ctype, body string
	status                               int
	code                                 inventory.Code
	route                                inventory.Route
	storeOp                              inventory.StoreOp // "" when the store is not called
	outcome                              inventory.Outcome
}

var observedCases = []observedCase{
	{"list 200", "GET", "/inventory", testKey, "", "", 200, "", inventory.RouteList, inventory.StoreOpList, inventory.OutcomeOK},
	{"update 200", "PATCH", "/inventory/1", testKey, "application/json", `{"quantity":4}`, 200, "", inventory.RouteItem, inventory.StoreOpSetQuantity, inventory.OutcomeOK},
	{"400 invalid body", "PATCH", "/inventory/1", testKey, "application/json", `{"quantity":"4"}`, 400, inventory.CodeInvalidField, inventory.RouteItem, "", ""},
	{"400 invalid petId", "PATCH", "/inventory/abc", testKey, "application/json", `{"quantity":4}`, 400, inventory.CodeInvalidPetID, inventory.RouteItem, "", ""},
	{"401", "GET", "/inventory", "wrong-key", "", "", 401, inventory.CodeUnauthorized, inventory.RouteList, "", ""},
	{"404", "PATCH", "/inventory/77", testKey, "application/json", `{"quantity":4}`, 404, inventory.CodeNotFound, inventory.RouteItem, inventory.StoreOpSetQuantity, inventory.OutcomeNotFound},
	{"405", "DELETE", "/inventory", testKey, "", "", 405, inventory.CodeMethodNotAllowed, inventory.RouteList, "", ""},
	{"413", "PATCH", "/inventory/1", testKey, "application/json", `{"quantity":4,"pad":"` + strings.Repeat("x", 20<<10) + `"}`, 413, inventory.CodePayloadTooLarge, inventory.RouteItem, "", ""},
	{"415", "PATCH", "/inventory/1", testKey, "text/plain", `{"quantity":4}`, 415, inventory.CodeUnsupportedMediaType, inventory.RouteItem, "", ""},
	{"503", "PATCH", "/inventory/503", testKey, "application/json", `{"quantity":4}`, 503, inventory.CodeUnavailable, inventory.RouteItem, inventory.StoreOpSetQuantity, inventory.OutcomeUnavailable},
	{"500", "PATCH", "/inventory/500", testKey, "application/json", `{"quantity":4}`, 500, inventory.CodeInternal, inventory.RouteItem, inventory.StoreOpSetQuantity, inventory.OutcomeInternal},
}

func (c observedCase) send(t *testing.T, base string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if c.ctype != "" {
		req.Header.Set("Content-Type", c.ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestObserverSeesEveryAnswer: on every transport, the observer is told
// the route, method, status and code of each kind of answer, and the
// operation and outcome of each store call, once.
func TestObserverSeesEveryAnswer(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			rec := &recorder{}
			api := newAPI(t, faultyPets{openMemory(t, seed...)}, inventory.WithObserver(rec))
			base := tr.serve(t, nil, api)
			for _, c := range observedCases {
				status, body := c.send(t, base)
				if status != c.status {
					t.Fatalf("%s: status %d %s; want %d", c.name, status, body, c.status)
				}
				reqs, stores := rec.take()
				if len(reqs) != 1 {
					t.Fatalf("%s: %d request observations; want 1: %+v", c.name, len(reqs), reqs)
				}
				o := reqs[0]
				if o.Route != c.route || o.Method != c.method || o.Status != c.status || o.Code != c.code || o.Duration <= 0 || o.Start.IsZero() {
					t.Errorf("%s: observed %+v; want route %s, method %s, status %d, code %q, a start and a duration", c.name, o, c.route, c.method, c.status, c.code)
				}
				if c.storeOp == "" {
					if len(stores) != 0 {
						t.Errorf("%s: store observations %+v; the store is not called", c.name, stores)
					}
					continue
				}
				if len(stores) != 1 || stores[0].Op != c.storeOp || stores[0].Outcome != c.outcome || (stores[0].Err == nil) != (c.outcome == inventory.OutcomeOK) {
					t.Errorf("%s: store observations %+v; want one %s with outcome %s", c.name, stores, c.storeOp, c.outcome)
				}
			}
		})
	}
}

// badObserver panics, or takes its time, in both methods.
type badObserver struct{ panics bool }

func (b badObserver) ObserveRequest(context.Context, inventory.RequestObservation) { b.misbehave() }
func (b badObserver) ObserveStore(context.Context, inventory.StoreObservation)     { b.misbehave() }
func (b badObserver) misbehave() {
	if b.panics {
		panic("observer bug")
	}
	time.Sleep(20 * time.Millisecond)
}

// TestBadObserverChangesNoAnswer: a panicking or slow observer leaves
// every answer exactly as it is without one.
func TestBadObserverChangesNoAnswer(t *testing.T) {
	for _, tr := range transports[:3] {
		for _, obs := range []badObserver{{panics: true}, {panics: false}} {
			t.Run(tr.name, func(t *testing.T) {
				plain := tr.serve(t, nil, newAPI(t, faultyPets{openMemory(t, seed...)}))
				observed := tr.serve(t, nil, newAPI(t, faultyPets{openMemory(t, seed...)}, inventory.WithObserver(obs)))
				for _, c := range observedCases {
					ws, wb := c.send(t, plain)
					gs, gb := c.send(t, observed)
					if ws != gs || wb != gb {
						t.Errorf("%s with observer %+v: %d %s; without one: %d %s", c.name, obs, gs, gb, ws, wb)
					}
				}
			})
		}
	}
}
