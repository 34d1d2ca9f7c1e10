package managed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// apiKey is the key every server under test accepts; it must never
// appear in their logs.
const apiKey = "managed-test-key-7c1e9b"

// The ACL users of a managed Redis: admin stands for the provider's
// console, app for the user the inventory runs as.
const (
	adminPassword = "admin-pw-5a8d31"
	appPassword   = "app-pw-90b4e2"
)

// inventory-server and the conformance command, built once by TestMain.
var serverBin, conformanceBin string

func TestMain(m *testing.M) {
	proctest.Main(m, "managed",
		proctest.Binary{Pkg: proctest.ServerPkg, Name: "inventory-server", Path: &serverBin},
		proctest.Binary{Pkg: proctest.ConformancePkg, Name: "inventory-conformance", Path: &conformanceBin})
}

// managedRedis is a TLS-only redis-server with the default user off, an
// admin user and an app user.
type managedRedis struct {
	t     *testing.T
	node  *redistest.Node
	files *redistest.TLSFiles // the CA and certificates the server presents
	admin *redis.Client
}

// startManaged starts a TLS-only redis-server presenting files'
// certificate (new ones when nil), creates the admin user and the app
// user with appRule (the ACL rule of docs/SECURITY.md, unless rule says
// otherwise), and turns the default user off. The admin client trusts
// files' CA and alsoTrust's, if any (a certificate the server is given
// later).
func startManaged(t *testing.T, files, alsoTrust *redistest.TLSFiles, rule []string, args ...string) *managedRedis {
	t.Helper()
	if files == nil {
		files = redistest.NewTLSFiles(t)
	}
	node := redistest.StartTLSNode(t, "managed", files, args...)
	if rule == nil {
		rule = appRule
	}
	for _, cmd := range [][]string{
		{"ACL", "SETUSER", "admin", "on", ">" + adminPassword, "~*", "&*", "+@all"},
		append([]string{"ACL", "SETUSER", "app", "reset", "on", ">" + appPassword}, rule...),
		{"ACL", "SETUSER", "default", "off"},
	} {
		if _, err := node.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	r := &managedRedis{t: t, node: node, files: files}
	r.admin = redis.NewClient(&redis.Options{Addr: node.Addr(), Username: "admin", Password: adminPassword,
		TLSConfig: trusting(t, files, alsoTrust), MaxRetries: -1})
	t.Cleanup(func() { r.admin.Close() })
	return r
}

// trusting is a client TLS configuration trusting the CAs of every files.
func trusting(t *testing.T, files ...*redistest.TLSFiles) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	for _, f := range files {
		if f == nil {
			continue
		}
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(pem)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// do runs one admin command (the provider's console) and fails the test
// on an error.
func (r *managedRedis) do(args ...any) any {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := r.admin.Do(ctx, args...).Result()
	if err != nil {
		r.t.Fatalf("admin %v: %v", args, err)
	}
	return v
}

// url is the rediss:// URL of the app user with password.
func (r *managedRedis) url(password string) string {
	if password == "" {
		return "rediss://app@" + r.node.Addr() + "/0"
	}
	return "rediss://app:" + password + "@" + r.node.Addr() + "/0"
}

// app is a running inventory-server.
type app struct {
	*proctest.Server
	t *testing.T
}

// startApp runs inventory-server with env (REDIS_URL and the rest) and the
// test's API key, and waits until /healthz answers.
func startApp(t *testing.T, env []string, args ...string) *app {
	t.Helper()
	env = append([]string{"INVENTORY_API_KEYS=" + apiKey, "INVENTORY_API_KEYS_FILE=", "INVENTORY_SEED=demo",
		// The system's trust store must not be what makes TLS work.
		"SSL_CERT_FILE=/nonexistent", "SSL_CERT_DIR=/nonexistent",
		"INVENTORY_REDIS_CA_FILE=", "INVENTORY_REDIS_CERT_FILE=", "INVENTORY_REDIS_KEY_FILE=", "INVENTORY_REDIS_PASSWORD_FILE=",
		"INVENTORY_REDIS_ALLOW_EVICTION=", "INVENTORY_STORE_TIMEOUT=1s"}, env...)
	return &app{proctest.Start(t, serverBin, apiKey, env, args), t}
}

var client = &http.Client{Timeout: 10 * time.Second}

func (a *app) get(path string) proctest.Reply {
	a.t.Helper()
	r, err := proctest.Do(context.Background(), client, apiKey, http.MethodGet, a.Base+path, "")
	if err != nil {
		a.t.Fatalf("GET %s: %v", path, err)
	}
	return r
}

func (a *app) patch(petID int, quantity int) proctest.Reply {
	a.t.Helper()
	r, err := proctest.Do(context.Background(), client, apiKey, http.MethodPatch,
		fmt.Sprintf("%s/v1/inventory/%d", a.Base, petID), fmt.Sprintf(`{"quantity":%d}`, quantity))
	if err != nil {
		a.t.Fatalf("PATCH: %v", err)
	}
	return r
}

// errorLines are the ERROR lines of the app's log.
func (a *app) errorLines() []string {
	var out []string
	for line := range strings.Lines(a.Logs.String()) {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// waitFor polls check every 20 ms until it returns "" (done) or within
// passes, and fails the test with check's last word.
func (a *app) waitFor(within time.Duration, what string, check func() string) time.Duration {
	a.t.Helper()
	start := time.Now()
	for {
		why := check()
		if why == "" {
			return time.Since(start)
		}
		if time.Since(start) > within {
			a.t.Fatalf("%s: not within %v: %s", what, within, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReadyz waits until /readyz answers status, and returns its body.
func (a *app) waitReadyz(status int, within time.Duration) string {
	a.t.Helper()
	var body string
	a.waitFor(within, fmt.Sprintf("/readyz %d", status), func() string {
		r := a.get("/readyz")
		body = string(r.Body)
		if r.Status != status {
			return fmt.Sprintf("/readyz = %d %s", r.Status, r.Body)
		}
		return ""
	})
	return body
}

// burst sends n requests (lists and updates, from 5 clients at once) and
// checks that every one is answered 503 unavailable with Retry-After.
func (a *app) burst(n int) {
	a.t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range 5 {
		wg.Go(func() {
			for i := range next {
				var r proctest.Reply
				var err error
				if i%2 == 0 {
					r, err = proctest.Do(context.Background(), client, apiKey, http.MethodGet, a.Base+"/v1/inventory", "")
				} else {
					r, err = proctest.Do(context.Background(), client, apiKey, http.MethodPatch, a.Base+"/v1/inventory/1", `{"quantity":5}`)
				}
				mu.Lock()
				switch {
				case err != nil:
					bad = append(bad, err.Error())
				case r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.Code() != "unavailable":
					bad = append(bad, fmt.Sprintf("%d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After")))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(bad) > 0 {
		a.t.Fatalf("%d of %d requests not 503 unavailable with Retry-After, e.g. %s", len(bad), n, bad[0])
	}
}

// serves checks that the app lists and updates.
func (a *app) serves() string {
	if r := a.get("/v1/inventory"); r.Status != http.StatusOK {
		return fmt.Sprintf("GET = %d %s", r.Status, r.Body)
	}
	if r := a.patch(1, 7); r.Status != http.StatusOK {
		return fmt.Sprintf("PATCH = %d %s", r.Status, r.Body)
	}
	return ""
}

// metric is the value of an unlabelled metric on /metrics (-1 if absent).
func (a *app) metric(name string) float64 {
	a.t.Helper()
	r := a.get("/metrics")
	for line := range strings.Lines(string(r.Body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				a.t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}
