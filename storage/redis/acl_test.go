package redisstore

import (
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/storetest"
)

// aclTopology is a topology whose data nodes have the default user off,
// for a store whose user holds exactly ACLRule(prefix).
type aclTopology struct {
	nodes []*redistest.Node   // where users are added: the redis-servers
	all   []*redistest.Node   // whose ACL LOG must stay empty
	files *redistest.TLSFiles // nil: plain text
	// url returns the store's URL for user with password pw.
	url func(user, pw string) string
}

// TestACLRuleTopologies: the storetest suite on one node over TLS, a
// 3-master Cluster and a Sentinel-managed master over TLS, each with the
// default user off and every store's user holding exactly ACLRule of its
// prefix, nothing more: every store is ready and passes; afterwards no
// node's ACL LOG holds an entry (nothing the clients sent was refused,
// COMMAND and CLUSTER SLOTS included) and go-redis logged no NOPERM.
func TestACLRuleTopologies(t *testing.T) {
	t.Parallel()
	t.Run("one node over TLS", func(t *testing.T) {
		t.Parallel()
		files := redistest.NewTLSFiles(t)
		n := redistest.StartNodeWith(t, "acl-node", redistest.NodeOptions{TLS: files, DefaultUserOff: true})
		runACLTopology(t, aclTopology{nodes: []*redistest.Node{n}, all: []*redistest.Node{n}, files: files,
			url: func(user, pw string) string { return "rediss://" + user + ":" + pw + "@" + n.Addr() + "/0" }})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.StartClusterWith(t, redistest.ClusterOptions{DefaultUserOff: true})
		runACLTopology(t, aclTopology{nodes: c.Nodes, all: c.Nodes,
			url: func(user, pw string) string {
				return "redis://" + user + ":" + pw + "@" + c.Nodes[0].Addr() + "?addr=" + c.Nodes[1].Addr()
			}})
	})
	t.Run("sentinel over TLS", func(t *testing.T) {
		t.Parallel()
		files := redistest.NewTLSFiles(t)
		s := redistest.StartSentinel(t, redistest.SentinelOptions{TLS: files, DefaultUserOff: true})
		addrs := s.SentinelAddrs()
		runACLTopology(t, aclTopology{nodes: s.Data, all: append(append([]*redistest.Node{}, s.Data...), s.Sentinels...), files: files,
			url: func(user, pw string) string {
				// The sentinels' user is the default; the master's is
				// the username= and password= parameters.
				return "rediss://" + addrs[0] + "?master_name=" + s.MasterName + "&addr=" + addrs[1] + "&addr=" + addrs[2] +
					"&username=" + user + "&password=" + pw
			}})
	})
}

func runACLTopology(t *testing.T, topo aclTopology) {
	storetest.Run(t, storetest.Config{Writers: 8, Updates: 20, SnapshotPets: snapshotPets(), NewStore: func(t *testing.T) inventory.Store {
		prefix := uniquePrefix(t)
		user := "app-" + prefix[len("test-inventory-"):]
		if err := redistest.SetUser(topo.nodes, user, append([]string{"on", ">pw"}, strings.Fields(ACLRule(prefix))...)...); err != nil {
			t.Fatal(err)
		}
		s := aclStore(t, topo, topo.url(user, "pw"), prefix)
		if err := s.Ready(t.Context()); err != nil {
			t.Fatalf("Ready with a user holding exactly ACLRule(%q): %v", prefix, err)
		}
		// The user may not SCAN (Clear): the harness's user clears.
		admin := aclStore(t, topo, topo.url(redistest.AdminUser, redistest.AdminPassword), prefix)
		clearAfter(t, admin)
		return s
	}, NewInstance: newInstance})
	logs, err := redistest.ACLLogs(topo.all)
	if err != nil {
		t.Fatal(err)
	}
	if logs != "" {
		t.Errorf("ACL LOG after the suite, with users holding exactly ACLRule:\n%s", logs)
	}
	if lines := goRedisLog.String(); lines != "" {
		t.Errorf("go-redis logged NOPERM:\n%s", lines)
	}
}

// aclStore is a store under prefix on a client ParseURL builds from url,
// with the topology's TLS files, closed when the test ends.
func aclStore(t *testing.T, topo aclTopology, url, prefix string) *Store {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	if topo.files != nil {
		if err := cfg.LoadTLSFiles(topo.files.CA, topo.files.ClientCert, topo.files.ClientKey); err != nil {
			t.Fatal(err)
		}
	}
	c := cfg.NewClient()
	t.Cleanup(func() {
		// Closed after the cleanups registered later (Clear) ran.
		_ = c.Close()
	})
	s, err := New(c, WithClientConfig(cfg), WithKeyPrefix(prefix), WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
