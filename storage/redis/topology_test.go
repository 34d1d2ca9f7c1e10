package redisstore

import (
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/storetest"
	"github.com/redis/go-redis/v9"
)

// The storetest suite on the two topologies teams run in production, each
// started for the test by internal/redistest (skipped, saying so, when
// redis-server is not installed): a 6-node Redis Cluster reached through
// seed nodes that do not own the store's slot, and a Sentinel-managed
// master with two replicas. Every subtest uses a key prefix of its own, so
// the stores land in different slots of the Cluster.

// topologyConfig runs the concurrency subtests at 16 writers × 50
// updates: enough to interleave on 2 cores, small enough for CI.
func topologyConfig(newStore func(t *testing.T) inventory.Store) storetest.Config {
	return storetest.Config{Writers: 16, Updates: 50, NewStore: newStore}
}

func TestStoreConformanceCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	// Seed only with masters that do not own the default prefix's slot:
	// the client must find the owner from the cluster's slot map.
	seeds, _ := c.Others(c.KeySlot("{" + DefaultKeyPrefix + "}:status"))
	opts := &redis.ClusterOptions{Addrs: []string{seeds[0].Addr(), seeds[1].Addr()}}
	applyClusterTimeouts(opts)
	client := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	storetest.RunConfig(t, topologyConfig(func(t *testing.T) inventory.Store {
		return newTestStore(t, client)
	}))
}

func TestStoreConformanceSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	opts := &redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: s.SentinelAddrs()}
	applyFailoverTimeouts(opts)
	client := redis.NewFailoverClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	storetest.RunConfig(t, topologyConfig(func(t *testing.T) inventory.Store {
		return newTestStore(t, client)
	}))
}

// applyClusterTimeouts and applyFailoverTimeouts give the topology
// clients the store's documented timeouts, as ApplyTimeouts does for a
// single node.
func applyClusterTimeouts(o *redis.ClusterOptions) {
	single := &redis.Options{}
	ApplyTimeouts(single)
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = single.DialTimeout, single.ReadTimeout, single.WriteTimeout, single.PoolTimeout
	o.ContextTimeoutEnabled = single.ContextTimeoutEnabled
}

func applyFailoverTimeouts(o *redis.FailoverOptions) {
	single := &redis.Options{}
	ApplyTimeouts(single)
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = single.DialTimeout, single.ReadTimeout, single.WriteTimeout, single.PoolTimeout
	o.ContextTimeoutEnabled = single.ContextTimeoutEnabled
}
