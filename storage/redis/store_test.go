package redisstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/storetest"
	"github.com/redis/go-redis/v9"
)

func TestStoreConformanceMiniredis(t *testing.T) {
	_, c := miniClient(t)
	storetest.Run(t, withLogHooks(c, storetest.Config{
		NewStore: func(t *testing.T) inventory.Store {
			s := newTestStore(t, c)
			// miniredis's XRANGE parses the ID of every entry of the stream
			// on every call, so a log at its full length (about 10 000
			// records) made the snapshot check run past its 2 minutes under
			// -race. A shorter log keeps the run a unit test's; readers meet
			// trimmed positions more often, which the check also covers.
			// The real server's runs keep the default length.
			s.logCap = 1000
			return s
		},
	}))
}

// TestStoreConformanceRedis runs the suite against a real redis-server,
// with the concurrency subtests at 32 writers × 200 updates: one hot pet
// and one pet per writer, while another goroutine lists. Every update must
// succeed (none may fail for running out of retries) and return its own
// write; the number of WATCH aborts is logged.
func TestStoreConformanceRedis(t *testing.T) {
	c := realClient(t)
	storetest.Run(t, withLogHooks(c, storetest.Config{
		Writers: 32,
		Updates: 200,
		NewStore: func(t *testing.T) inventory.Store {
			s := newTestStore(t, c)
			t.Cleanup(func() {
				st := s.Stats()
				t.Logf("WATCH aborts: %d, updates that ran out of retries: %d", st.WatchAborts, st.RetriesExhausted)
				if st.RetriesExhausted != 0 {
					t.Errorf("%d updates ran out of retries; none should", st.RetriesExhausted)
				}
			})
			return s
		},
	}))
}

// TestKeyLayout pins the layout doc.go describes, since other replicas
// (and other versions of this package) read the same keys.
func TestKeyLayout(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c)
		tag := "{" + s.KeyPrefix() + "}:"
		if err := s.Put(ctx, inventory.Item{PetID: -5, Quantity: 3, Status: inventory.StatusPending}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetQuantity(ctx, -5, 4); err != nil {
			t.Fatal(err)
		}
		if got := c.HGetAll(ctx, tag+"items").Val(); len(got) != 1 || got["-5"] != "4:pending" {
			t.Errorf("%sitems = %v, want map[-5:4:pending]", tag, got)
		}
		if got := c.Get(ctx, tag+"guard:-5").Val(); got != "1" {
			t.Errorf("%sguard:-5 = %q, want \"1\"", tag, got)
		}
		if err := s.Delete(ctx, -5); err != nil {
			t.Fatal(err)
		}
		if n := c.Exists(ctx, tag+"items", tag+"guard:-5").Val(); n != 0 {
			t.Errorf("%d of the store's entry keys remain after its only entry was deleted, want 0", n)
		}
		// The log stays, one entry per write, each with its nonce.
		entries, err := c.XRange(ctx, tag+"log", "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			if n, _ := e.Values["n"].(string); !validNonce(n) {
				t.Errorf("log entry %s has nonce %q, want 1 to 16 hex digits", e.ID, n)
			}
			got = append(got, fmt.Sprint(e.Values["op"], " ", e.Values["d"]))
		}
		want := []string{"set -5:3:pending", "set -5:4:pending", "del -5"}
		if !slices.Equal(got, want) {
			t.Errorf("%slog = %q, want %q", tag, got, want)
		}
		if keys := c.Keys(ctx, "{"+s.KeyPrefix()+"}:*").Val(); len(keys) != 1 {
			t.Errorf("keys after the only entry was deleted: %v, want only %slog (%stx is never written)", keys, tag, tag)
		}
	})
}

// TestPrefixesAreSeparate: two stores on one Redis under different
// prefixes never see each other's entries.
func TestPrefixesAreSeparate(t *testing.T) {
	_, c := miniClient(t)
	ctx := t.Context()
	a, b := newTestStore(t, c), newTestStore(t, c)
	if err := a.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); err != nil {
		t.Fatal(err)
	}
	if items, err := b.List(ctx); err != nil || len(items) != 0 {
		t.Fatalf("other prefix List = %v, %v; want empty", items, err)
	}
	if _, err := b.SetQuantity(ctx, 1, 2); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("other prefix SetQuantity = %v, want not found", err)
	}
}

// TestSetQuantityRetriesAfterConcurrentPut changes the entry between WATCH
// and EXEC once: the first EXEC is aborted, the retry succeeds, and the
// item returned carries the status the Put set, as stored.
func TestSetQuantityRetriesAfterConcurrentPut(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c)
		other, err := New(c, WithKeyPrefix(s.KeyPrefix())) // another replica
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, inventory.Item{PetID: 9, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
			t.Fatal(err)
		}
		calls := 0
		s.hooks.beforeExec = func(string) {
			calls++
			if calls == 1 {
				if err := other.Put(ctx, inventory.Item{PetID: 9, Quantity: 50, Status: inventory.StatusSold}); err != nil {
					t.Error(err)
				}
			}
		}
		got, err := s.SetQuantity(ctx, 9, 2)
		if err != nil {
			t.Fatal(err)
		}
		want := inventory.Item{PetID: 9, Quantity: 2, Status: inventory.StatusSold}
		if got != want {
			t.Fatalf("SetQuantity = %+v, want %+v", got, want)
		}
		if items, err := s.List(ctx); err != nil || len(items) != 1 || items[0] != want {
			t.Fatalf("List = %+v, %v; want [%+v]", items, err, want)
		}
		if st := s.Stats(); st.WatchAborts != 1 || st.RetriesExhausted != 0 || calls != 2 {
			t.Fatalf("Stats = %+v after %d attempts; want 1 abort, 0 exhausted, 2 attempts", st, calls)
		}
	})
}

// TestSetQuantityRetriesExhausted: an entry changed before every EXEC
// makes the update give up after WithMaxRetries retries, as unavailable,
// having written nothing.
func TestSetQuantityRetriesExhausted(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c, WithMaxRetries(2))
		other, err := New(c, WithKeyPrefix(s.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		put := inventory.Item{PetID: 9, Quantity: 1, Status: inventory.StatusAvailable}
		if err := s.Put(ctx, put); err != nil {
			t.Fatal(err)
		}
		s.hooks.beforeExec = func(string) {
			if err := other.Put(ctx, put); err != nil { // the same values: a write all the same
				t.Error(err)
			}
		}
		_, err = s.SetQuantity(ctx, 9, 2)
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, redis.TxFailedErr) {
			t.Fatalf("SetQuantity = %v, want unavailable wrapping redis.TxFailedErr", err)
		}
		if st := s.Stats(); st.WatchAborts != 3 || st.RetriesExhausted != 1 {
			t.Fatalf("Stats = %+v; want 3 aborts (1 attempt + 2 retries) and 1 exhausted", st)
		}
		if items, err := s.List(ctx); err != nil || len(items) != 1 || items[0] != put {
			t.Fatalf("List = %+v, %v; want [%+v]: the failed update must write nothing", items, err, put)
		}
	})
}

// TestSetQuantityEntryDeletedDuringTransaction: the retry finds no entry
// and reports not found, creating nothing.
func TestSetQuantityEntryDeletedDuringTransaction(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c)
		other, err := New(c, WithKeyPrefix(s.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, inventory.Item{PetID: 9, Quantity: 1, Status: inventory.StatusAvailable}); err != nil {
			t.Fatal(err)
		}
		s.hooks.beforeExec = func(string) {
			if err := other.Delete(ctx, 9); err != nil {
				t.Error(err)
			}
		}
		if _, err := s.SetQuantity(ctx, 9, 2); !errors.Is(err, inventory.ErrNotFound) {
			t.Fatalf("SetQuantity = %v, want not found", err)
		}
		tag := "{" + s.KeyPrefix() + "}:"
		if n := c.Exists(ctx, tag+"items", tag+"guard:9").Val(); n != 0 {
			t.Fatalf("%d keys exist after the update of a deleted pet, want 0: it must create nothing", n)
		}
	})
}

// TestInvalidInputWritesNothing: writes go through inventory.Service,
// which checks them (the store trusts it); nothing invalid reaches Redis.
func TestInvalidInputWritesNothing(t *testing.T) {
	_, c := miniClient(t)
	ctx := t.Context()
	s := newTestStore(t, c)
	svc, err := inventory.NewService(s)
	if err != nil {
		t.Fatal(err)
	}
	good := inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}
	for _, bad := range []inventory.Item{
		{PetID: 2, Quantity: -1, Status: inventory.StatusSold},
		{PetID: 2, Quantity: inventory.MaxQuantity + 1, Status: inventory.StatusSold},
		{PetID: 2, Quantity: 1, Status: "lost"},
		{PetID: 1, Quantity: 2, Status: inventory.StatusSold}, // pet 1 twice
	} {
		if err := svc.Put(ctx, good, bad); !isInvalidField(err) {
			t.Errorf("Put(%+v) = %v, want invalid_field", bad, err)
		}
		if wrote, err := svc.PutIfEmpty(ctx, good, bad); wrote || !isInvalidField(err) {
			t.Errorf("PutIfEmpty(%+v) = %v, %v; want false, invalid_field", bad, wrote, err)
		}
	}
	if items, err := s.List(ctx); err != nil || len(items) != 0 {
		t.Fatalf("List = %+v, %v; want nothing written by a Put with an invalid item", items, err)
	}
	if err := svc.Put(ctx, good); err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{-1, inventory.MaxQuantity + 1} {
		if _, err := svc.SetQuantity(ctx, 1, q); !isInvalidField(err) {
			t.Errorf("SetQuantity(1, %d) = %v, want invalid_field", q, err)
		}
	}
	if items, err := s.List(ctx); err != nil || len(items) != 1 || items[0] != good {
		t.Fatalf("List = %+v, %v; want [%+v]", items, err, good)
	}
}

// TestCorruptData: values the store never writes make calls fail with an
// internal error that names the key and field, never a panic or an item.
func TestCorruptData(t *testing.T) {
	cases := []struct {
		name        string
		items       map[string]string
		field       string // named in the message
		setQtyFails bool   // SetQuantity(5) reads the entry
	}{
		{name: "UnknownStatus", items: map[string]string{"5": "1:lost"}, field: "5", setQtyFails: true},
		{name: "EmptyStatus", items: map[string]string{"5": "1:"}, field: "5", setQtyFails: true},
		{name: "NoSeparator", items: map[string]string{"5": "sold"}, field: "5", setQtyFails: true},
		{name: "QuantityNotInteger", items: map[string]string{"5": "abc:sold"}, field: "5", setQtyFails: true},
		{name: "QuantityNegative", items: map[string]string{"5": "-1:sold"}, field: "5", setQtyFails: true},
		{name: "QuantityNotCanonical", items: map[string]string{"5": "+1:sold"}, field: "5", setQtyFails: true},
		{name: "QuantityTooLarge", items: map[string]string{"5": "2147483648:sold"}, field: "5", setQtyFails: true},
		{name: "QuantityEmpty", items: map[string]string{"5": ":sold"}, field: "5", setQtyFails: true},
		{name: "PetIDNotInteger", items: map[string]string{"five": "1:sold"}, field: "five"},
		{name: "PetIDNotCanonical", items: map[string]string{"05": "1:sold"}, field: "05"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := miniClient(t)
			ctx := t.Context()
			s := newTestStore(t, c)
			for f, v := range tc.items {
				c.HSet(ctx, s.itemsKey, f, v)
			}
			items, err := s.List(ctx)
			assertCorrupt(t, "List", err, s, tc.field, "items")
			if items != nil {
				t.Errorf("List returned items %+v along with its error", items)
			}
			ch, err := s.ListChanges(ctx, "")
			assertCorrupt(t, "ListChanges", err, s, tc.field, "items")
			if ch.Items != nil || ch.Cursor != "" {
				t.Errorf("ListChanges returned %+v along with its error", ch)
			}
			_, err = s.SetQuantity(ctx, 5, 1)
			if tc.setQtyFails {
				assertCorrupt(t, "SetQuantity", err, s, tc.field, "items")
				if v := c.HGet(ctx, s.itemsKey, "5").Val(); v != tc.items["5"] {
					t.Errorf("SetQuantity wrote %q over a corrupt entry", v)
				}
			}
		})
	}
	t.Run("WrongType", func(t *testing.T) {
		_, c := miniClient(t)
		ctx := t.Context()
		s := newTestStore(t, c)
		c.Set(ctx, s.itemsKey, "not a hash", 0)
		_, err := s.List(ctx)
		var ie *inventory.Error
		if err == nil || errors.As(err, &ie) {
			t.Fatalf("List over a key of the wrong type = %v, want a plain error (answered 500)", err)
		}
		if !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("error %q does not carry Redis's reply", err)
		}
	})
}

func assertCorrupt(t *testing.T, op string, err error, s *Store, field, contains string) {
	t.Helper()
	var ie *inventory.Error
	if !errors.Is(err, errCorrupt) || errors.As(err, &ie) {
		t.Fatalf("%s = %v, want a plain error matching errCorrupt (answered 500)", op, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `"`+field+`"`) || !strings.Contains(msg, contains) || !strings.Contains(msg, s.KeyPrefix()) {
		t.Errorf("%s error %q does not name the key (prefix %s), the field %q and %q", op, msg, s.KeyPrefix(), field, contains)
	}
}

func TestNew(t *testing.T) {
	var nilClient *redis.Client
	var nilCluster *redis.ClusterClient
	for name, c := range map[string]redis.UniversalClient{"nil": nil, "nil *Client": nilClient, "nil *ClusterClient": nilCluster} {
		if s, err := New(c); s != nil || err == nil {
			t.Errorf("New(%s) = %v, %v; want an error", name, s, err)
		}
	}
	_, c := miniClient(t)
	for _, p := range []string{"", "a b", "{x}", "x}", "é", "a*", strings.Repeat("a", 101)} {
		if s, err := New(c, WithKeyPrefix(p)); s != nil || err == nil || !strings.Contains(err.Error(), "WithKeyPrefix") {
			t.Errorf("New(WithKeyPrefix(%q)) = %v, %v; want an error naming the option", p, s, err)
		}
	}
	for _, n := range []int{-1, 1001} {
		if s, err := New(c, WithMaxRetries(n)); s != nil || err == nil || !strings.Contains(err.Error(), "WithMaxRetries") {
			t.Errorf("New(WithMaxRetries(%d)) = %v, %v; want an error naming the option", n, s, err)
		}
	}
	if s, err := New(c, WithMaxRetries(1), nil); s != nil || err == nil || !strings.Contains(err.Error(), "option 2 is nil") {
		t.Errorf("New with a nil option = %v, %v; want an error naming it", s, err)
	}
	for _, url := range []string{"redis://127.0.0.1:1?cluster=true", "redis://127.0.0.1:1?master_name=m"} {
		cfg, err := ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := New(c, WithClientConfig(cfg)); s != nil || err == nil || !strings.Contains(err.Error(), "WithClientConfig: the Config names a "+string(cfg.Topology)) {
			t.Errorf("New(single-node client, WithClientConfig(%s)) = %v, %v; want an error naming the mismatch", url, s, err)
		}
	}
	s, err := New(c)
	if err != nil || s.KeyPrefix() != DefaultKeyPrefix || s.maxRetries != defaultMaxRetries {
		t.Fatalf("New(c) = %+v, %v; want the defaults", s, err)
	}
	s, err = New(c, WithKeyPrefix("app-1/inv.v2:x_y"), WithMaxRetries(0))
	if err != nil || s.itemsKey != "{app-1/inv.v2:x_y}:items" || s.maxRetries != 0 {
		t.Fatalf("New with options = %+v, %v", s, err)
	}
}

// TestBackoff: the pause grows and stays within 64 ms whatever the attempt.
func TestBackoff(t *testing.T) {
	for attempt := range 20 {
		hi := min(1<<attempt, 64)
		for range 50 {
			d := backoff(attempt)
			if d.Microseconds() < int64(hi)*500 || d.Microseconds() > int64(hi)*1000 {
				t.Fatalf("backoff(%d) = %v, want within [%dms/2, %dms]", attempt, d, hi, hi)
			}
		}
	}
}

// TestPutIfEmpty: several replicas seeding an empty store at once: exactly
// one writes, the store holds its items, and a later seed changes nothing.
func TestPutIfEmpty(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c)
		if wrote, err := s.PutIfEmpty(ctx); wrote || err != nil {
			t.Fatalf("PutIfEmpty() = %v, %v; want false, nil", wrote, err)
		}
		const replicas = 8
		wrote := make([]bool, replicas)
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		for r := range replicas {
			wg.Go(func() {
				other, err := New(c, WithKeyPrefix(s.KeyPrefix()))
				if err != nil {
					errs[r] = err
					return
				}
				// Each replica seeds different quantities, to tell whose won.
				wrote[r], errs[r] = other.PutIfEmpty(ctx,
					inventory.Item{PetID: 1, Quantity: r, Status: inventory.StatusAvailable},
					inventory.Item{PetID: 2, Quantity: r, Status: inventory.StatusSold})
			})
		}
		wg.Wait()
		winner := -1
		for r := range replicas {
			if errs[r] != nil {
				t.Fatalf("replica %d: PutIfEmpty: %v", r, errs[r])
			}
			if wrote[r] {
				if winner >= 0 {
					t.Fatalf("replicas %d and %d both seeded", winner, r)
				}
				winner = r
			}
		}
		if winner < 0 {
			t.Fatal("no replica seeded the empty store")
		}
		want := []inventory.Item{{PetID: 1, Quantity: winner, Status: inventory.StatusAvailable}, {PetID: 2, Quantity: winner, Status: inventory.StatusSold}}
		if items, err := s.List(ctx); err != nil || !slices.Equal(items, want) {
			t.Fatalf("List = %+v, %v; want the winner's seed %+v", items, err, want)
		}
		if _, err := s.SetQuantity(ctx, 1, 99); err != nil {
			t.Fatal(err)
		}
		if wrote, err := s.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 0, Status: inventory.StatusSold}); wrote || err != nil {
			t.Fatalf("PutIfEmpty on a store with stock = %v, %v; want false, nil", wrote, err)
		}
		if items, _ := s.List(ctx); items[0].Quantity != 99 {
			t.Fatalf("a seed overwrote real stock: %+v", items)
		}
	})
}

// TestPutIfEmptyRace: another replica seeds between the check and the
// write; the retry sees the entries and writes nothing. When entries keep
// changing, it gives up as unavailable.
func TestPutIfEmptyRace(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c, WithMaxRetries(1))
		other, err := New(c, WithKeyPrefix(s.KeyPrefix()))
		if err != nil {
			t.Fatal(err)
		}
		theirs := inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusAvailable}
		s.hooks.beforeExec = func(string) {
			if err := other.Put(ctx, theirs); err != nil {
				t.Error(err)
			}
		}
		wrote, err := s.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusSold})
		if wrote || err != nil {
			t.Fatalf("PutIfEmpty racing another seed = %v, %v; want false, nil", wrote, err)
		}
		if items, err := s.List(ctx); err != nil || len(items) != 1 || items[0] != theirs {
			t.Fatalf("List = %+v, %v; want the other replica's seed only", items, err)
		}

		// The other replica empties the store again each time: no progress.
		s.hooks.beforeExec = func(string) {
			_ = other.Put(ctx, theirs)
			_ = other.Delete(ctx, theirs.PetID)
		}
		if err := other.Delete(ctx, theirs.PetID); err != nil {
			t.Fatal(err)
		}
		_, err = s.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusSold})
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, redis.TxFailedErr) {
			t.Fatalf("PutIfEmpty with entries changing on every attempt = %v, want unavailable wrapping TxFailedErr", err)
		}
	})
}

// isInvalidField reports whether err is an *inventory.Error with code
// invalid_field.
func isInvalidField(err error) bool {
	var e *inventory.Error
	return errors.As(err, &e) && e.Code() == inventory.CodeInvalidField
}
