package managed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/server"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

// appRule is the least ACL rule of the app user: the store's own, for
// the default key prefix.
var appRule = strings.Fields(redisstore.ACLRule(redisstore.DefaultKeyPrefix))

// TestManagedRedis: the setup of a managed Redis done right (TLS-only,
// private CA, ACL user with exactly the least rule, password from a file)
// is ready and passes the conformance command, and nothing logged shows
// the password.
func TestManagedRedis(t *testing.T) {
	t.Parallel()
	r := startManaged(t, nil, nil, nil)
	pw := writeFile(t, "password", appPassword+"\n")
	a := startApp(t, []string{"REDIS_URL=" + r.url(""), "INVENTORY_REDIS_CA_FILE=" + r.files.CA, "INVENTORY_REDIS_PASSWORD_FILE=" + pw})
	a.waitReadyz(http.StatusOK, 20*time.Second)
	a.waitFor(5*time.Second, "serving", a.serves)
	cmd := exec.Command(conformanceBin, "-base-url", a.Base+"/v1")
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+apiKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inventory-conformance with the least ACL rule: %v\n%s", err, out)
	}
	if logs := a.Logs.String(); strings.Contains(logs, appPassword) || len(a.errorLines()) > 0 || !strings.Contains(logs, "(TLS)") {
		t.Errorf("the log shows the password, an error, or not TLS:\n%s", logs)
	}
}

// fault is one row of docs/SECURITY.md's table of configuration faults.
type fault struct {
	name string
	// untrusted: the server presents a certificate of a CA the app is
	// not given.
	untrusted bool
	server    []string // redis-server arguments
	rule      []string // the app user's ACL rule (nil: appRule)
	seeded    bool     // another user seeded the store before the app starts
	env       func(r *managedRedis) []string
	says      []string // in the ERROR line and in /readyz's body
	// fix fixes the fault on the Redis side, as the operator would; nil
	// when only a change of the app's settings (and a restart) fixes it.
	fix func(r *managedRedis, trusted *redistest.TLSFiles)
}

var faults = []fault{
	{
		name:      "CA unknown",
		untrusted: true,
		env:       func(r *managedRedis) []string { return []string{"INVENTORY_REDIS_CA_FILE="} },
		says:      []string{"INVENTORY_REDIS_CA_FILE"},
	},
	{
		// The app is given a CA that did not sign the server's
		// certificate; the server's certificate is then replaced by one
		// that CA signed: new connections verify, no restart.
		name:      "CA other than the server's",
		untrusted: true,
		says:      []string{"INVENTORY_REDIS_CA_FILE"},
		fix: func(r *managedRedis, trusted *redistest.TLSFiles) {
			r.do("CONFIG", "SET", "tls-cert-file", trusted.ServerCert, "tls-key-file", trusted.ServerKey, "tls-ca-cert-file", trusted.CA)
		},
	},
	{
		name: "wrong password",
		env:  func(r *managedRedis) []string { return []string{"REDIS_URL=" + r.url("not-the-password")} },
		says: []string{"WRONGPASS", "REDIS_URL"},
		fix:  func(r *managedRedis, _ *redistest.TLSFiles) { r.do("ACL", "SETUSER", "app", ">not-the-password") },
	},
	{
		name: "plain text to the TLS port",
		env: func(r *managedRedis) []string {
			return []string{"REDIS_URL=redis://app:" + appPassword + "@" + r.node.Addr() + "/0", "INVENTORY_REDIS_CA_FILE="}
		},
		says: []string{"use a rediss:// REDIS_URL, and INVENTORY_REDIS_CA_FILE for a private CA"},
	},
	{
		name:   "ACL user without xadd, store seeded by another user",
		rule:   append(append([]string{}, appRule...), "-xadd"),
		seeded: true,
		says:   []string{"XADD", "+xadd"},
		fix:    func(r *managedRedis, _ *redistest.TLSFiles) { r.do("ACL", "SETUSER", "app", "+xadd") },
	},
	{
		name: "ACL user without xadd, empty store",
		rule: append(append([]string{}, appRule...), "-xadd"),
		says: []string{"XADD", "+xadd"},
		fix:  func(r *managedRedis, _ *redistest.TLSFiles) { r.do("ACL", "SETUSER", "app", "+xadd") },
	},
	{
		name: "ACL user without @stream",
		rule: append(append([]string{}, appRule...), "-@stream"),
		says: []string{"ACL SETUSER <user> +x"},
		fix: func(r *managedRedis, _ *redistest.TLSFiles) {
			r.do("ACL", "SETUSER", "app", "+xadd", "+xrange", "+xrevrange")
		},
	},
	{
		name:   "eviction policy allkeys-lru",
		server: []string{"--maxmemory-policy", "allkeys-lru"},
		says:   []string{"allkeys-lru", "INVENTORY_REDIS_ALLOW_EVICTION"},
		fix: func(r *managedRedis, _ *redistest.TLSFiles) {
			r.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		},
	},
}

// TestConfigurationFaults tries each fault through inventory-server: /v1
// answers 503 unavailable with Retry-After to a burst of 50 requests,
// /readyz 503 with the fix, the log holds exactly one ERROR line, with the
// fix; once the fault is fixed on the Redis side, the app is ready and
// serves without a restart.
func TestConfigurationFaults(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			trusted := redistest.NewTLSFiles(t)
			serverFiles := trusted
			if f.untrusted {
				serverFiles = redistest.NewTLSFiles(t)
			}
			r := startManaged(t, serverFiles, trusted, f.rule, f.server...)
			if f.seeded {
				seedAsAdmin(t, r)
			}
			env := []string{"REDIS_URL=" + r.url(appPassword), "INVENTORY_REDIS_CA_FILE=" + trusted.CA}
			if f.env != nil {
				env = append(env, f.env(r)...)
			}
			a := startApp(t, env)
			a.expectFault(f.says)
			if f.fix == nil {
				return
			}
			f.fix(r, trusted)
			took := a.waitFor(20*time.Second, "ready after the fix", func() string {
				if r := a.get("/readyz"); r.Status != http.StatusOK {
					return string(r.Body)
				}
				return a.serves()
			})
			t.Logf("ready and serving %v after the fix, without a restart", took.Round(time.Millisecond))
			if got := a.get("/v1/inventory"); !strings.Contains(string(got.Body), `"petId":12`) {
				t.Errorf("after the fix the list is %s, want the demo inventory", got.Body)
			}
			if errs := a.errorLines(); len(errs) != 1 {
				t.Errorf("%d ERROR lines at the end, want 1:\n%s", len(errs), strings.Join(errs, "\n"))
			}
			a.waitFor(5*time.Second, "the end of the fault logged once", func() string {
				if n := strings.Count(a.Logs.String(), "configuration fault cleared"); n != 1 {
					return fmt.Sprintf("logged %d times", n)
				}
				return ""
			})
		})
	}
}

// seedAsAdmin seeds the store with the demo inventory as the admin user
// (another deployment did it).
func seedAsAdmin(t *testing.T, r *managedRedis) {
	t.Helper()
	s, err := redisstore.New(r.admin, redisstore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if wrote, err := s.PutIfEmpty(ctx, server.DemoInventory()...); err != nil || !wrote {
		t.Fatalf("seeding as admin: %v, %v", wrote, err)
	}
}

// TestFaultsWhileServing: faults that appear after the app is ready.
// Each update is answered 503 (never 500), logged once with the fix, and
// serves again once fixed, without a restart.
func TestFaultsWhileServing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(r *managedRedis)
		says    []string
		fix     func(r *managedRedis)
	}{
		{"xadd revoked", func(r *managedRedis) { r.do("ACL", "SETUSER", "app", "-xadd") }, []string{"XADD", "+xadd"},
			func(r *managedRedis) { r.do("ACL", "SETUSER", "app", "+xadd") }},
		{"out of memory", func(r *managedRedis) { r.do("CONFIG", "SET", "maxmemory", "1") }, []string{"maxmemory"},
			func(r *managedRedis) { r.do("CONFIG", "SET", "maxmemory", "0") }},
		{"password changed, connections closed", func(r *managedRedis) {
			r.do("ACL", "SETUSER", "app", "resetpass", ">another-password")
			r.do("CLIENT", "KILL", "USER", "app")
		}, []string{"WRONGPASS"},
			func(r *managedRedis) { r.do("ACL", "SETUSER", "app", ">"+appPassword) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startManaged(t, nil, nil, nil)
			a := startApp(t, []string{"REDIS_URL=" + r.url(appPassword), "INVENTORY_REDIS_CA_FILE=" + r.files.CA})
			a.waitReadyz(http.StatusOK, 20*time.Second)
			a.waitFor(5*time.Second, "serving", a.serves)
			tc.breakIt(r)
			for i := range 50 {
				if got := a.patch(1+i%12, i); got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" || got.Code() != "unavailable" {
					t.Fatalf("PATCH #%d = %d %s, want 503 unavailable with Retry-After", i+1, got.Status, got.Body)
				}
			}
			errs := a.errorLines()
			if len(errs) != 1 {
				t.Fatalf("%d ERROR lines after 50 refused updates, want 1:\n%s", len(errs), strings.Join(errs, "\n"))
			}
			for _, w := range tc.says {
				if !strings.Contains(errs[0], w) {
					t.Errorf("the ERROR line does not say %q: %s", w, errs[0])
				}
			}
			if got := a.get("/readyz"); got.Status != http.StatusServiceUnavailable || !strings.Contains(string(got.Body), tc.says[0]) {
				t.Errorf("/readyz = %d %s, want 503 naming %s", got.Status, got.Body, tc.says[0])
			}
			tc.fix(r)
			a.waitFor(20*time.Second, "serving after the fix", a.serves)
			a.waitReadyz(http.StatusOK, 20*time.Second)
			if errs := a.errorLines(); len(errs) != 1 {
				t.Errorf("%d ERROR lines at the end, want 1:\n%s", len(errs), strings.Join(errs, "\n"))
			}
			a.waitFor(5*time.Second, "the end of the fault logged once", func() string {
				if n := strings.Count(a.Logs.String(), "configuration fault cleared"); n != 1 {
					return fmt.Sprintf("logged %d times", n)
				}
				return ""
			})
		})
	}
}

// TestEvictionAllowed: with -redis-allow-eviction, an allkeys-lru Redis
// is ready.
func TestEvictionAllowed(t *testing.T) {
	t.Parallel()
	r := startManaged(t, nil, nil, nil, "--maxmemory-policy", "allkeys-lru")
	a := startApp(t, []string{"REDIS_URL=" + r.url(appPassword), "INVENTORY_REDIS_CA_FILE=" + r.files.CA}, "-redis-allow-eviction")
	a.waitReadyz(http.StatusOK, 20*time.Second)
	a.waitFor(5*time.Second, "serving", a.serves)
}

// TestSettingsErrorsExit2: a misspelled URL parameter and a missing
// password file stop the server at once with exit status 2, the status
// of a bad flag, and a message that names the fix.
func TestSettingsErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		args []string
		says string
	}{
		{[]string{"REDIS_URL=redis://127.0.0.1:26379?master-name=shop"}, nil, "master_name"},
		{[]string{"REDIS_URL=rediss://127.0.0.1:6379/0", "INVENTORY_REDIS_PASSWORD_FILE=/nonexistent/pw"}, nil, "/nonexistent/pw"},
		{[]string{"REDIS_URL=rediss://127.0.0.1:6379/0", "INVENTORY_REDIS_CA_FILE=/nonexistent/ca.pem"}, nil, "/nonexistent/ca.pem"},
		{nil, []string{"-no-such-flag"}, "-no-such-flag"},
	} {
		cmd := exec.Command(serverBin, tc.args...)
		cmd.Env = append(cmd.Environ(), append([]string{"INVENTORY_API_KEYS=" + apiKey}, tc.env...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.says) {
			t.Errorf("%v %v: %v, want exit status 2 and a message naming %q:\n%s", tc.env, tc.args, err, tc.says, out)
		}
	}
}

// expectFault waits until /readyz answers 503 with a message holding
// every one of says and the log an ERROR line, then checks that a burst of
// 50 requests is all 503 unavailable with Retry-After, that /readyz keeps
// its answer, that the log holds exactly one ERROR line, holding says,
// and that the metric counts the fault.
func (a *app) expectFault(says []string) {
	a.t.Helper()
	body := a.waitReadyz(http.StatusServiceUnavailable, 20*time.Second)
	a.waitFor(20*time.Second, "the fault named in /readyz and in the log", func() string {
		body = string(a.get("/readyz").Body)
		var rd struct{ Status, Message string }
		if err := json.Unmarshal([]byte(body), &rd); err != nil || rd.Status != "unavailable" {
			return fmt.Sprintf("/readyz says %s (%v)", body, err)
		}
		for _, w := range says {
			if !strings.Contains(rd.Message, w) {
				return "/readyz says " + body
			}
		}
		if len(a.errorLines()) == 0 {
			return "no ERROR line yet"
		}
		return ""
	})
	a.burst(50)
	for range 5 {
		if r := a.get("/readyz"); r.Status != http.StatusServiceUnavailable || string(r.Body) != body {
			a.t.Fatalf("/readyz = %d %s, want 503 %s", r.Status, r.Body, body)
		}
	}
	errs := a.errorLines()
	if len(errs) != 1 {
		a.t.Fatalf("%d ERROR lines after a burst of 50 requests, want 1:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	for _, once := range []string{"not seeding", "initialized the store (-seed)", "adopted a store", "no seed (-seed)"} {
		if n := strings.Count(a.Logs.String(), once); n > 1 { // the seed is retried every 2 s while the fault lasts
			a.t.Errorf("%q logged %d times while the fault lasted, want once", once, n)
		}
	}
	if n := a.metric("inventory_store_config_faults_total"); n < 1 {
		a.t.Errorf("inventory_store_config_faults_total = %v during the fault, want at least 1", n)
	}
	for _, w := range says {
		if !strings.Contains(errs[0], w) {
			a.t.Errorf("the ERROR line does not say %q: %s", w, errs[0])
		}
	}
}
