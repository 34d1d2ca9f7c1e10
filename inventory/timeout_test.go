package inventory_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/adapter"
)

// A body whose read fails on a deadline is 408 request_timeout, naming how
// much came; the deadline is set before the body is read and cleared after
// a body read in time; other read errors stay 400 invalid_json.
func TestBodyTimeout(t *testing.T) {
	api := newAPI(t, newStore(t), inventory.WithBodyTimeout(time.Second))
	if api.BodyTimeout() != time.Second {
		t.Errorf("BodyTimeout() = %v; want 1s", api.BodyTimeout())
	}
	var deadlines []time.Time
	set := func(d time.Time) error { deadlines = append(deadlines, d); return nil }
	for _, c := range []struct {
		name   string
		body   io.Reader
		status int
		want   string
		clears bool
	}{
		{"stalled", io.MultiReader(strings.NewReader(`{"quan`), failing{os.ErrDeadlineExceeded}), 408,
			`{"code":"request_timeout","message":"the request body did not all arrive within 1s of the server starting to read it","status":408}`, false},
		{"broken", failing{io.ErrUnexpectedEOF}, 400, `"code":"invalid_json"`, true},
		{"whole", strings.NewReader(`{"quantity":4}`), 200, `"quantity":4`, true},
	} {
		deadlines = nil
		resp := adapter.Serve(context.Background(), api, adapter.Request{
			Method: http.MethodPatch, Route: inventory.RouteItem, PetID: "1", Authorization: "Bearer " + testKey,
			ContentLength: 20, Body: adapter.StreamedBody(c.body), SetReadDeadline: set,
		})
		body := string(resp.Body()[0])
		if resp.Status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d %s", c.name, resp.Status, body, c.status, c.want)
		}
		if len(deadlines) == 0 || time.Until(deadlines[0]) <= 0 || time.Until(deadlines[0]) > time.Second {
			t.Errorf("%s: deadlines set %v; want one about a second ahead first", c.name, deadlines)
		}
		if cleared := len(deadlines) == 2 && deadlines[1].IsZero(); cleared != c.clears {
			t.Errorf("%s: deadlines %v; want cleared after the read: %v", c.name, deadlines, c.clears)
		}
		resp.Release()
	}
	if _, err := inventory.New(newStore(t), inventory.WithAPIKeys("k"), inventory.WithBodyTimeout(-time.Second)); err == nil || !strings.Contains(err.Error(), "WithBodyTimeout") {
		t.Errorf("WithBodyTimeout(-1s): %v; want an error naming the option", err)
	}
}

type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }
