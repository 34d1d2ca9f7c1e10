package benchfix

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// LargeList returns an API (key "k") over a memstore of 5 000 pets, a list
// large enough that the API answers it in pieces shared by every list in
// flight, and check, which lists url (the API's list route on a real
// socket) three times: from the store, from the cache, and after an
// update. check fails t unless each answer is 200 with the whole
// inventory, in order, and its Content-Length: what each adapter's
// writing of a body in pieces must give.
func LargeList(t *testing.T) (api *inventory.API, check func(url string)) {
	t.Helper()
	items := make([]inventory.Item, 5000)
	for i := range items {
		items[i] = inventory.Item{PetID: int64(i*3 + 1), Quantity: i % 100, Status: inventory.StatusPending}
	}
	store, err := memstore.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	if api, err = inventory.New(store, inventory.WithAPIKeys("k")); err != nil {
		t.Fatal(err)
	}
	return api, func(url string) {
		t.Helper()
		for round := range 3 {
			if round == 2 {
				items[4000].Quantity = 77
				if _, err := store.SetQuantity(context.Background(), items[4000].PetID, 77); err != nil {
					t.Fatal(err)
				}
			}
			want, _ := json.Marshal(items)
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer k")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.ContentLength != int64(len(want)) {
				t.Fatalf("round %d: %d, %d bytes (Content-Length %d, err %v); want 200 and the %d bytes of the inventory", round, resp.StatusCode, len(body), resp.ContentLength, err, len(want))
			}
		}
	}
}
