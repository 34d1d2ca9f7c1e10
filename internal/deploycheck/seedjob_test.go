package deploycheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// TestSeedJobRuns runs the seed Job's pod as the kubelet would, on a real
// redis-server shaped like the manifests' Redis (TLS, the URL's ACL user
// with the Secret example's password): the server sidecar with the Job's
// arguments, environment and the ConfigMap's seed file, until its startup
// probe's path answers 200; then the Job's container, which must exit 0.
// The store then lists the seed's items. The user may run any command on
// the prefix's keys: the least rule is the server's tests' business.
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
	runEnv, keys, secrets, err := podEnv(m, volumes, sj.server, dir, node.Addr(), "")
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

	s := proctest.Start(t, serverBin, keys[0], runEnv, args)
	probe := sj.server.StartupProbe.HTTPGet.Path
	client := &http.Client{Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := redistest.Poll(30*time.Second, func() error {
		r, err := proctest.Do(ctx, client, "", http.MethodGet, s.Base+probe, "")
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("%s: %d %s", probe, r.Status, r.Body)
		}
		return nil
	}); err != nil {
		t.Fatalf("the Job's startup probe never passed: %v", err)
	}
	out, err := exec.Command(serverBin, sj.done.Args...).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "inventory-server ") {
		t.Errorf("the Job's container %s %v: %v %s, want exit 0 and the version", sj.done.Name, sj.done.Args, err, out)
	}
	r, err := proctest.Do(ctx, client, keys[0], http.MethodGet, s.Base+"/v1/inventory", "")
	if err != nil {
		t.Fatal(err)
	}
	var listed []json.RawMessage
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &listed) != nil || len(listed) != len(items) {
		t.Errorf("after the Job: GET /v1/inventory %d %s, want 200 with the seed's %d items", r.Status, r.Body, len(items))
	}
	s.Stop()
	if _, err := s.Wait(0); err != nil {
		t.Errorf("the sidecar exited with %v after SIGTERM, want status 0", err)
	}
}
