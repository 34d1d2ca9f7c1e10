package managed

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

// TestTLSToPlainPort: rediss:// (TLS files given) to a port that speaks
// plain text: the fix says to use redis:// or the TLS port.
func TestTLSToPlainPort(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	n := redistest.StartNode(t, "plain")
	a := startApp(t, []string{"REDIS_URL=rediss://" + n.Addr() + "/0", "INVENTORY_REDIS_CA_FILE=" + files.CA})
	a.expectFault([]string{"redis:// REDIS_URL without INVENTORY_REDIS_CA_FILE", "REDIS_URL, INVENTORY_REDIS_CA_FILE"})
}

// TestSentinelOverTLS: a Sentinel set whose every link speaks TLS. With a
// master_name the sentinels do not know, the fault names it; with the
// right one the app is ready and serves, and go-redis's routine Sentinel
// events are logged at INFO, not WARN.
func TestSentinelOverTLS(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	set := redistest.StartSentinel(t, redistest.SentinelOptions{TLS: files})
	addrs := set.SentinelAddrs()
	url := func(name string) string {
		return fmt.Sprintf("rediss://%s?master_name=%s&addr=%s&addr=%s", addrs[0], name, addrs[1], addrs[2])
	}

	bad := startApp(t, []string{"REDIS_URL=" + url("nosuch"), "INVENTORY_REDIS_CA_FILE=" + files.CA})
	bad.expectFault([]string{"nosuch", "master_name"})
	for _, line := range strings.Split(bad.Logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "unreachable") {
			t.Errorf("the fault's ERROR line repeats go-redis's \"unreachable\", although the sentinels answered: %s", line)
		}
	}

	good := startApp(t, []string{"REDIS_URL=" + url(set.MasterName), "INVENTORY_REDIS_CA_FILE=" + files.CA})
	good.waitReadyz(http.StatusOK, 20*time.Second)
	good.waitFor(5*time.Second, "serving", good.serves)
	logs := good.Logs.String()
	if !strings.Contains(logs, `level=INFO msg="go-redis: sentinel:`) || strings.Contains(logs, `level=WARN msg="go-redis: sentinel:`) {
		t.Errorf("go-redis's routine Sentinel events are not at INFO:\n%s", logs)
	}
}

// TestClusterNodeAsOneNode: a TLS Cluster node that does not own the
// store's slot, named as one node: the fix names the Cluster URL form;
// the Cluster URL form over TLS is ready and serves.
func TestClusterNodeAsOneNode(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{TLS: files})
	slot := c.KeySlot("{inventory}:items")
	others, _ := c.Others(slot)

	bad := startApp(t, []string{"REDIS_URL=rediss://" + others[0].Addr() + "/0", "INVENTORY_REDIS_CA_FILE=" + files.CA})
	bad.expectFault([]string{"cluster=true"})

	good := startApp(t, []string{"REDIS_URL=rediss://" + others[0].Addr() + "?cluster=true", "INVENTORY_REDIS_CA_FILE=" + files.CA})
	good.waitReadyz(http.StatusOK, 20*time.Second)
	good.waitFor(5*time.Second, "serving", good.serves)
}

// TestMutualTLS: a Redis that requires a client certificate
// (tls-auth-clients yes) serves the app given INVENTORY_REDIS_CERT_FILE
// and INVENTORY_REDIS_KEY_FILE.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	r := startManaged(t, files, nil, nil, "--tls-auth-clients", "yes")
	a := startApp(t, []string{"REDIS_URL=" + r.url(appPassword), "INVENTORY_REDIS_CA_FILE=" + files.CA,
		"INVENTORY_REDIS_CERT_FILE=" + files.ClientCert, "INVENTORY_REDIS_KEY_FILE=" + files.ClientKey})
	a.waitReadyz(http.StatusOK, 20*time.Second)
	a.waitFor(5*time.Second, "serving", a.serves)
}
