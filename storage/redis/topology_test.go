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
func topologyConfig(c redis.UniversalClient, newStore func(t *testing.T) inventory.Store) storetest.Config {
	return withLogHooks(c, storetest.Config{Writers: 16, Updates: 50, NewStore: newStore})
}

// withLogHooks gives the storetest suite what it needs to check the
// change log's fallbacks and two processes on one Redis: a second store
// over the same keys, a trimmed log, a lost log, a fault between two
// pages of a read (see trimLog, loseLog, newInstance and pageFaults in
// changes_test.go), for stores on client c.
func withLogHooks(c redis.UniversalClient, cfg storetest.Config) storetest.Config {
	cfg.SnapshotPets = snapshotPets()
	pf := &pageFaults{}
	c.AddHook(pf)
	cfg.NewInstance = newInstance
	cfg.TrimLog = trimLog
	cfg.LoseLog = loseLog
	cfg.BetweenPages = pf.betweenPages
	return cfg
}

func TestStoreConformanceCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	// Seed only with masters that do not own the default prefix's slot:
	// the client must find the owner from the cluster's slot map.
	seeds, _ := c.Others(c.KeySlot("{" + DefaultKeyPrefix + "}:items"))
	client := topologyClient(t, "redis://"+seeds[0].Addr()+"?addr="+seeds[1].Addr(), Cluster)
	storetest.Run(t, topologyConfig(client, func(t *testing.T) inventory.Store {
		return newTestStore(t, client)
	}))
}

func TestStoreConformanceSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelOptions{})
	addrs := s.SentinelAddrs()
	client := topologyClient(t, "redis://"+addrs[0]+"?master_name="+s.MasterName+"&addr="+addrs[1]+"&addr="+addrs[2], Failover)
	storetest.Run(t, topologyConfig(client, func(t *testing.T) inventory.Store {
		return newTestStore(t, client)
	}))
}

// The same suite over TLS: every node TLS-only, the Cluster's bus, the
// replication and the sentinels included, reached through rediss:// URLs
// and a private CA given to LoadTLSFiles (with a client certificate).

func TestStoreConformanceClusterTLS(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{TLS: files})
	seeds, _ := c.Others(c.KeySlot("{" + DefaultKeyPrefix + "}:items"))
	client := topologyTLSClient(t, "rediss://"+seeds[0].Addr()+"?addr="+seeds[1].Addr(), Cluster, files)
	storetest.Run(t, topologyConfig(client, func(t *testing.T) inventory.Store {
		s := newTestStore(t, client)
		if err := s.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
		return s
	}))
}

func TestStoreConformanceSentinelTLS(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	s := redistest.StartSentinel(t, redistest.SentinelOptions{TLS: files})
	addrs := s.SentinelAddrs()
	client := topologyTLSClient(t, "rediss://"+addrs[0]+"?master_name="+s.MasterName+"&addr="+addrs[1]+"&addr="+addrs[2], Failover, files)
	storetest.Run(t, topologyConfig(client, func(t *testing.T) inventory.Store {
		st := newTestStore(t, client)
		if err := st.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
		return st
	}))
}

// topologyClient returns a client for url, which must name topology, as
// ParseURL builds it (the store's timeouts included); closed when the test
// ends.
func topologyClient(t *testing.T, url string, topology Topology) redis.UniversalClient {
	t.Helper()
	return topologyTLSClient(t, url, topology, nil)
}

// topologyTLSClient is topologyClient with the CA and the client
// certificate of files given to LoadTLSFiles, when files is not nil.
func topologyTLSClient(t *testing.T, url string, topology Topology, files *redistest.TLSFiles) redis.UniversalClient {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	if files != nil {
		if err := cfg.LoadTLSFiles(files.CA, files.ClientCert, files.ClientKey); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Topology != topology {
		t.Fatalf("ParseURL(%q) names a %s, want a %s", url, cfg.Topology, topology)
	}
	client := cfg.NewClient()
	t.Cleanup(func() { _ = client.Close() })
	return client
}
