package hardening

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestTwoReplicasThousandConcurrentUpdates runs two replicas of the server
// (one Gin, one Fiber) on one redis-server and sends them a thousand
// concurrent updates at once: 800 to distinct pets and 200 to one hot pet,
// alternating replicas. Every 200 must carry its own value, every distinct
// pet must then hold exactly its acknowledged value, the hot pet one of its
// acknowledged values, and both replicas must list the same inventory.
func TestTwoReplicasThousandConcurrentUpdates(t *testing.T) {
	const distinct, hot = 800, 200
	r := startRedis(t)

	// A seed of distinct+1 pets; pet 0 is the hot one.
	items := make([]item, distinct+1)
	for i := range items {
		items[i] = item{PetID: int64(i), Quantity: 0, Status: []string{"available", "pending", "sold"}[i%3]}
	}
	raw, _ := json.Marshal(items)
	seed := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(seed, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"INVENTORY_REDIS_PREFIX=replicas", "INVENTORY_STORE_TIMEOUT=10s"}
	args := []string{"-seed", seed}
	replicas := []*server{
		startServerArgs(t, "gin", r.url(), args, env...),
		startServerArgs(t, "fiber", r.url(), args, env...),
	}
	bases := []string{replicas[0].Base, replicas[1].Base}

	var updates []ack
	for i := 1; i <= distinct; i++ {
		updates = append(updates, ack{pet: int64(i), value: 1000 + i})
	}
	for i := 0; i < hot; i++ {
		updates = append(updates, ack{pet: 0, value: 5000 + i})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	acked := updateConcurrently(t, client, bases, updates)
	if len(acked) != len(updates) {
		t.Fatalf("%d of %d concurrent updates acknowledged", len(acked), len(updates))
	}

	// Both replicas list the same inventory, as Redis holds it.
	lists := make([][]item, len(replicas))
	for i, s := range replicas {
		lists[i] = list(t, s)
	}
	a, _ := json.Marshal(lists[0])
	b, _ := json.Marshal(lists[1])
	if string(a) != string(b) {
		t.Fatal("the two replicas list different inventories")
	}
	final := map[int64]int{}
	for _, it := range lists[0] {
		final[it.PetID] = it.Quantity
	}
	lost := 0
	hotValues := map[int]bool{}
	for _, u := range acked {
		if u.pet == 0 {
			hotValues[u.value] = true
		} else if final[u.pet] != u.value {
			lost++
			t.Errorf("pet %d: acknowledged %d, holds %d", u.pet, u.value, final[u.pet])
		}
	}
	if !hotValues[final[0]] {
		t.Errorf("hot pet holds %d, which no acknowledged update wrote", final[0])
	}
	summary(t, "two replicas (gin + fiber) on one Redis: %d concurrent updates (%d distinct pets, %d on one hot pet), %d acknowledged, %d lost; hot pet ends at %d",
		len(updates), distinct, hot, len(acked), lost, final[0])
}

type ack struct {
	pet   int64
	value int
}

// updateConcurrently sends every update at once from its own goroutine,
// released together, and returns those answered 200 with their own value.
func updateConcurrently(t *testing.T, client *http.Client, bases []string, updates []ack) []ack {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		acked []ack
	)
	for i, u := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			base := bases[i%len(bases)]
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := do(ctx, client, "PATCH", base+"/v1/inventory/"+strconv.FormatInt(u.pet, 10), fmt.Sprintf(`{"quantity":%d}`, u.value))
			if err != nil || got.Status != 200 {
				t.Errorf("update of pet %d to %d via %s: %v %d %s", u.pet, u.value, base, err, got.Status, got.Body)
				return
			}
			var it item
			if err := json.Unmarshal(got.Body, &it); err != nil || it.PetID != u.pet || it.Quantity != u.value {
				t.Errorf("update of pet %d to %d answered %s: not its own write", u.pet, u.value, got.Body)
				return
			}
			mu.Lock()
			acked = append(acked, u)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return acked
}
