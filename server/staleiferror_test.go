package server

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

// The Cache-Status of a list answered stale, as docs/CONTRACT.md gives it.
const staleMark = "petinventory; fwd=stale; fwd-status=503"

func TestParseStaleIfError(t *testing.T) {
	cfg, err := Parse("inventory-server", nil, env(map[string]string{"INVENTORY_STALE_IF_ERROR": "30s"}), io.Discard)
	if err != nil || cfg.StaleIfError != 30*time.Second {
		t.Errorf("INVENTORY_STALE_IF_ERROR=30s: %v, %v", cfg.StaleIfError, err)
	}
	cfg, err = Parse("inventory-server", []string{"-stale-if-error", "1m"}, env(map[string]string{"INVENTORY_STALE_IF_ERROR": "30s"}), io.Discard)
	if err != nil || cfg.StaleIfError != time.Minute {
		t.Errorf("-stale-if-error 1m over the environment: %v, %v", cfg.StaleIfError, err)
	}
	if cfg, err := Parse("inventory-server", nil, env(nil), io.Discard); err != nil || cfg.StaleIfError != 0 {
		t.Errorf("default: %v, %v; want 0 (off)", cfg.StaleIfError, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-stale-if-error", "-1s"}, "stale-if-error -1s: must not be negative"},
		{[]string{"-stale-if-error", "1500ms"}, "stale-if-error 1.5s: must be a whole number of seconds"},
		{[]string{"-stale-if-error", "1s", "-max-staleness", "2s"}, "stale-if-error 1s: must be longer than -max-staleness (2s)"},
		{[]string{"-stale-if-error", "thirty"}, "-stale-if-error: not a duration"},
	} {
		_, err := Parse("inventory-server", c.args, env(nil), io.Discard)
		if _, isConfig := err.(ConfigError); !isConfig || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a ConfigError with %q", c.args, err, c.want)
		}
	}
}

// listWith lists with the given request headers (name, value, …).
func (s *server) listWith(t *testing.T, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+"/v1/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
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
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (r response) String() string {
	return fmt.Sprintf("%d Age=%q Cache-Status=%q Cache-Control=%q ETag=%s %.80s", r.status, r.header.Get("Age"),
		r.header.Get("Cache-Status"), r.header.Get("Cache-Control"), r.header.Get("Etag"), r.body)
}

// staleAge returns the Age of a list answered stale, and whether it is
// one: 200 or 304 with the stale mark and a whole Age no larger than
// bound.
func (r response) staleAge(bound time.Duration) (int, bool) {
	age, err := strconv.Atoi(r.header.Get("Age"))
	return age, (r.status == 200 || r.status == 304) && r.header.Get("Cache-Status") == staleMark &&
		err == nil && age >= 0 && age <= int(bound/time.Second)
}

// fresh reports whether r is a list answered fresh: 200, neither Age nor
// Cache-Status.
func (r response) fresh() bool {
	return r.status == 200 && r.header.Get("Age") == "" && r.header.Get("Cache-Status") == ""
}

// unavailable reports whether r is the 503 of an outage: Retry-After,
// no-store, no stale mark.
func (r response) unavailable() bool {
	return r.status == 503 && r.header.Get("Retry-After") == "1" && r.header.Get("Cache-Control") == "no-store" &&
		r.header.Get("Age") == "" && r.header.Get("Cache-Status") == ""
}

// metric returns the value of a metric line of /metrics without labels.
func (s *server) metric(t *testing.T, name string) float64 {
	t.Helper()
	r := s.do(t, http.MethodGet, "/metrics", "", "")
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(r.body)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Through a CLIENT PAUSE longer than the store timeout, lists are answered
// 200 from the state held before it, with Age, the stale mark and that
// state's ETag (If-None-Match naming it: 304, marked too); a strict list
// and an update get 503. Once the pause ends lists are fresh again, the
// log has one line for the outage and one for its end, and the metrics
// count the stale lists.
func TestStaleIfErrorRedisPaused(t *testing.T) {
	t.Parallel() // it waits for the pause to end, not for the CPU
	node := newRedis(t)
	const bound = 30 * time.Second
	s := start(t, Config{RedisURL: "redis://" + node.Addr() + "/0", StaleIfError: bound, StoreTimeout: 200 * time.Millisecond})
	fresh := s.listWith(t)
	if !fresh.fresh() || fresh.header.Get("Cache-Control") != "private, no-cache, stale-if-error=30" {
		t.Fatalf("a list before the pause: %v; want 200 fresh with Cache-Control: private, no-cache, stale-if-error=30", fresh)
	}
	const pause = 3 * time.Second
	if _, err := node.Do("CLIENT", "PAUSE", strconv.Itoa(int(pause/time.Millisecond)), "ALL"); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	during := func(what string, ok bool, r response) {
		t.Helper()
		if ok {
			return
		}
		if time.Since(paused) >= pause {
			t.Skipf("%s: %v, after the pause ended (%v): a machine too loaded to tell", what, r, time.Since(paused))
		}
		t.Fatalf("%s while Redis is paused: %v", what, r)
	}
	r := s.listWith(t)
	_, ok := r.staleAge(bound)
	during("a list", ok && string(r.body) == string(fresh.body) && r.header.Get("Etag") == fresh.header.Get("Etag") &&
		r.header.Get("Cache-Control") == fresh.header.Get("Cache-Control"), r)
	r = s.listWith(t, "If-None-Match", fresh.header.Get("Etag"))
	_, ok = r.staleAge(bound)
	during("a conditional list naming the held state's tag", ok && r.status == 304 && len(r.body) == 0 && r.header.Get("Etag") == fresh.header.Get("Etag"), r)
	r = s.listWith(t, "Cache-Control", "no-cache")
	during("a strict list (no-cache)", r.unavailable(), r)
	r = s.patch(t, "/v1/inventory/3", `{"quantity":40}`)
	during("an update", r.status == 503 && r.header.Get("Retry-After") == "1", r)

	eventually(t, func() bool { return s.listWith(t).fresh() })
	if n := strings.Count(s.logs.String(), "serving lists from a state "); n != 1 {
		t.Errorf("%d lines for the outage; want 1:\n%s", n, s.logs)
	}
	if !strings.Contains(s.logs.String(), "the store is unavailable: ") {
		t.Errorf("the outage line does not say the store is unavailable:\n%s", s.logs)
	}
	waitLog(t, s, "lists are answered fresh again")
	if n := s.metric(t, "inventory_lists_stale_total"); n < 2 {
		t.Errorf("inventory_lists_stale_total %v; want at least 2 (the list and the 304)", n)
	}
	if age := s.metric(t, "inventory_lists_stale_age_seconds"); age <= 0 || age > bound.Seconds() {
		t.Errorf("inventory_lists_stale_age_seconds %v; want the last stale list's age, within (0, 30]", age)
	}
}

// waitLog polls the server's log until it holds line.
func waitLog(t *testing.T, s *server, line string) {
	t.Helper()
	if err := redistest.Poll(10*time.Second, func() error {
		if !strings.Contains(s.logs.String(), line) {
			return fmt.Errorf("no line %q", line)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v:\n%s", err, s.logs)
	}
}

// With Redis killed (connections refused), lists are answered stale while
// the held state is at most the bound old, then 503, and never stale
// beyond the bound. On Fiber: TestStaleIfErrorRedisPaused runs on Gin.
func TestStaleIfErrorRedisKilled(t *testing.T) {
	t.Parallel() // it waits for the bound to pass, not for the CPU
	node := newRedis(t)
	const bound = 2 * time.Second
	s := start(t, Config{Framework: "fiber", RedisURL: "redis://" + node.Addr() + "/0", StaleIfError: bound, StoreTimeout: 300 * time.Millisecond})
	before := time.Now() // the last read is sent after this
	fresh := s.listWith(t)
	if !fresh.fresh() {
		t.Fatalf("a list before the kill: %v", fresh)
	}
	node.Kill()
	first := s.listWith(t)
	if _, ok := first.staleAge(bound); !ok || string(first.body) != string(fresh.body) {
		if time.Since(before) > bound {
			t.Skipf("the first list after the kill: %v, %v after the last read: a machine too loaded to tell", first, time.Since(before))
		}
		t.Fatalf("the first list after the kill: %v; want the held state, marked stale", first)
	}
	stale, last := 1, response{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := s.listWith(t)
		if r.unavailable() {
			last = r
			break
		}
		if _, ok := r.staleAge(bound); !ok || string(r.body) != string(fresh.body) {
			t.Fatalf("a list with Redis killed: %v; want the held state marked stale, or 503", r)
		}
		stale++
		if time.Now().After(deadline) {
			t.Fatalf("lists still answered stale 10 s after the kill, with a bound of %v: %v", bound, r)
		}
	}
	if elapsed := time.Since(before); elapsed < bound {
		t.Fatalf("503 %v after the last read began; the bound is %v: %v", elapsed, bound, last)
	}
	t.Logf("%d lists answered stale, then 503 once the held state was older than %v", stale, bound)
}

// A store wiped under the server (FLUSHALL, or its marker deleted) is
// never answered from the held state: lists get 503 naming the vanished
// store, and still 503, not stale, when Redis then stops answering. (A
// deleted marker alone, the change log intact, is noticed by the next
// update, which this test sends; how soon a list notices it by itself is
// the store's business.)
func TestStaleIfErrorStoreVanished(t *testing.T) {
	for name, wipe := range map[string][]string{"FLUSHALL": {"FLUSHALL"}, "marker deleted": {"DEL", "{inventory}:initialized"}} {
		t.Run(name, func(t *testing.T) {
			node := newRedis(t)
			s := start(t, Config{RedisURL: "redis://" + node.Addr() + "/0", StaleIfError: 30 * time.Second, StoreTimeout: 300 * time.Millisecond})
			if r := s.listWith(t); !r.fresh() {
				t.Fatalf("a list before the wipe: %v", r)
			}
			if _, err := node.Do(wipe...); err != nil {
				t.Fatal(err)
			}
			if name == "marker deleted" {
				if r := s.patch(t, "/v1/inventory/3", `{"quantity":40}`); r.status != 503 || !strings.Contains(string(r.body), "vanished") {
					t.Fatalf("an update after the marker was deleted: %d %s; want 503 naming the vanished store", r.status, r.body)
				}
			}
			var r response
			if err := redistest.Poll(10*time.Second, func() error {
				r = s.listWith(t)
				if _, stale := r.staleAge(time.Hour); stale {
					t.Fatalf("a list after the store vanished was answered from the held state: %v", r)
				}
				if r.status != 503 {
					return fmt.Errorf("a list: %v", r)
				}
				return nil
			}); err != nil {
				t.Fatalf("lists after the store vanished: %v; want 503", err)
			}
			if !r.unavailable() || !strings.Contains(string(r.body), "vanished") {
				t.Fatalf("a list of the vanished store: %v; want 503 naming the vanished store", r)
			}
			node.Stop() // and now Redis stops answering
			defer node.Continue()
			if r := s.listWith(t); !r.unavailable() {
				t.Fatalf("a list of a vanished store out of reach: %v; want 503, never the state held before it vanished", r)
			}
			if strings.Contains(s.logs.String(), "serving lists from a state") {
				t.Fatalf("a stale list was logged after the store vanished:\n%s", s.logs)
			}
		})
	}
}

// With -replica-acks, a list whose new state the replicas do not hold in
// time (the replica stopped) is answered stale from the last state they
// held, never from the state the master alone holds.
func TestStaleIfErrorReplicaAcks(t *testing.T) {
	master := newRedis(t)
	replica := redistest.StartNode(t, "redis-"+t.Name()+"-replica", "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	if _, err := redistest.Replicated("streaming", master, replica); err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{RedisURL: "redis://" + master.Addr() + "/0", StaleIfError: 30 * time.Second, StoreTimeout: time.Second,
		ReplicaAcks: 1, ReplicaAckTimeout: 100 * time.Millisecond})
	if r := s.patch(t, "/v1/inventory/3", `{"quantity":40}`); r.status != 200 {
		t.Fatalf("PATCH with the replica up: %d %s", r.status, r.body)
	}
	held := s.listWith(t)
	if !held.fresh() || !strings.Contains(string(held.body), `{"petId":3,"quantity":40,`) {
		t.Fatalf("a list with the replica up: %v; want pet 3 at 40", held)
	}
	replica.Stop()
	defer replica.Continue()
	if r := s.patch(t, "/v1/inventory/3", `{"quantity":41}`); r.status != 503 {
		t.Fatalf("PATCH with the replica stopped: %v; want 503", r)
	}
	r := s.listWith(t)
	if _, ok := r.staleAge(30 * time.Second); !ok || string(r.body) != string(held.body) || r.header.Get("Etag") != held.header.Get("Etag") {
		t.Fatalf("a list with the replica stopped: %v; want the state the replica held (pet 3 at 40), marked stale", r)
	}
	if r := s.listWith(t, "Cache-Control", "no-cache"); !r.unavailable() {
		t.Fatalf("a strict list with the replica stopped: %v; want 503", r)
	}
	replica.Continue()
	eventually(t, func() bool {
		r := s.listWith(t)
		return r.fresh() && strings.Contains(string(r.body), `{"petId":3,"quantity":41,`)
	})
}
