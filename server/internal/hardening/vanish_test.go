package hardening

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
)

// TestVanishedStoreIsNotServed: two servers seeded on a Redis without
// persistence; Redis killed and started again, empty, on the same socket.
// Within a few seconds both answer lists and updates 503 naming the
// vanished store (never 200 [] nor 404 for a pet they held), /readyz 503
// naming it, each logged once with its fix; nothing seeds it again (their
// -seed acts at the start only). A server started afterwards without -seed
// is not ready, naming a store not initialized. Once an operator
// initializes it (here: a server with -seed demo, the one step the fault
// names), all of them serve it again without a restart. A server with
// -seed empty on a fresh Redis is ready and lists [].
func TestVanishedStoreIsNotServed(t *testing.T) {
	r := startRedis(t) // --save "", no append-only file: a restart keeps nothing
	a := startServer(t, "gin", r.url())
	b := startServer(t, "fiber", r.url())
	ctx := t.Context()
	for _, s := range []*server{a, b} {
		if got := s.get(ctx, "/v1/inventory"); got.Status != http.StatusOK || !strings.Contains(string(got.Body), `"petId":12`) {
			t.Fatalf("before the loss: GET = %d %s, want the demo inventory", got.Status, got.Body)
		}
	}
	if !strings.Contains(a.Logs.String(), "durability risk") || strings.Count(a.Logs.String(), "durability risk") != 1 {
		t.Errorf("a Redis without persistence is not named once as a durability risk:\n%s", a.Logs.String())
	}

	r.kill()
	r.start() // empty: same socket, nothing kept

	for _, s := range []*server{a, b} {
		s.await(t, "/v1/inventory", http.StatusServiceUnavailable, "vanished", 10*time.Second)
		if got := s.get(ctx, "/readyz"); got.Status != http.StatusServiceUnavailable || !strings.Contains(string(got.Body), "vanished") {
			t.Errorf("/readyz after the loss = %d %s, want 503 naming the vanished store", got.Status, got.Body)
		}
		got, err := do(ctx, http.DefaultClient, http.MethodPatch, s.Base+"/v1/inventory/3", `{"quantity":5}`)
		if err != nil || got.Status != http.StatusServiceUnavailable || !strings.Contains(string(got.Body), "vanished") {
			t.Errorf("PATCH of a pet the store held, after the loss = %v %d %s, want 503 naming the vanished store", err, got.Status, got.Body)
		}
		if !strings.Contains(string(got.Body), "backup") || !strings.Contains(string(got.Body), "-seed") {
			t.Errorf("the 503 does not name the fix (restore, or -seed): %s", got.Body)
		}
	}
	if m := a.get(ctx, "/metrics"); !strings.Contains(string(m.Body), "\ninventory_store_uninitialized{kind=\"store-vanished\"} 1\n") {
		t.Errorf("/metrics after the loss does not say the store vanished:\n%s", m.Body)
	}
	if n := r.cli("EXISTS", "{inventory}:items", "{inventory}:initialized"); n != "0" {
		t.Errorf("the vanished store was written again on its own (%s keys)", n)
	}

	// A server started afterwards without -seed is not ready.
	c := &server{proctest.Start(t, serverBin, apiKey, []string{"REDIS_URL=" + r.url(), "INVENTORY_API_KEYS=" + apiKey, "INVENTORY_SEED="}, []string{"-framework", "gin"}), t}
	c.await(t, "/readyz", http.StatusServiceUnavailable, "not initialized", 10*time.Second)
	c.await(t, "/v1/inventory", http.StatusServiceUnavailable, "not initialized", 10*time.Second)

	for _, s := range []*server{a, b} {
		logs := s.Logs.String()
		if n := strings.Count(logs, "level=ERROR") - strings.Count(logs, "level=ERROR msg=\"inventory:"); strings.Count(logs, "fault=store-vanished") < 1 || n != 1 {
			t.Errorf("the vanished store logged %d times at ERROR, want once, with its fix:\n%s", n, logs)
		}
	}

	// The operator initializes it: every server serves it again.
	startServer(t, "gin", r.url())
	for _, s := range []*server{a, b, c} {
		s.await(t, "/readyz", http.StatusOK, "", 20*time.Second)
		if got := s.get(ctx, "/v1/inventory"); got.Status != http.StatusOK || !strings.Contains(string(got.Body), `"petId":12`) {
			t.Errorf("after initializing again: GET = %d %s, want the demo inventory", got.Status, got.Body)
		}
	}

	// -seed empty on a fresh Redis: ready, and it lists [].
	empty := startServerArgs(t, "fiber", startRedis(t).url(), []string{"-seed", "empty"})
	if got := empty.get(ctx, "/v1/inventory"); got.Status != http.StatusOK || string(got.Body) != "[]" {
		t.Errorf("-seed empty: GET = %d %s, want 200 []", got.Status, got.Body)
	}
}

// get answers GET path with the test's key.
func (s *server) get(ctx context.Context, path string) reply {
	s.t.Helper()
	r, err := do(ctx, http.DefaultClient, http.MethodGet, s.Base+path, "")
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	return r
}

// await waits until GET path answers status with a body holding want.
func (s *server) await(t *testing.T, path string, status int, want string, within time.Duration) {
	t.Helper()
	var last reply
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if last = s.get(t.Context(), path); last.Status == status && strings.Contains(string(last.Body), want) {
			return
		}
	}
	t.Fatalf("GET %s = %d %s after %v, want %d with %q:\n%s", path, last.Status, last.Body, within, status, want, s.Logs.String())
}
