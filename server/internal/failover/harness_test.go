package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// apiKey is the key every server under test accepts; it must never appear
// in their logs.
const apiKey = "failover-test-key-8d41e0"

var serverBin, conformanceBin string // built once by TestMain

func TestMain(m *testing.M) {
	proctest.Main(m, "failover",
		proctest.Binary{Pkg: proctest.ServerPkg, Name: "inventory-server", Path: &serverBin},
		proctest.Binary{Pkg: proctest.ConformancePkg, Name: "inventory-conformance", Path: &conformanceBin})
}

// server is a running inventory-server process.
type server struct {
	*proctest.Server
	t *testing.T
}

// startServer runs inventory-server on redisURL with args and waits until
// /healthz answers (not /readyz: some tests want a server that is not
// ready). It is stopped when the test ends, and its output must not
// contain the key.
func startServer(t *testing.T, redisURL string, args ...string) *server {
	t.Helper()
	env := []string{"REDIS_URL=" + redisURL, "INVENTORY_API_KEYS=" + apiKey, "INVENTORY_SEED=demo"} // a -seed flag wins
	return &server{proctest.Start(t, serverBin, apiKey, env, args), t}
}

// readyz returns the status of GET /readyz.
func (s *server) readyz() (int, error) {
	resp, err := http.Get(s.Base + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitReady waits until /readyz answers 200.
func (s *server) waitReady(timeout time.Duration) {
	s.t.Helper()
	err := redistest.Poll(timeout, func() error {
		st, err := s.readyz()
		if err == nil && st != 200 {
			err = fmt.Errorf("/readyz answered %d", st)
		}
		return err
	})
	if err != nil {
		s.t.Fatalf("the server did not become ready: %v\n%s", err, s.Logs.String())
	}
}

// do sends one request with the key, and reads the answer whole.
func do(ctx context.Context, client *http.Client, method, url, body string) (proctest.Reply, error) {
	return proctest.Do(ctx, client, apiKey, method, url, body)
}

type item struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   string `json:"status"`
}

// writeSeed writes n pets (ids 1..n, quantity 0) to a seed file.
func writeSeed(t *testing.T, n int) string {
	t.Helper()
	items := make([]item, n)
	for i := range items {
		items[i] = item{PetID: int64(i + 1), Status: "available"}
	}
	raw, _ := json.Marshal(items)
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// summary logs a result line, and appends it to the file named by
// FAILOVER_SUMMARY, which CI prints.
func summary(t *testing.T, format string, args ...any) {
	t.Helper()
	proctest.Summary(t, "FAILOVER_SUMMARY", format, args...)
}
