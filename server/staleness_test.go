package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

func TestParseMaxStaleness(t *testing.T) {
	cfg, err := Parse("inventory-server", nil, env(map[string]string{"INVENTORY_MAX_STALENESS": "50ms"}), io.Discard)
	if err != nil || cfg.MaxStaleness != 50*time.Millisecond {
		t.Errorf("INVENTORY_MAX_STALENESS=50ms: %v, %v", cfg.MaxStaleness, err)
	}
	cfg, err = Parse("inventory-server", []string{"-max-staleness", "1s"}, env(map[string]string{"INVENTORY_MAX_STALENESS": "50ms"}), io.Discard)
	if err != nil || cfg.MaxStaleness != time.Second {
		t.Errorf("-max-staleness 1s over the environment: %v, %v", cfg.MaxStaleness, err)
	}
	if _, err := Parse("inventory-server", []string{"-max-staleness", "-1s"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "max staleness -1s") {
		t.Errorf("-max-staleness -1s: %v; want an error naming it", err)
	}
	if cfg, err := Parse("inventory-server", nil, env(nil), io.Discard); err != nil || cfg.MaxStaleness != 0 {
		t.Errorf("default: %v, %v; want 0 (strict)", cfg.MaxStaleness, err)
	}
}

// getList lists with the given Cache-Control and returns the status and
// the body.
func (s *server) getList(t *testing.T, cacheControl string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+"/v1/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	if cacheControl != "" {
		req.Header.Set("Cache-Control", cacheControl)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// listReads is how many list reads (XRANGE, the read of an unchanged or
// changed inventory) node has answered.
func listReads(t *testing.T, node *redistest.Node) int {
	t.Helper()
	v, err := node.Info("commandstats", "cmdstat_xrange")
	if err != nil {
		return 0 // none yet
	}
	calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
	n, err := strconv.Atoi(calls)
	if err != nil {
		t.Fatalf("cmdstat_xrange %q", v)
	}
	return n
}

// With -max-staleness the server answers lists from the state it holds,
// without a Redis read, within the bound; no-cache reads Redis.
func TestMaxStalenessOnRedis(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			node := newRedis(t)
			s := start(t, Config{Framework: fw, RedisURL: "redis://" + node.Addr() + "/0", MaxStaleness: time.Hour})
			_, before := s.getList(t, "")
			if r := s.patch(t, "/v1/inventory/3", `{"quantity":40}`); r.status != http.StatusOK {
				t.Fatalf("PATCH = %d %s", r.status, r.body)
			}
			reads := listReads(t, node)
			for range 20 {
				if status, body := s.getList(t, ""); status != 200 || body != before {
					t.Fatalf("a list within the bound after an update: %d %s; want the held state %s", status, body, before)
				}
			}
			if n := listReads(t, node); n != reads {
				t.Fatalf("%d list reads on Redis for 20 lists within the bound; want none", n-reads)
			}
			if status, body := s.getList(t, "no-cache"); status != 200 || !strings.Contains(body, `{"petId":3,"quantity":40,`) {
				t.Fatalf("a no-cache list: %d %s; want pet 3 at 40", status, body)
			}
		})
	}
}

// When Redis stops answering (CLIENT PAUSE), no list is answered from a
// state older than the bound: past it, lists get 503 with Retry-After
// until the pause ends.
func TestMaxStalenessRedisPaused(t *testing.T) {
	node := newRedis(t)
	s := start(t, Config{RedisURL: "redis://" + node.Addr() + "/0", MaxStaleness: 100 * time.Millisecond, StoreTimeout: 300 * time.Millisecond})
	if status, body := s.getList(t, ""); status != 200 {
		t.Fatalf("first list: %d %s", status, body)
	}
	if _, err := node.Do("CLIENT", "PAUSE", "1500", "ALL"); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	time.Sleep(150 * time.Millisecond) // past the bound: the held state is older than it
	var got []int
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, s.base+"/v1/inventory", nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Errorf("a list past the bound while Redis is paused: %d Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		got = append(got, resp.StatusCode)
	}
	if time.Since(paused) >= 1500*time.Millisecond {
		t.Skipf("the lists ended after the pause (%v): nothing shown", got) // a machine too loaded to tell
	}
	eventually(t, func() bool { status, _ := s.getList(t, ""); return status == 200 })
}

// eventually polls cond until it holds, or fails after 10 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lists did not answer 200 within 10s of the pause")
		}
	}
}
