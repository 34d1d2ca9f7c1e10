package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// panicStore is a memstore whose updates of pet 13 panic: a bug in a
// store, as a user's own backend could have.
type panicStore struct{ *memstore.Store }

func (s panicStore) SetQuantity(ctx context.Context, id int64, q int) (inventory.Item, error) {
	if id == 13 {
		panic("store bug: pet 13")
	}
	return s.Store.SetQuantity(ctx, id, q)
}

// On every transport, with no recovery middleware of the host's, a
// panicking store is a 500 internal with a generic message and a logged
// stack, and the process keeps serving.
func TestPanickingStoreOnEveryTransport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			mem, err := memstore.New(
				inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable},
				inventory.Item{PetID: 13, Quantity: 1, Status: inventory.StatusSold})
			if err != nil {
				t.Fatal(err)
			}
			var logs proctest.Buffer
			api := newAPI(t, panicStore{mem}, inventory.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			base := tr.serve(t, nil, api)

			patch := func(id string) (int, string) {
				req, _ := http.NewRequest(http.MethodPatch, base+"/inventory/"+id, strings.NewReader(`{"quantity":2}`))
				req.Header.Set("Authorization", "Bearer "+testKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("PATCH %s: %v", id, err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			status, body := patch("13")
			want := `{"code":"internal","message":"internal error; the server logged the details","status":500}`
			if status != 500 || body != want {
				t.Errorf("PATCH of the panicking pet = %d %s, want 500 %s", status, body, want)
			}
			if l := logs.String(); !strings.Contains(l, "store bug: pet 13") || !strings.Contains(l, "goroutine") {
				t.Errorf("the panic and its stack were not logged; log:\n%s", l)
			}
			if status, body := patch("1"); status != 200 {
				t.Errorf("after the panic, PATCH of another pet = %d %s, want 200", status, body)
			}
		})
	}
}
