package hardening

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
)

// runInitOnly runs inventory-server with args and env (added to the
// test's, with no API key and no INVENTORY_SEED of its own) until it
// exits, and returns its exit status and output.
func runInitOnly(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	cmd.Env = append(os.Environ(), append([]string{"INVENTORY_API_KEYS=", "INVENTORY_API_KEYS_FILE=", "INVENTORY_SEED="}, env...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("running %s %v: %v", serverBin, args, err)
	return 0, ""
}

// TestInitOnly: -init-only -seed on a fresh Redis exits 0 without an API
// key and without listening (its -addr is taken), having written the
// marker; a server started afterwards without -seed is ready and lists
// the seed. A second -init-only exits 0 and writes nothing (a quantity
// changed in between stays). A Redis out of reach exits 1 with the error;
// -init-only without -seed is a usage error (2) naming the fix.
func TestInitOnly(t *testing.T) {
	r := startRedis(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	redisEnv := []string{"REDIS_URL=" + r.url()}

	code, out := runInitOnly(t, redisEnv, "-init-only", "-seed", "demo", "-addr", taken.Addr().String())
	if code != 0 || !strings.Contains(out, "initialized the store (-seed)") || !strings.Contains(out, "exiting (-init-only)") {
		t.Fatalf("-init-only -seed demo on a fresh Redis: exit %d, want 0, the store initialized:\n%s", code, out)
	}
	if n := r.cli("EXISTS", "{inventory}:initialized"); n != "1" {
		t.Fatalf("-init-only wrote no initialization marker (EXISTS = %s)", n)
	}

	s := startServerArgs(t, "gin", r.url(), nil, "INVENTORY_SEED=")
	ctx := t.Context()
	if got := s.get(ctx, "/v1/inventory"); got.Status != http.StatusOK || !strings.Contains(string(got.Body), `"petId":12`) {
		t.Fatalf("a server without -seed after -init-only: GET = %d %s, want the demo inventory", got.Status, got.Body)
	}
	if got, err := do(ctx, http.DefaultClient, http.MethodPatch, s.Base+"/v1/inventory/3", `{"quantity":77}`); err != nil || got.Status != http.StatusOK {
		t.Fatalf("PATCH = %v %d %s", err, got.Status, got.Body)
	}

	code, out = runInitOnly(t, redisEnv, "-init-only", "-seed", "demo")
	if code != 0 || !strings.Contains(out, "already initialized") {
		t.Errorf("a second -init-only: exit %d, want 0 and the store already initialized:\n%s", code, out)
	}
	if got := s.get(ctx, "/v1/inventory"); got.Status != http.StatusOK || !strings.Contains(string(got.Body), `{"petId":3,"quantity":77,`) {
		t.Errorf("after a second -init-only: GET /v1/inventory = %d %s, want the quantity changed before it (77)", got.Status, got.Body)
	}

	// INVENTORY_INIT_ONLY, and a Redis nobody listens on.
	nobody := fmt.Sprintf("REDIS_URL=redis://127.0.0.1:%d/0", redistest.FreePort(t))
	code, out = runInitOnly(t, []string{nobody, "INVENTORY_INIT_ONLY=true"}, "-seed", "demo")
	if code != 1 || !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "initializing the store (-seed demo)") || !strings.Contains(out, "connection refused") {
		t.Errorf("-init-only on a Redis out of reach: exit %d, want 1 and the error:\n%s", code, out)
	}

	// A Redis the store cannot serve from (it may evict the store's keys):
	// the configuration fault, with its fix, and exit 1.
	evicting := startRedis(t, "--maxmemory-policy", "allkeys-lru")
	code, out = runInitOnly(t, []string{"REDIS_URL=" + evicting.url()}, "-init-only", "-seed", "demo")
	if code != 1 || !strings.Contains(out, "maxmemory-policy") || !strings.Contains(out, "-redis-allow-eviction") {
		t.Errorf("-init-only on an evicting Redis: exit %d, want 1 and the fault with its fix:\n%s", code, out)
	}

	code, out = runInitOnly(t, redisEnv, "-init-only")
	if code != 2 || !strings.Contains(out, "add -seed FILE") {
		t.Errorf("-init-only without -seed: exit %d, want 2 naming the fix (-seed):\n%s", code, out)
	}
}
