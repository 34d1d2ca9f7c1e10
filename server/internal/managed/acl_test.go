package managed

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	redisstore "github.com/petinventory/petinventory/storage/redis"
	"github.com/redis/go-redis/v9"
)

// TestACLRuleEveryTopology: one ACL rule serves every topology. On one
// node (TLS), a 3-master Cluster (TLS) and a Sentinel set, each data node
// has the default user off, an admin user (the provider's console, which
// replication and the sentinels use too) and an app user holding exactly
// redisstore.ACLRule(prefix). inventory-server, as that user, becomes
// ready and passes the conformance command, and afterwards no node's
// ACL LOG holds an entry: nothing the server or go-redis sent was refused.
func TestACLRuleEveryTopology(t *testing.T) {
	proctest.Long(t)
	t.Parallel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "acl-" + hex.EncodeToString(b)
	rule := strings.Fields(redisstore.ACLRule(prefix))

	t.Run("one node over TLS", func(t *testing.T) {
		files := redistest.NewTLSFiles(t)
		n := redistest.StartTLSNode(t, "acl-node", files)
		admins := lockDown(t, []*redistest.Node{n}, files.ClientConfig(t), rule)
		checkACLRule(t, admins, prefix, []string{"REDIS_URL=rediss://app:" + appPassword + "@" + n.Addr() + "/0", "INVENTORY_REDIS_CA_FILE=" + files.CA})
	})
	t.Run("Cluster over TLS", func(t *testing.T) {
		files := redistest.NewTLSFiles(t)
		c := redistest.StartClusterWith(t, redistest.ClusterOptions{TLS: files})
		admins := lockDown(t, c.Nodes, files.ClientConfig(t), rule)
		url := fmt.Sprintf("rediss://app:%s@%s?addr=%s&addr=%s", appPassword, c.Nodes[0].Addr(), c.Nodes[1].Addr(), c.Nodes[2].Addr())
		checkACLRule(t, admins, prefix, []string{"REDIS_URL=" + url, "INVENTORY_REDIS_CA_FILE=" + files.CA})
	})
	t.Run("Sentinel", func(t *testing.T) {
		set := redistest.StartSentinel(t, redistest.SentinelOptions{})
		// The sentinels watch the data nodes as admin from now on.
		for _, s := range set.Sentinels {
			for _, kv := range [][2]string{{"auth-user", "admin"}, {"auth-pass", adminPassword}} {
				if _, err := s.Do("SENTINEL", "SET", set.MasterName, kv[0], kv[1]); err != nil {
					t.Fatalf("%s: SENTINEL SET %s: %v", s.Name, kv[0], err)
				}
			}
		}
		admins := lockDown(t, set.Data, nil, rule)
		addrs := set.SentinelAddrs()
		url := fmt.Sprintf("redis://%s?master_name=%s&addr=%s&addr=%s&username=app&password=%s",
			addrs[0], set.MasterName, addrs[1], addrs[2], appPassword)
		checkACLRule(t, admins, prefix, []string{"REDIS_URL=" + url})
	})
}

// lockDown gives each node an admin user (which replication then uses)
// and an app user holding exactly rule, turns the default user off, and
// returns an admin client per node (TLS with conf, when not nil).
func lockDown(t *testing.T, nodes []*redistest.Node, conf *tls.Config, rule []string) []*redis.Client {
	t.Helper()
	var admins []*redis.Client
	for _, n := range nodes {
		for _, cmd := range [][]string{
			{"ACL", "SETUSER", "admin", "on", ">" + adminPassword, "~*", "&*", "+@all"},
			append([]string{"ACL", "SETUSER", "app", "reset", "on", ">" + appPassword}, rule...),
			{"CONFIG", "SET", "masteruser", "admin"},
			{"CONFIG", "SET", "masterauth", adminPassword},
			{"ACL", "SETUSER", "default", "off"},
		} {
			if _, err := n.Do(cmd...); err != nil {
				t.Fatalf("%s: %v: %v", n.Name, cmd[:3], err)
			}
		}
		c := redis.NewClient(&redis.Options{Addr: n.Addr(), Username: "admin", Password: adminPassword, TLSConfig: conf, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		admins = append(admins, c)
	}
	// Nothing before the server starts counts.
	for _, c := range admins {
		if err := c.Do(context.Background(), "ACL", "LOG", "RESET").Err(); err != nil {
			t.Fatalf("ACL LOG RESET on %s: %v", c.Options().Addr, err)
		}
	}
	return admins
}

// checkACLRule runs inventory-server with env under prefix, waits until
// it is ready, passes the conformance command against it, stops it, and
// then requires every node's ACL LOG to be empty.
func checkACLRule(t *testing.T, admins []*redis.Client, prefix string, env []string) {
	t.Helper()
	a := startApp(t, append(env, "INVENTORY_REDIS_PREFIX="+prefix, "INVENTORY_STORE_TIMEOUT=2s"))
	a.waitReadyz(http.StatusOK, 30*time.Second)
	cmd := exec.Command(conformanceBin, "-base-url", a.Base+"/v1")
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+apiKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inventory-conformance with exactly redisstore.ACLRule: %v\n%s\nthe server's log:\n%s", err, out, a.Logs)
	}
	a.Stop()
	for _, c := range admins {
		entries, err := c.Do(context.Background(), "ACL", "LOG").Slice()
		if err != nil {
			t.Fatalf("ACL LOG on %s: %v", c.Options().Addr, err)
		}
		if len(entries) > 0 {
			t.Errorf("ACL LOG on %s holds %d entries; the first: %v", c.Options().Addr, len(entries), entries[0])
		}
	}
	if lines := a.errorLines(); len(lines) > 0 {
		t.Errorf("the server logged errors: %s", strings.Join(lines, "\n"))
	}
}
