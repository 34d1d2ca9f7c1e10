package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// call sends one request with an optional bearer key and prints the status
// and the body.
func call(method, url, key, body string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
}

// Mount the API under /v1 of a plain net/http server, on the memory store.
func Example() {
	store, err := memstore.New(
		inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable},
		inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
	)
	if err != nil {
		panic(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", api))
	srv := httptest.NewServer(mux) // in production: http.ListenAndServe(addr, mux)
	defer srv.Close()

	call("PATCH", srv.URL+"/v1/inventory/1", "demo-key", `{"quantity": 7}`)
	call("GET", srv.URL+"/v1/inventory", "demo-key", "")
	call("GET", srv.URL+"/v1/inventory", "", "")
	// Output:
	// 200 {"petId":1,"quantity":7,"status":"available"}
	// 200 [{"petId":1,"quantity":7,"status":"available"},{"petId":2,"quantity":0,"status":"sold"}]
	// 401 {"code":"unauthorized","message":"missing Authorization header; send 'Authorization: Bearer <API key>'","status":401}
}

// New refuses to serve the API without a key.
func ExampleNew() {
	store, _ := memstore.New()
	_, err := inventory.New(store)
	fmt.Println(err)

	_, err = inventory.New(store, inventory.WithAPIKeys("a key with spaces"))
	fmt.Println(err)
	// Output:
	// inventory: New: no API key configured: pass WithAPIKeys or WithAuthenticator (the API is never served without authentication)
	// inventory: New: WithAPIKeys: API key #1 (of 1) has a space or a non-printable or non-ASCII byte at position 2
}

// Entries are created through the Go API, never through the HTTP routes:
// seed them with Service.Put, which validates them first.
func ExampleService_Put() {
	store, _ := memstore.New()
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}
	svc := api.Service()
	ctx := context.Background()

	err = svc.Put(ctx,
		inventory.Item{PetID: 10, Quantity: 4, Status: inventory.StatusPending},
		inventory.Item{PetID: 7, Quantity: 1, Status: inventory.StatusAvailable},
	)
	fmt.Println("seeded:", err)
	err = svc.Put(ctx, inventory.Item{PetID: 11, Quantity: 1, Status: "lost"})
	fmt.Println("invalid:", err)

	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()
	call("GET", srv.URL+"/v1/inventory", "demo-key", "")
	// Output:
	// seeded: <nil>
	// invalid: invalid_field: item 11: status "lost" is not one of available, pending, sold
	// 200 [{"petId":7,"quantity":1,"status":"available"},{"petId":10,"quantity":4,"status":"pending"}]
}

// Errors of the library are read by code: errors.Is against a sentinel,
// or errors.As and Error.Code.
func ExampleError() {
	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusSold})
	svc, _ := inventory.NewService(store)
	ctx := context.Background()

	_, err := svc.SetQuantity(ctx, 2, 5)
	fmt.Println("not found:", errors.Is(err, inventory.ErrNotFound))

	_, err = svc.SetQuantity(ctx, 1, -1)
	var e *inventory.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code(), e.Status(), e.Message())
	}
	// Output:
	// not found: true
	// invalid_field 400 quantity must be between 0 and 2147483647
}

// Seeding that replicas starting together do once: PutIfEmpty writes only
// into an empty store, and says whether it did.
func ExampleService_PutIfEmpty() {
	store, _ := memstore.New()
	svc, _ := inventory.NewService(store)
	ctx := context.Background()
	seed := []inventory.Item{{PetID: 1, Quantity: 3, Status: inventory.StatusSold}}

	wrote, err := svc.PutIfEmpty(ctx, seed...)
	fmt.Println(wrote, err)
	wrote, err = svc.PutIfEmpty(ctx, seed...) // a restart: the stock is kept
	fmt.Println(wrote, err)
	// Output:
	// true <nil>
	// false <nil>
}

// Keys kept elsewhere (a secrets service, a database) are checked by an
// Authenticator. It returns ErrUnauthorized for a wrong key, an error
// matching ErrUnavailable when it cannot tell (503), and nil to let the
// request through. The API parses the header first: the Authenticator sees
// only the key.
func ExampleWithAuthenticator() {
	owners := map[string]string{"key-of-alice": "alice", "key-of-bob": "bob"}
	auth := inventory.AuthenticatorFunc(func(ctx context.Context, key string) error {
		if _, known := owners[key]; !known {
			return inventory.ErrUnauthorized
		}
		return nil
	})

	store, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	api, err := inventory.New(store, inventory.WithAuthenticator(auth))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()

	call("GET", srv.URL+"/v1/inventory", "key-of-bob", "")
	call("GET", srv.URL+"/v1/inventory", "key-of-mallory", "")
	// Output:
	// 200 [{"petId":1,"quantity":3,"status":"available"}]
	// 401 {"code":"unauthorized","message":"the API key in the Authorization header is not valid","status":401}
}

// Mount the API in front of a router that matches routes and methods
// itself (chi's r.Use(mw), echo's e.Pre(echo.WrapMiddleware(mw))): the API
// answers everything at and below /v1/inventory, any method, and the
// router the rest.
func ExampleAPI_Middleware() {
	store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	if err != nil {
		panic(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"))
	if err != nil {
		panic(err)
	}
	mw, err := api.Middleware("/v1")
	if err != nil {
		panic(err)
	}
	router := http.NewServeMux() // stands for chi, echo, …
	router.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mw(router))
	defer srv.Close()

	call("GET", srv.URL+"/v1/inventory", "demo-key", "")
	call("PROPFIND", srv.URL+"/v1/inventory/1", "demo-key", "")
	call("GET", srv.URL+"/healthz", "", "")
	// Output:
	// 200 [{"petId":1,"quantity":3,"status":"available"}]
	// 405 {"code":"method_not_allowed","message":"method PROPFIND is not allowed here; this path allows PATCH","status":405}
	// 200 ok
}

// outage is a memory store that can be taken out of reach, as a Redis
// store is by a failover: its reads fail with an unavailable error.
type outage struct {
	*memstore.Store
	down atomic.Bool
}

func (s *outage) List(ctx context.Context) ([]inventory.Item, error) {
	if s.down.Load() {
		return nil, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.List(ctx)
}

func (s *outage) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if s.down.Load() {
		return inventory.Changes{}, inventory.Unavailable(errors.New("connection refused"))
	}
	return s.Store.ListChanges(ctx, since)
}

// A storefront keeps showing the inventory through a store outage of up
// to 30 s: lists are answered from the last state the store confirmed,
// with its Age and the stale mark; a client that needs the current
// state (an order service) sends Cache-Control: no-cache and gets 503.
func ExampleWithStaleIfError() {
	mem, _ := memstore.New(inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable})
	store := &outage{Store: mem}
	api, err := inventory.New(store, inventory.WithAPIKeys("demo-key"),
		inventory.WithStoreTimeout(2*time.Second), inventory.WithStaleIfError(30*time.Second),
		inventory.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	if err := api.Preload(context.Background()); err != nil { // a server does it before it is ready
		panic(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	defer srv.Close()

	store.down.Store(true)
	for _, cacheControl := range []string{"", "no-cache"} {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/inventory", nil)
		req.Header.Set("Authorization", "Bearer demo-key")
		req.Header.Set("Cache-Control", cacheControl)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(b))
		fmt.Printf("  Age: %q, Cache-Status: %q, Cache-Control: %q\n", resp.Header.Get("Age"), resp.Header.Get("Cache-Status"), resp.Header.Get("Cache-Control"))
	}
	// Output:
	// 200 [{"petId":1,"quantity":3,"status":"available"}]
	//   Age: "0", Cache-Status: "petinventory; fwd=stale; fwd-status=503", Cache-Control: "private, no-cache, stale-if-error=30"
	// 503 {"code":"unavailable","message":"the inventory store is unavailable; retry later","status":503}
	//   Age: "", Cache-Status: "", Cache-Control: "no-store"
}
