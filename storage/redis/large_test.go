package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// nodeStore starts a redis-server of the test's own (skipped without
// one) and returns it with a store on it.
func nodeStore(t *testing.T, opts ...Option) (*redistest.Node, *Store) {
	t.Helper()
	n := redistest.StartNode(t, "store")
	return n, storeAtURL(t, "redis://"+n.Addr()+"/0", append([]Option{WithKeyPrefix(uniquePrefix(t))}, opts...)...)
}

// TestFullReadUnderWrites: full reads in chunks of 10 of 3 000 pets, and a
// follower of ListChanges, while one writer writes the sequence k = 1, 2,
// … as the quantity of pet k mod 3 000: every list must be the state after
// some write K, which is the largest quantity it shows. A chunked read
// without the log replay shows pets from before and after writes it read
// between chunks, which no single K explains.
func TestFullReadUnderWrites(t *testing.T) {
	t.Parallel()
	_, s := nodeStore(t)
	s.scanCount, s.logPage = 10, 16
	const pets = 3000
	ctx := t.Context()
	if err := s.Put(ctx, items(pets, 0, 0, inventory.StatusAvailable)...); err != nil {
		t.Fatal(err)
	}
	// stateAfter checks that got is the state after write K, K the
	// largest quantity in it, and returns K.
	stateAfter := func(got []inventory.Item) (int, error) {
		if len(got) != pets {
			return 0, fmt.Errorf("%d pets, want %d", len(got), pets)
		}
		k := 0
		for _, it := range got {
			k = max(k, it.Quantity)
		}
		for p, it := range got {
			want := 0
			if p <= k {
				if e := k - (k-p)%pets; e >= 1 {
					want = e
				}
			}
			if it.PetID != int64(p) || it.Quantity != want {
				return k, fmt.Errorf("pet %d has quantity %d; the state after write %d has %d", it.PetID, it.Quantity, k, want)
			}
		}
		return k, nil
	}
	done := make(chan struct{})
	var wrote int
	var wg sync.WaitGroup
	wg.Go(func() {
		for k := 1; ; k++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.SetQuantity(ctx, int64(k%pets), k); err != nil {
				t.Errorf("write %d: %v", k, err)
				return
			}
			wrote = k
		}
	})
	f := &follower{t: t, s: s}
	var fulls, incrementals, lastK int
	for range 20 {
		got, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k, err := stateAfter(got)
		if err != nil {
			t.Fatalf("full read: %v", err)
		}
		fulls++
		for range 5 {
			if ch := f.list(); !ch.Full {
				incrementals++
			}
			k2, err := stateAfter(f.sorted())
			if err != nil {
				t.Fatalf("follower of ListChanges: %v", err)
			}
			if k2 < lastK {
				t.Fatalf("the follower went back from write %d to write %d", lastK, k2)
			}
			lastK = k2
		}
		_ = k
	}
	close(done)
	wg.Wait()
	t.Logf("%d full reads and %d incremental lists during %d writes", fulls, incrementals, wrote)
	if wrote < 100 || incrementals == 0 {
		t.Fatalf("only %d writes and %d incremental lists: the reads did not overlap the writes enough to test anything", wrote, incrementals)
	}
}

// TestFullReadRedisKilled: Redis dies between two chunks of a full read:
// the read fails unavailable, with no partial list.
func TestFullReadRedisKilled(t *testing.T) {
	t.Parallel()
	n, s := nodeStore(t)
	s.scanCount = 10
	ctx := t.Context()
	if err := s.Put(ctx, items(2000, 0, 1, inventory.StatusSold)...); err != nil {
		t.Fatal(err)
	}
	s.hooks.afterScan = func(chunk int) {
		if chunk == 3 {
			n.Kill()
		}
	}
	got, err := s.List(ctx)
	if !errors.Is(err, inventory.ErrUnavailable) || got != nil {
		t.Fatalf("List with Redis killed mid-read = %d items, %v; want nothing, unavailable", len(got), err)
	}
	ch, err := s.ListChanges(ctx, "")
	if !errors.Is(err, inventory.ErrUnavailable) || ch.Items != nil || ch.Cursor != "" {
		t.Fatalf("ListChanges with Redis gone = %+v, %v; want nothing, unavailable", ch, err)
	}
}

// TestPutIfEmptyLarge: two processes seed 100 000 pets each into one
// empty store at once: exactly one seed lands, whole, and no staging hash
// remains.
func TestPutIfEmptyLarge(t *testing.T) {
	t.Parallel()
	_, s := nodeStore(t)
	ctx := t.Context()
	f := &follower{t: t, s: s}
	f.list()
	const pets = 100000
	other := newInstance(t, s).(*Store)
	var wrote [2]bool
	var errs [2]error
	start := time.Now()
	var wg sync.WaitGroup
	for i, st := range []*Store{s, other} {
		wg.Go(func() { wrote[i], errs[i] = st.PutIfEmpty(ctx, items(pets, 0, i+1, inventory.StatusAvailable)...) })
	}
	wg.Wait()
	t.Logf("two seeds of %d pets at once took %v", pets, time.Since(start).Round(time.Millisecond))
	if errs[0] != nil || errs[1] != nil || wrote[0] == wrote[1] {
		t.Fatalf("PutIfEmpty = %v, %v and %v, %v; want exactly one written", wrote[0], errs[0], wrote[1], errs[1])
	}
	winner := 1
	if wrote[1] {
		winner = 2
	}
	ch := f.list()
	if !ch.Full || len(ch.Items) != pets {
		t.Fatalf("ListChanges after the seed = full %v, %d items; want full (a reset), %d", ch.Full, len(ch.Items), pets)
	}
	for _, it := range ch.Items {
		if it.Quantity != winner {
			t.Fatalf("pet %d has quantity %d, want %d: the seeds mixed", it.PetID, it.Quantity, winner)
		}
	}
	if keys := s.client.Keys(ctx, s.seedBase+"*").Val(); len(keys) != 0 {
		t.Errorf("staging hashes left: %v", keys)
	}
	if wrote, err := s.PutIfEmpty(ctx, items(10, 0, 9, inventory.StatusSold)...); wrote || err != nil {
		t.Fatalf("PutIfEmpty on a seeded store = %v, %v; want false, nil", wrote, err)
	}
	if keys := s.client.Keys(ctx, s.seedBase+"*").Val(); len(keys) != 0 {
		t.Errorf("a seed of a store with stock staged %v", keys)
	}
}

// TestPutIfEmptyStagingFails: a staging write that fails, a context that
// ends, and entries that appear while staging: each leaves no staging hash
// behind and writes no entry.
func TestPutIfEmptyStagingFails(t *testing.T) {
	_, c := miniClient(t)
	s := newTestStore(t, c)
	s.putChunk = 10
	ctx := t.Context()
	seed := items(50, 0, 1, inventory.StatusSold)
	noStaging := func(what string) {
		t.Helper()
		if keys := c.Keys(ctx, s.seedBase+"*").Val(); len(keys) != 0 {
			t.Errorf("%s: staging hashes left: %v", what, keys)
		}
		if n := c.Exists(ctx, s.itemsKey).Val(); n != 0 {
			t.Errorf("%s: the items hash exists", what)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	s.hooks.afterStage = func(chunk int, _ string) {
		if chunk == 2 {
			cancel()
		}
	}
	if wrote, err := s.PutIfEmpty(cctx, seed...); wrote || !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("PutIfEmpty with its context ending = %v, %v; want false, unavailable", wrote, err)
	}
	noStaging("context ended")
	s.hooks.afterStage = func(chunk int, staging string) {
		if chunk == 2 {
			c.Set(ctx, staging, "x", 0) // the next HSET fails: WRONGTYPE
		}
	}
	if wrote, err := s.PutIfEmpty(ctx, seed...); wrote || err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("PutIfEmpty whose staging write fails = %v, %v; want false, WRONGTYPE", wrote, err)
	}
	noStaging("staging write failed")
	theirs := inventory.Item{PetID: 1, Quantity: 9, Status: inventory.StatusPending}
	s.hooks.afterStage = func(chunk int, _ string) {
		if chunk == 2 {
			if err := s.Put(ctx, theirs); err != nil {
				t.Error(err)
			}
		}
	}
	if wrote, err := s.PutIfEmpty(ctx, seed...); wrote || err != nil {
		t.Fatalf("PutIfEmpty of a store that got entries while staging = %v, %v; want false, nil", wrote, err)
	}
	if keys := c.Keys(ctx, s.seedBase+"*").Val(); len(keys) != 0 {
		t.Errorf("staging hashes left: %v", keys)
	}
	if got, err := s.List(ctx); err != nil || len(got) != 1 || got[0] != theirs {
		t.Fatalf("List = %+v, %v; want only the entry written while staging", got, err)
	}
}

// commandSizes records, for each command a client sends (those of
// pipelines and transactions one by one), its name and how many pieces
// it carries or asks for: the arguments after the key for a write
// (fields of an HSET, keys of an MSET, UNLINK or DEL), the COUNT of a
// read that pages (HSCAN, SCAN, XRANGE, XREVRANGE; -1 when it has none).
type commandSizes struct {
	mu  sync.Mutex
	max map[string]int    // the largest size seen, by lower-case command name
	arg map[string]string // that command, abridged, for the failure message
}

func (*commandSizes) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.note(cmd)
		return next(ctx, cmd)
	}
}

func (c *commandSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.note(cmd)
		}
		return next(ctx, cmds)
	}
}

func (c *commandSizes) note(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	size := len(args) - 2 // after the name and the key
	switch name {
	case "mset", "unlink", "del", "exists":
		size = len(args) - 1 // every argument is a key (or a key's value)
	case "hscan", "scan", "xrange", "xrevrange":
		size = -1
		for i := 1; i+1 < len(args); i++ {
			if a, ok := args[i].(string); ok && strings.EqualFold(a, "count") {
				size = int(toInt64(args[i+1]))
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max == nil {
		c.max, c.arg = map[string]int{}, map[string]string{}
	}
	if prev, ok := c.max[name]; !ok || size > prev || size == -1 {
		c.max[name] = size
		shown := args
		if len(shown) > 4 {
			shown = append(shown[:4:4], fmt.Sprintf("… (%d arguments)", len(args)))
		}
		c.arg[name] = fmt.Sprintf("%v", shown)
	}
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return -1
}

// TestCommandSizes seeds 20 000 pets, reads them all, writes, and clears
// them, recording every command the store sends: none may grow with the
// inventory. Each write carries at most one chunk (250 entries: fields
// of an HSET, keys of an MSET or an UNLINK), each paging read asks for a
// bounded COUNT, and no command reads a whole hash (HGETALL, HKEYS,
// HVALS) or the keyspace (KEYS). The size of each command is what the
// code controls; how long Redis takes over it depends on the machine
// (scripts/bench/million.sh reports the longest in SLOWLOG, without a
// threshold).
func TestCommandSizes(t *testing.T) {
	t.Parallel()
	_, s := nodeStore(t)
	sizes := &commandSizes{}
	s.client.AddHook(sizes)
	ctx := t.Context()
	const pets = 20000 // 80 chunks: a command that grows with the inventory shows it
	if wrote, err := s.PutIfEmpty(ctx, items(pets, 0, 1, inventory.StatusPending)...); !wrote || err != nil {
		t.Fatalf("PutIfEmpty = %v, %v", wrote, err)
	}
	if got, err := s.List(ctx); err != nil || len(got) != pets {
		t.Fatalf("List = %d items, %v", len(got), err)
	}
	if _, err := s.SetQuantity(ctx, 7, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, items(2000, pets, 1, inventory.StatusSold)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListChanges(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	limits := map[string]int{
		"hset":      2 * defaultPutChunk, // field and value of each entry of a chunk
		"mset":      2 * defaultPutChunk, // key and value of each guard of a chunk
		"unlink":    clearScanCount,      // a SCAN page may hold more; Clear unlinks it in chunks
		"del":       2 * defaultPutChunk,
		"hscan":     defaultScanCount,
		"scan":      clearScanCount,
		"xrange":    int(defaultLogPage),
		"xrevrange": 1,
	}
	sizes.mu.Lock()
	defer sizes.mu.Unlock()
	for name, size := range sizes.max {
		t.Logf("%-10s largest %4d: %s", name, size, sizes.arg[name])
		switch name {
		case "hgetall", "hkeys", "hvals", "keys", "smembers":
			t.Errorf("the store sent %s, which reads a whole key or the keyspace: %s", name, sizes.arg[name])
			continue
		}
		limit, ok := limits[name]
		if !ok {
			continue
		}
		if size == -1 {
			t.Errorf("a %s without COUNT, which reads as much as the key holds: %s", name, sizes.arg[name])
		} else if size > limit {
			t.Errorf("a %s of %d pieces, more than the %d of one chunk: %s", name, size, limit, sizes.arg[name])
		}
	}
	for _, name := range []string{"hset", "mset", "hscan", "xrange", "unlink"} {
		if _, ok := sizes.max[name]; !ok {
			t.Errorf("no %s recorded: the hook did not see the store's commands (%v)", name, sizes.max)
		}
	}
	// Chunks really are full: a seed of 20 000 pets in chunks of 250 sends
	// HSETs of 250 entries, so the bound above is met by chunking, not by
	// sending one entry at a time.
	if got := sizes.max["hset"]; got != 2*defaultPutChunk {
		t.Errorf("the largest HSET carries %d pieces, want a full chunk of %d", got, 2*defaultPutChunk)
	}
}
