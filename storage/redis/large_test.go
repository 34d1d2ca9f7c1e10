package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
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
	s.afterScan = func(chunk int) {
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
	s.afterStage = func(chunk int, _ string) {
		if chunk == 2 {
			cancel()
		}
	}
	if wrote, err := s.PutIfEmpty(cctx, seed...); wrote || !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("PutIfEmpty with its context ending = %v, %v; want false, unavailable", wrote, err)
	}
	noStaging("context ended")
	s.afterStage = func(chunk int, staging string) {
		if chunk == 2 {
			c.Set(ctx, staging, "x", 0) // the next HSET fails: WRONGTYPE
		}
	}
	if wrote, err := s.PutIfEmpty(ctx, seed...); wrote || err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("PutIfEmpty whose staging write fails = %v, %v; want false, WRONGTYPE", wrote, err)
	}
	noStaging("staging write failed")
	theirs := inventory.Item{PetID: 1, Quantity: 9, Status: inventory.StatusPending}
	s.afterStage = func(chunk int, _ string) {
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

// TestNoSlowCommand seeds 200 000 pets, reads them all, writes, and
// clears them: Redis's SLOWLOG (threshold 5 ms) must hold no command of
// the store's. A command can overrun 5 ms on a loaded machine when
// redis-server loses its core midway, so a command kind that does is
// tried again in a second run, and only one that overruns in both fails
// the test: a command that grows with the inventory (an HGETALL of 200 000
// fields takes some 30 ms) overruns every time.
func TestNoSlowCommand(t *testing.T) {
	n, _ := nodeStore(t)
	for _, cmd := range [][]string{{"CONFIG", "SET", "slowlog-log-slower-than", "5000"}} {
		if _, err := n.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	run := func() map[string]string {
		s := storeAtURL(t, "redis://"+n.Addr()+"/0", WithKeyPrefix(uniquePrefix(t)))
		ctx := t.Context()
		if _, err := n.Do("SLOWLOG", "RESET"); err != nil {
			t.Fatal(err)
		}
		const pets = 200000
		start := time.Now()
		if wrote, err := s.PutIfEmpty(ctx, items(pets, 0, 1, inventory.StatusPending)...); !wrote || err != nil {
			t.Fatalf("PutIfEmpty = %v, %v", wrote, err)
		}
		seeded := time.Since(start)
		start = time.Now()
		got, err := s.List(ctx)
		if err != nil || len(got) != pets {
			t.Fatalf("List = %d items, %v", len(got), err)
		}
		listed := time.Since(start)
		if _, err := s.SetQuantity(ctx, 7, 7); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, items(2000, pets, 1, inventory.StatusSold)...); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if err := s.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d pets: seeded in %v, listed in %v, cleared in %v", pets, seeded.Round(time.Millisecond), listed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		slow, err := s.client.SlowLogGet(ctx, 128).Result()
		if err != nil {
			t.Fatal(err)
		}
		ours := map[string]string{}
		for _, e := range slow {
			args := e.Args
			if len(args) > 3 {
				args = append(args[:3:3], "…")
			}
			line := fmt.Sprintf("%v took %v", args, e.Duration)
			if strings.Contains(strings.Join(e.Args, " "), s.prefix) {
				ours[strings.ToLower(e.Args[0])] = line
			}
			t.Logf("SLOWLOG: %s", line)
		}
		return ours
	}
	first := run()
	if len(first) == 0 {
		return
	}
	second := run()
	for cmd, line := range second {
		if before, ok := first[cmd]; ok {
			t.Errorf("a %s of the store's ran longer than 5 ms in both runs: %s, then %s", cmd, before, line)
		}
	}
}
