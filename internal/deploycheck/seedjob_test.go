package deploycheck

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
)

// TestSeedJobRuns runs the seed Job's container as the kubelet would, on a
// real redis-server shaped like the manifests' Redis (TLS, the URL's ACL
// user with the Secret example's password): its arguments (-init-only
// -seed), its environment and the ConfigMap's seed file, as a process that
// must exit 0 having written the store's initialization marker and the
// seed's items; run again (the files applied again), it exits 0 and
// writes nothing. The user may run any command on the prefix's keys: the
// least rule is the server's tests' business.
func TestSeedJobRuns(t *testing.T) {
	m := readDeploy(t)
	sj, err := m.seedJob()
	if err != nil {
		t.Fatal(err)
	}
	items, err := m.seedItems(sj.server)
	if err != nil {
		t.Fatal(err)
	}
	tlsFiles := redistest.NewTLSFiles(t)
	node := redistest.StartNodeWith(t, "deploycheck-seed", redistest.NodeOptions{TLS: tlsFiles, DefaultUserOff: true})

	dir := t.TempDir()
	volumes := sj.job.Spec.Template.Spec.Volumes
	runEnv, _, secrets, err := podEnv(m, volumes, sj.server, dir, node.Addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	redisURL, _ := containerEnv(sj.server, "REDIS_URL")
	u, err := url.Parse(redisURL)
	if err != nil || u.User.Username() == "" || len(secrets) != 1 {
		t.Fatalf("the Job's REDIS_URL %q names no user, or its password file is not the one secret besides the keys (%d)", redisURL, len(secrets))
	}
	prefix := env(sj.server, repoFacts(t), "INVENTORY_REDIS_PREFIX")
	if err := redistest.SetUser([]*redistest.Node{node}, u.User.Username(), "on", ">"+secrets[0], "resetkeys", "~{"+prefix+"}:*", "+@all"); err != nil {
		t.Fatal(err)
	}
	// The test's CA in place of the public ones the image trusts.
	runEnv = append(runEnv, "INVENTORY_REDIS_CA_FILE="+tlsFiles.CA)
	for name := range repoFacts(t).settings {
		if _, ok := containerEnv(sj.server, name); !ok && name != "INVENTORY_REDIS_CA_FILE" {
			runEnv = append(runEnv, name+"=")
		}
	}
	// The seed file where the ConfigMap volume would put it.
	seedPath := seedArg(sj.server.Args)
	local := filepath.Join(dir, "configmap", filepath.Base(seedPath))
	if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(items)
	if err := os.WriteFile(local, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range sj.server.Args {
		args = append(args, strings.ReplaceAll(a, seedPath, local))
	}

	run := func() string {
		t.Helper()
		cmd := exec.Command(serverBin, args...)
		cmd.Env = append(os.Environ(), runEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the Job's container %s %v: %v, want exit 0:\n%s", sj.server.Name, args, err, out)
		}
		return string(out)
	}
	if out := run(); !strings.Contains(out, "initialized the store (-seed)") {
		t.Errorf("the Job's container did not initialize the store:\n%s", out)
	}
	if n, err := node.Do("EXISTS", "{"+prefix+"}:initialized"); err != nil || fmt.Sprint(n) != "1" {
		t.Errorf("after the Job: EXISTS {%s}:initialized = %v, %v; want the marker", prefix, n, err)
	}
	if n, err := node.Do("HLEN", "{"+prefix+"}:items"); err != nil || fmt.Sprint(n) != fmt.Sprint(len(items)) {
		t.Errorf("after the Job: HLEN {%s}:items = %v, %v; want the seed's %d items", prefix, n, err, len(items))
	}
	if out := run(); !strings.Contains(out, "already initialized") {
		t.Errorf("the Job run again did not leave the store as it was:\n%s", out)
	}
}
