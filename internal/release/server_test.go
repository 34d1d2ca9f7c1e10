package release

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// installedServer installs inventory-server from the proxy at the server
// module's version, checks that it embeds no Redis (miniredis is
// examples/redis's alone) and that without REDIS_URL it exits 2 saying so,
// then runs it on the Redis of REDIS_URL under a key prefix of its own,
// waits until /readyz answers 200, passes the installed conformance
// command against it, and stops it with SIGTERM, which must end it with
// status 0. It returns the suite's summary line.
func installedServer(t *testing.T, repo *Repo, tmp string, env []string, conformanceBin string) string {
	t.Helper()
	redisURL := os.Getenv("REDIS_URL")
	if redisURL == "" {
		t.Fatal("REDIS_URL is not set: the release test runs the installed inventory-server against a real Redis (.ci/run exports it)")
	}
	srv := repo.Module(repo.Modules[0].Path + "/server")
	if srv == nil || !srv.Released() {
		t.Fatal("versions.yaml does not release the server module")
	}
	gobin := filepath.Join(tmp, "bin-server")
	goCmd(t, tmp, append(env, "GOBIN="+gobin), "install", srv.Path+"/cmd/inventory-server@"+srv.Version)
	bin := filepath.Join(gobin, "inventory-server")
	info := goCmd(t, tmp, env, "version", "-m", bin)
	if want := regexp.MustCompile(`(?m)^\s+mod\s+` + regexp.QuoteMeta(srv.Path) + `\s+` + regexp.QuoteMeta(srv.Version) + `\s`); !want.MatchString(info) {
		t.Fatalf("go install did not install %s %s:\n%s", srv.Path, srv.Version, info)
	}
	if strings.Contains(info, "miniredis") {
		t.Errorf("the installed inventory-server embeds miniredis:\n%s", info)
	}

	// Without REDIS_URL: exit 2, naming it.
	var noURLEnv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REDIS_URL=") {
			noURLEnv = append(noURLEnv, kv)
		}
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = noURLEnv
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "REDIS_URL is required") {
		t.Fatalf("inventory-server without REDIS_URL: %v, want exit status 2 saying REDIS_URL is required:\n%s", err, out)
	}

	addr := freeAddr(t)
	key := randomKey(t)
	cmd = exec.Command(bin, "-addr", addr, "-redis-prefix", "release-"+randomKey(t), "-seed", "demo")
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEYS="+key, "INVENTORY_API_KEYS_FILE=")
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("inventory-server's log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := client.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("inventory-server exited before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("inventory-server on %s not ready within 60s (last: %v)", redisURLForLog(redisURL), err)
		}
	}
	line := conformance(t, conformanceBin, base+"/v1", key)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("inventory-server after SIGTERM: %v, want exit status 0", err)
		}
	case <-ctx.Done():
		t.Fatal("inventory-server did not stop within 30s of SIGTERM")
	}
	if strings.Contains(logs.String(), key) {
		t.Error("inventory-server logged the API key")
	}
	if want := "version=" + srv.Version; !strings.Contains(logs.String(), want) {
		t.Errorf("inventory-server installed at %s does not log %s:\n%s", srv.Version, want, logs.String())
	}
	return line
}

// freeAddr returns a loopback address free when asked.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// redisURLForLog is the URL's host part alone: it may hold a password.
func redisURLForLog(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "(REDIS_URL)"
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return fmt.Sprintf("Redis at %s", rest)
}
