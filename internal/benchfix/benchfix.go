// Package benchfix holds the fixtures that the benchmarks of every module
// share (transport/gin, transport/fiber, inventory, storage/redis), so that
// the library and its baselines are measured on the same inventory, key and
// request bodies everywhere; and the check of a list large enough to come
// in pieces (LargeList), which every adapter's tests run, and the request
// heads no parser accepts that the servers must not echo (MalformedHeads,
// RawAnswer). It is internal: nothing outside this repository's tests uses
// it.
package benchfix

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/petinventory/petinventory/inventory"
)

const (
	// Key is the API key every benchmarked server accepts; Bearer is its
	// Authorization header value.
	Key    = "bench-key-0123456789"
	Bearer = "Bearer " + Key
	// UpdatePets is how many pets the update benchmarks rotate over, and
	// Bodies how many distinct quantities; the two are coprime so that
	// (pet, quantity) pairs keep changing and no cache can cheat.
	UpdatePets = 8
	Bodies     = 251
)

// ListSizes are the inventory sizes of the list benchmarks.
var ListSizes = []int{10, 100, 10000}

// Items returns n valid items with pet ids 1..n, varied quantities and
// every status.
func Items(n int) []inventory.Item {
	statuses := []inventory.Status{inventory.StatusAvailable, inventory.StatusPending, inventory.StatusSold}
	items := make([]inventory.Item, n)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i + 1), Quantity: (i * 37) % 1000, Status: statuses[i%3]}
	}
	return items
}

var keyDigest = sha256.Sum256([]byte(Key))

// SHA256Authorized is the key check of the bare+sha256 baselines: the
// SHA-256 digest of the bearer key compared in constant time with Key's,
// the textbook constant-time check.
func SHA256Authorized(header string) bool {
	key, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	d := sha256.Sum256([]byte(key))
	return subtle.ConstantTimeCompare(d[:], keyDigest[:]) == 1
}

// Writer is an http.ResponseWriter that keeps what it is given and can be
// reset without allocating, so that neither side's figures are made of
// httptest.ResponseRecorder's allocations.
type Writer struct {
	header http.Header
	Status int
	Body   []byte
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer { return &Writer{header: make(http.Header, 8)} }

// Header returns the response headers.
func (w *Writer) Header() http.Header { return w.header }

// WriteHeader records the first status written.
func (w *Writer) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
}

// Write appends to Body.
func (w *Writer) Write(p []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	w.Body = append(w.Body, p...)
	return len(p), nil
}

// Reset empties the writer for the next request, keeping its memory.
func (w *Writer) Reset() {
	clear(w.header)
	w.Status = 0
	w.Body = w.Body[:0]
}

// Body is a request body that can be refilled between iterations
// (Body.Reset(b)).
type Body struct{ bytes.Reader }

// Close does nothing: the body is reused.
func (*Body) Close() error { return nil }

// Authorized is the bare baselines' key check: a plain comparison with
// Bearer, or SHA256Authorized for the bare+sha256 side.
func Authorized(header string, withSHA256 bool) bool {
	if withSHA256 {
		return SHA256Authorized(header)
	}
	return header == Bearer
}

// BareInventory is the state of the bare baselines: the list encoded once
// with encoding/json, and the items in a map under a mutex.
type BareInventory struct {
	List []byte
	mu   sync.Mutex
	byID map[int64]inventory.Item
}

// NewBareInventory returns the bare baselines' state over items.
func NewBareInventory(items []inventory.Item) *BareInventory {
	list, err := json.Marshal(items)
	if err != nil {
		panic(err)
	}
	inv := &BareInventory{List: list, byID: make(map[int64]inventory.Item, len(items))}
	for _, it := range items {
		inv.byID[it.PetID] = it
	}
	return inv
}

// Set replaces the quantity of pet id and returns its item; ok is false
// when there is no such pet.
func (inv *BareInventory) Set(id int64, quantity int) (it inventory.Item, ok bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if it, ok = inv.byID[id]; ok {
		it.Quantity = quantity
		inv.byID[id] = it
	}
	return it, ok
}
