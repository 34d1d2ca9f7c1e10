package failover

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

// defaultSlotKey is a key of the store under inventory-server's default
// prefix: its slot is the store's slot.
const defaultSlotKey = "{inventory}:items"

// conformance runs the inventory-conformance command against s and fails
// the test unless every check passes.
func conformance(t *testing.T, s *server) {
	t.Helper()
	cmd := exec.Command(conformanceBin, "-base-url", s.Base+"/v1")
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+apiKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("inventory-conformance: %v\n%s", err, out)
	}
	t.Logf("inventory-conformance passed:\n%s", lastLines(string(out), 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// notReady checks that the server's /readyz answers 503 every time, over
// a few calls a tenth of a second apart, while /healthz says alive.
func notReady(t *testing.T, s *server) {
	t.Helper()
	for i := range 5 {
		st, err := s.readyz()
		if err != nil {
			t.Fatal(err)
		}
		if st != 503 {
			t.Fatalf("/readyz call %d answered %d, want 503: this Redis cannot serve the store", i+1, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCluster runs inventory-server on a 6-node Cluster.
func TestCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	masters, replicas := c.Others(c.KeySlot(defaultSlotKey))

	// The conformance command through a server whose REDIS_URL names only
	// masters that do not own the store's slot.
	t.Run("conformance through non-owning seeds", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, redistest.ClusterURL(masters...))
		s.waitReady(20 * time.Second)
		conformance(t, s)
	})
	// The same through one non-owning seed, with redisstore's
	// cluster=true (a single address is otherwise one node), under a
	// prefix of its own so that the two conformance runs do not change
	// each other's pets.
	oneSeed, _ := c.Others(c.KeySlot("{one-seed}:items"))
	t.Run("conformance through one non-owning seed", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, redistest.ClusterURL(oneSeed[0]), "-redis-prefix", "one-seed")
		s.waitReady(20 * time.Second)
		conformance(t, s)
	})
	// A Cluster node reached as a single node answers MOVED for the
	// store's keys: not ready.
	t.Run("readyz non-owning master as one node", func(t *testing.T) {
		t.Parallel()
		notReady(t, startServer(t, "redis://"+masters[0].Addr()+"/0"))
	})
	t.Run("readyz replica of the owner as one node", func(t *testing.T) {
		t.Parallel()
		notReady(t, startServer(t, "redis://"+replicas[0].Addr()+"/0"))
	})
}

// TestSentinel runs inventory-server on a Sentinel set.
func TestSentinel(t *testing.T) {
	t.Parallel()
	set := redistest.StartSentinel(t, redistest.SentinelOptions{})

	t.Run("conformance through the sentinels", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, set.URL())
		s.waitReady(20 * time.Second)
		conformance(t, s)
	})
	// A sentinel's port as if it were Redis: not ready.
	t.Run("readyz sentinel port as one node", func(t *testing.T) {
		t.Parallel()
		notReady(t, startServer(t, "redis://"+set.Sentinels[0].Addr()+"/0"))
	})
	// A read-only replica: not ready.
	t.Run("readyz replica as one node", func(t *testing.T) {
		t.Parallel()
		notReady(t, startServer(t, "redis://"+set.Replicas()[0].Addr()+"/0", "-redis-prefix", "readyz-replica"))
	})
	// The master itself as one node: ready, so the two above fail for
	// what they point at, not for the harness.
	t.Run("readyz master as one node", func(t *testing.T) {
		t.Parallel()
		startServer(t, "redis://"+set.Master().Addr()+"/0", "-redis-prefix", "readyz-master").waitReady(20 * time.Second)
	})
}
