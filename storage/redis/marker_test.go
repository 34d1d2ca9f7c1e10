package redisstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

var markerSeed = []inventory.Item{
	{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable},
	{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
}

// faultOf returns the initialization fault err holds, failing the test
// when it holds none or not of kind, or when it also passes for a
// configuration fault.
func faultOf(t *testing.T, what string, err error, kind string) *InitFault {
	t.Helper()
	f, ok := errors.AsType[*InitFault](err)
	if !ok || f.Kind != kind || !errors.Is(err, ErrNotInitialized) || !errors.Is(err, inventory.ErrUnavailable) || f.Op == "" {
		t.Fatalf("%s = %v; want a %s fault matching ErrNotInitialized and inventory.ErrUnavailable, naming its call", what, err, kind)
	}
	if _, cf := errors.AsType[*ConfigFault](err); cf || errors.Is(err, ErrMisconfigured) {
		t.Fatalf("%s = %v; a store without its marker passes for a configuration fault", what, err)
	}
	var ie *inventory.Error
	if !errors.As(err, &ie) || ie.Message() != f.Fix {
		t.Fatalf("%s: the client would read %q; want the fix %q", what, ie.Message(), f.Fix)
	}
	return f
}

// refusedOnce checks that a list, an update of a pet the seed held and
// Ready fail with the fault of kind, that Uninitialized says it, and that
// it was logged once.
func refusedOnce(t *testing.T, s *Store, kind string, logs *bytes.Buffer) {
	t.Helper()
	_, err := s.List(t.Context())
	faultOf(t, "List", err, kind)
	_, err = s.SetQuantity(t.Context(), 1, 5)
	faultOf(t, "SetQuantity", err, kind)
	faultOf(t, "Ready", s.Ready(t.Context()), kind)
	if got := s.Uninitialized(); got != kind {
		t.Errorf("Uninitialized() = %q, want %s", got, kind)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "fault="+kind) {
		t.Errorf("logged %d times, want once, with fault=%s:\n%s", n, kind, logs.String())
	}
	if n := s.Stats().ConfigFaults; n != 0 {
		t.Errorf("Stats().ConfigFaults = %d for a store without its marker, want 0: it is no configuration fault", n)
	}
}

// Initialize writes the seed and the marker once; a second Initialize, with
// other items, writes nothing.
func TestInitializeOnce(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if got, err := s.Initialize(t.Context(), markerSeed...); err != nil || got != Initialized {
			t.Fatalf("Initialize on a fresh store = %v, %v; want initialized", got, err)
		}
		if got, err := s.Initialize(t.Context(), inventory.Item{PetID: 9, Status: inventory.StatusSold}); err != nil || got != AlreadyInitialized {
			t.Fatalf("Initialize again = %v, %v; want already initialized", got, err)
		}
		items, err := s.List(t.Context())
		if err != nil || len(items) != 2 || items[0] != markerSeed[0] {
			t.Fatalf("List = %v, %v; want the first seed only", items, err)
		}
		if err := s.Ready(t.Context()); err != nil {
			t.Fatalf("Ready of an initialized store: %v", err)
		}
	})
}

// An empty initialization is an initialized, empty inventory: a later seed
// does not write into it.
func TestInitializeEmpty(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if got, err := s.Initialize(t.Context()); err != nil || got != Initialized {
			t.Fatalf("Initialize() = %v, %v; want initialized", got, err)
		}
		if got, err := s.Initialize(t.Context(), markerSeed...); err != nil || got != AlreadyInitialized {
			t.Fatalf("Initialize with items after an empty one = %v, %v; want already initialized", got, err)
		}
		if items, err := s.List(t.Context()); err != nil || len(items) != 0 {
			t.Fatalf("List = %v, %v; want []", items, err)
		}
		if _, err := s.SetQuantity(t.Context(), 1, 5); !errors.Is(err, inventory.ErrNotFound) {
			t.Fatalf("SetQuantity of a pet an empty store never held = %v; want not found", err)
		}
	})
}

// A store seeded before the marker existed (entries, no marker) is adopted:
// the marker is written and the entries kept.
func TestInitializeAdopts(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if err := s.Put(t.Context(), markerSeed...); err != nil {
			t.Fatal(err)
		}
		if _, err := s.List(t.Context()); err == nil {
			t.Fatal("List of a store without its marker succeeded")
		}
		if got, err := s.Initialize(t.Context(), inventory.Item{PetID: 9, Status: inventory.StatusSold}); err != nil || got != Adopted {
			t.Fatalf("Initialize of a store with entries and no marker = %v, %v; want adopted", got, err)
		}
		items, err := s.List(t.Context())
		if err != nil || len(items) != 2 {
			t.Fatalf("List after the adoption = %v, %v; want the entries kept", items, err)
		}
		if got, err := s.Initialize(t.Context()); err != nil || got != AlreadyInitialized {
			t.Fatalf("Initialize after the adoption = %v, %v; want already initialized", got, err)
		}
	})
}

// Adopt writes the marker of a store with entries and no marker only: not
// of a fresh store, not twice.
func TestAdopt(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if did, err := s.Adopt(t.Context()); err != nil || did {
			t.Fatalf("Adopt of a fresh store = %v, %v; want false", did, err)
		}
		if err := s.Ready(t.Context()); !errors.Is(err, ErrNotInitialized) {
			t.Fatalf("Ready after Adopt of a fresh store = %v; want not initialized", err)
		}
		if err := s.Put(t.Context(), markerSeed...); err != nil {
			t.Fatal(err)
		}
		if did, err := s.Adopt(t.Context()); err != nil || !did {
			t.Fatalf("Adopt of a store with entries and no marker = %v, %v; want true", did, err)
		}
		if did, err := s.Adopt(t.Context()); err != nil || did {
			t.Fatalf("Adopt again = %v, %v; want false", did, err)
		}
		if items, err := s.List(t.Context()); err != nil || len(items) != 2 {
			t.Fatalf("List after Adopt = %v, %v", items, err)
		}
	})
}

// PutIfEmpty writes the marker with the seed.
func TestPutIfEmptyMarks(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if wrote, err := s.PutIfEmpty(t.Context(), markerSeed...); err != nil || !wrote {
			t.Fatalf("PutIfEmpty = %v, %v", wrote, err)
		}
		if n, err := c.Exists(t.Context(), s.markerKey).Result(); err != nil || n != 1 {
			t.Fatalf("marker after PutIfEmpty: %d, %v", n, err)
		}
		if got, err := s.Initialize(t.Context()); err != nil || got != AlreadyInitialized {
			t.Fatalf("Initialize after PutIfEmpty = %v, %v; want already initialized", got, err)
		}
	})
}

// A store never initialized is not served: lists, updates and Ready fail
// with the not-initialized fault, whose fix the client reads, logged once.
// Without WithRequireInitialized it is served empty, as before.
func TestNotInitializedIsNotServed(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		var logs bytes.Buffer
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		_, err := s.List(t.Context())
		f := faultOf(t, "List", err, FaultNotInitialized)
		if !strings.Contains(f.Fix, "Store.Initialize") || !strings.Contains(f.Fix, "backup") || f.Op != "list" {
			t.Errorf("fix %q (op %q): want Store.Initialize and a backup named, by the list", f.Fix, f.Op)
		}
		_, err = s.ListChanges(t.Context(), "")
		faultOf(t, "ListChanges", err, FaultNotInitialized)
		refusedOnce(t, s, FaultNotInitialized, &logs)
		if n, _ := c.Exists(t.Context(), s.logKey).Result(); n != 0 {
			t.Errorf("a refused list wrote the change log")
		}

		plain := newTestStore(t, c)
		if items, err := plain.List(t.Context()); err != nil || len(items) != 0 {
			t.Errorf("without WithRequireInitialized: List = %v, %v; want []", items, err)
		}
	})
}

// A store that loses its marker under the process (its keys deleted, as
// FLUSHALL or a restart without persistence does) is noticed by the next
// list (whole or by changes since a state held) and update: never [] nor
// not found; it is served again once initialized.
func TestVanishedStoreIsNotServed(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		var logs bytes.Buffer
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
			WithSettingNames(func(option, kind string) string {
				if option == "Store.Initialize" && kind == FaultVanished {
					return "inventory-server -seed"
				}
				return ""
			}))
		if _, err := s.Initialize(t.Context(), markerSeed...); err != nil {
			t.Fatal(err)
		}
		held, err := s.ListChanges(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetQuantity(t.Context(), 1, 4); err != nil {
			t.Fatal(err)
		}
		if err := s.Clear(t.Context()); err != nil { // every key of the store, the marker too
			t.Fatal(err)
		}
		_, err = s.ListChanges(t.Context(), held.Cursor)
		f := faultOf(t, "ListChanges since a state held", err, FaultVanished)
		if !strings.Contains(f.Fix, "vanished") || !strings.Contains(f.Fix, "inventory-server -seed") || strings.Contains(f.Fix, "Store.Initialize") {
			t.Errorf("fix %q: want the vanished store and the application's words for Initialize", f.Fix)
		}
		refusedOnce(t, s, FaultVanished, &logs)
		// Lists since the state held, while the fault lasts: refused,
		// without a line each.
		before := logs.Len()
		for range 5 {
			_, err = s.ListChanges(t.Context(), held.Cursor)
			faultOf(t, "ListChanges since a state held, again", err, FaultVanished)
		}
		if more := logs.String()[before:]; more != "" {
			t.Errorf("lists of a vanished store logged:\n%s", more)
		}

		if got, err := s.Initialize(t.Context()); err != nil || got != Initialized {
			t.Fatalf("Initialize after the loss = %v, %v", got, err)
		}
		// Initialized again, the fault Ready saw is over before Ready looks.
		if got := s.Uninitialized(); got != "" {
			t.Errorf("Uninitialized() = %q once initialized again, want none", got)
		}
		if err := s.Ready(t.Context()); err != nil {
			t.Fatalf("Ready after initializing again: %v", err)
		}
		if items, err := s.List(t.Context()); err != nil || len(items) != 0 {
			t.Fatalf("List after initializing again (empty) = %v, %v", items, err)
		}
		if got := s.Uninitialized(); got != "" {
			t.Errorf("Uninitialized() = %q once initialized again, want none", got)
		}
		if !strings.Contains(logs.String(), "initialization fault cleared") {
			t.Errorf("the end of the fault was not logged:\n%s", logs.String())
		}
	})
}

// DurabilityRisk names a Redis without persistence (the tests'
// redis-server runs with no save point and no AOF), and says nothing where
// CONFIG is refused.
func TestDurabilityRisk(t *testing.T) {
	c := realClient(t)
	s := newTestStore(t, c)
	aof, _ := c.ConfigGet(t.Context(), "appendonly").Result()
	save, _ := c.ConfigGet(t.Context(), "save").Result()
	risk, err := s.DurabilityRisk(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if none := aof["appendonly"] == "no" && save["save"] == ""; none != (risk != "") {
		t.Fatalf("appendonly %q, save %q: DurabilityRisk = %q", aof["appendonly"], save["save"], risk)
	}
	if risk != "" && !strings.Contains(risk, "appendonly yes") {
		t.Errorf("risk %q names no fix", risk)
	}
	_, mc := miniClient(t)
	ms := newTestStore(t, mc)
	if risk, err := ms.DurabilityRisk(t.Context()); err != nil || risk != "" {
		t.Errorf("where INFO and CONFIG are refused: %q, %v; want nothing", risk, err)
	}
}

// A named ACL user holding only the store's rule is not asked CONFIG GET,
// which its ACL refuses: nothing enters ACL LOG, and the risk is not told.
func TestDurabilityRiskAsksNoRefusedCommand(t *testing.T) {
	admin := realClient(t)
	s := newTestStore(t, admin)
	user := "durability-" + s.KeyPrefix()
	args := []any{"ACL", "SETUSER", user, "on", ">pw"}
	for _, r := range strings.Fields(ACLRule(s.KeyPrefix())) {
		args = append(args, r)
	}
	if err := admin.Do(t.Context(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	if err := admin.Do(t.Context(), "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	o := *admin.Options()
	o.Username, o.Password = user, "pw"
	c := redis.NewClient(&o)
	defer c.Close()
	app, err := New(c, WithKeyPrefix(s.KeyPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	if risk, err := app.DurabilityRisk(t.Context()); err != nil || risk != "" {
		t.Errorf("as a user with the store's rule: %q, %v; want nothing (cannot tell)", risk, err)
	}
	entries, err := admin.Do(t.Context(), "ACL", "LOG").Slice()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(fmt.Sprint(e), user) {
			t.Errorf("ACL LOG holds a refusal of the store's user: %v", e)
		}
	}
}

// A store restored under the process (its marker back, as a backup brings
// it) is served again by the next list, without waiting for Ready, even
// when Ready saw the loss.
func TestRestoredStoreIsServedAgain(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(discardLog))
		if _, err := s.Initialize(t.Context(), markerSeed...); err != nil {
			t.Fatal(err)
		}
		held, err := s.ListChanges(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		backup, err := c.HGetAll(t.Context(), s.itemsKey).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Clear(t.Context()); err != nil {
			t.Fatal(err)
		}
		faultOf(t, "Ready", s.Ready(t.Context()), FaultVanished)
		// The restore: the entries and the marker, not the change log.
		if err := c.HSet(t.Context(), s.itemsKey, backup).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.MSet(t.Context(), s.markerKey, "seed restored").Err(); err != nil {
			t.Fatal(err)
		}
		ch, err := s.ListChanges(t.Context(), held.Cursor)
		if err != nil || !ch.Full || len(ch.Items) != 2 {
			t.Fatalf("ListChanges after the restore = %+v, %v; want the entries, read whole", ch, err)
		}
		if got := s.Uninitialized(); got != "" {
			t.Errorf("Uninitialized() = %q after the restore, want none", got)
		}
	})
}

// Deleting the marker alone (the change log kept) under a store that
// holds a state: the next list since that state refuses the store, before
// any Ready, with the marker's check in the pipeline of its log read; so
// do Ready and a full read, until the marker is back, when all serve it
// again. A configuration fault met meanwhile (a refused password) does
// not hide the initialization fault.
func TestMarkerAloneDeleted(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		var logs bytes.Buffer
		s := newTestStore(t, c, WithRequireInitialized(), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if _, err := s.Initialize(t.Context(), markerSeed...); err != nil {
			t.Fatal(err)
		}
		held, err := s.ListChanges(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		if ch, err := s.ListChanges(t.Context(), held.Cursor); err != nil || ch.Full || ch.Cursor != held.Cursor {
			t.Fatalf("ListChanges since the state held, nothing changed = %+v, %v; want the same cursor, not a full read", ch, err)
		}
		if err := c.Del(t.Context(), s.markerKey).Err(); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.Exists(t.Context(), s.logKey, s.itemsKey).Result(); n != 2 {
			t.Fatalf("the change log and the items must stay for this test; %d of them exist", n)
		}
		_, err = s.ListChanges(t.Context(), held.Cursor)
		if f := faultOf(t, "ListChanges since a state held, the marker alone deleted", err, FaultVanished); f.Op != "list changes" {
			t.Errorf("InitFault.Op = %q, want the list's", f.Op)
		}
		if got := s.Uninitialized(); got != FaultVanished {
			t.Errorf("Uninitialized() = %q after the list found the marker missing, want %s", got, FaultVanished)
		}
		refusedOnce(t, s, FaultVanished, &logs)
		_, err = s.ListChanges(t.Context(), held.Cursor)
		faultOf(t, "ListChanges since a state held, after Ready", err, FaultVanished)

		if err := c.MSet(t.Context(), s.markerKey, "seed restored").Err(); err != nil {
			t.Fatal(err)
		}
		if ch, err := s.ListChanges(t.Context(), held.Cursor); err != nil || len(ch.Items)+len(ch.Log) == 0 && ch.Cursor != held.Cursor {
			t.Fatalf("ListChanges once the marker is back = %+v, %v; want the store served", ch, err)
		}
		if err := s.Ready(t.Context()); err != nil || s.Uninitialized() != "" {
			t.Fatalf("Ready once the marker is back = %v, Uninitialized() = %q; want ready", err, s.Uninitialized())
		}
		if !strings.Contains(logs.String(), "initialization fault cleared") {
			t.Errorf("the end of the fault was not logged:\n%s", logs.String())
		}
	})
}

// A configuration fault met while the store is without its marker (here
// an evicting Redis, which Ready refuses before it looks at the marker)
// does not hide the initialization fault, and only the configuration
// fault is counted in Stats.ConfigFaults.
func TestInitFaultBesideConfigFault(t *testing.T) {
	t.Parallel()
	n := redistest.StartNode(t, "marker-evicting", "--maxmemory-policy", "allkeys-lru")
	s := storeAtURL(t, "redis://"+n.Addr()+"/0", WithRequireInitialized(), WithLogger(discardLog))
	_, err := s.List(t.Context())
	faultOf(t, "List of a store never initialized", err, FaultNotInitialized)
	if got := s.Stats().ConfigFaults; got != 0 {
		t.Fatalf("Stats().ConfigFaults = %d after a store without its marker, want 0", got)
	}
	if err := s.Ready(t.Context()); !errors.Is(err, ErrMisconfigured) || errors.Is(err, ErrNotInitialized) {
		t.Fatalf("Ready on an evicting Redis = %v; want the eviction policy's configuration fault", err)
	}
	if got := s.Uninitialized(); got != FaultNotInitialized {
		t.Errorf("Uninitialized() = %q beside a configuration fault, want %s", got, FaultNotInitialized)
	}
	if got := s.Stats().ConfigFaults; got != 1 {
		t.Errorf("Stats().ConfigFaults = %d, want 1: the eviction policy's fault alone", got)
	}
	if _, err := n.DoString("CONFIG", "SET", "maxmemory-policy", "noeviction"); err != nil {
		t.Fatal(err)
	}
	faultOf(t, "Ready once the policy is fixed", s.Ready(t.Context()), FaultNotInitialized)
}
