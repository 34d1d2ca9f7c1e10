package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/inventory/storetest"
	"github.com/redis/go-redis/v9"
)

// faultStore opens a store on url (with the CA and client certificate of
// files when not nil), logging to a buffer, closed when the test ends.
func faultStore(t *testing.T, url string, files *redistest.TLSFiles, opts ...Option) (*Store, *syncBuffer) {
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
	c := cfg.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	var buf syncBuffer
	s, err := New(c, append([]Option{WithClientConfig(cfg), WithKeyPrefix(uniquePrefix(t)), WithLogger(slog.New(slog.NewTextHandler(&buf, nil)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, &buf
}

// wantFault checks that err holds a *ConfigFault (errors.As) of kind with
// option, and returns it.
func wantFault(t *testing.T, err error, kind, option string) *ConfigFault {
	t.Helper()
	f, ok := errors.AsType[*ConfigFault](err)
	if !ok {
		t.Fatalf("%v: holds no *ConfigFault", err)
	}
	if f.Kind != kind || f.Option != option || f.Err == nil || f.Op == "" || !strings.Contains(err.Error(), f.Fix) {
		t.Fatalf("ConfigFault{Kind: %q, Option: %q, Op: %q, Err: %v}; want kind %q, option %q, an Op and an Err, the Fix in %v",
			f.Kind, f.Option, f.Op, f.Err, kind, option, err)
	}
	return f
}

// loggedAttrs checks that the log's ERROR record carries the fault's
// attributes, for an application that names its own settings.
func loggedAttrs(t *testing.T, buf *syncBuffer, f *ConfigFault) {
	t.Helper()
	logs := buf.String()
	for _, attr := range []string{"fault=" + f.Kind, "option=" + quoteIfNeeded(f.Option), "file=" + quoteIfNeeded(f.File), "command=" + quoteIfNeeded(f.Command)} {
		if !strings.Contains(logs, attr) {
			t.Errorf("the log does not hold %s:\n%s", attr, logs)
		}
	}
}

// quoteIfNeeded is how slog's text handler writes a value.
func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsAny(v, " |=\"") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// burst runs every call of the store n times, each with a short deadline,
// and fails the test unless each fails unavailable and misconfigured (a
// 503, never a 500 or a not found) with an error that says want. It
// returns the last error.
func burst(t *testing.T, s *Store, n int, want string) (last error) {
	t.Helper()
	for range n {
		for name, call := range calls(s) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			err := call(ctx)
			cancel()
			if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) || errors.Is(err, inventory.ErrNotFound) {
				t.Fatalf("%s = %v; want unavailable and misconfigured", name, err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%s = %v; want it to say %q", name, err, want)
			}
			last = err
		}
	}
	return last
}

// loggedOnce checks that the log holds exactly one ERROR line, and that
// it says fix.
func loggedOnce(t *testing.T, buf *syncBuffer, fix string) {
	t.Helper()
	logs := buf.String()
	if n := strings.Count(logs, "level=ERROR"); n != 1 || !strings.Contains(logs, fix) {
		t.Errorf("%d ERROR lines, want 1 saying %q:\n%s", n, fix, logs)
	}
}

// TestConfigFaultsTLS: a client that does not trust the server's CA, that
// speaks plain text to a TLS port, or TLS to a plain port: each call is
// unavailable, the fault is logged once with the setting to change, and
// counted.
func TestConfigFaultsTLS(t *testing.T) {
	t.Parallel()
	files := redistest.NewTLSFiles(t)
	tlsNode := redistest.StartTLSNode(t, "tls", files)
	plain := redistest.StartNode(t, "plain")
	for _, tc := range []struct {
		name, url    string
		files        *redistest.TLSFiles
		fix          string
		kind, option string
	}{
		{"unknown CA", "rediss://" + tlsNode.Addr() + "/0", nil, "give the CA that signed it to Config.LoadTLSFiles", FaultTLSVerify, "Config.LoadTLSFiles"},
		{"plain to a TLS port", "redis://" + tlsNode.Addr() + "/0", nil, "use a rediss:// URL", FaultPlainToTLSPort, "URL"},
		{"TLS to a plain port", "rediss://" + plain.Addr() + "/0?dial_timeout=200ms&read_timeout=200ms&max_retries=-1", files, "use a redis:// URL without Config.LoadTLSFiles", FaultTLSToPlainPort, "URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits on its own time-outs
			s, buf := faultStore(t, tc.url, tc.files)
			f := wantFault(t, burst(t, s, 2, tc.fix), tc.kind, tc.option)
			loggedOnce(t, buf, tc.fix)
			loggedAttrs(t, buf, f)
			if got := s.Stats().ConfigFaults; got != uint64(2*len(calls(s))) {
				t.Errorf("Stats().ConfigFaults = %d, want %d", got, 2*len(calls(s)))
			}
		})
	}
}

// TestConfigFaultsCredentials: a wrong password and none at all, on a
// server whose default user is off: unavailable, logged once; once the
// server takes the password, the same store serves and logs that the
// fault cleared.
func TestConfigFaultsCredentials(t *testing.T) {
	t.Parallel()
	n := redistest.StartNode(t, "acl")
	if _, err := n.DoString("ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	s, buf := faultStore(t, "redis://app:wrong@"+n.Addr()+"/0", nil)
	f := wantFault(t, burst(t, s, 3, "WRONGPASS"), faultCredentials, "URL")
	loggedOnce(t, buf, "check the user and password of the URL")
	loggedAttrs(t, buf, f)

	// The operator gives the user the password the store has.
	if _, err := n.DoString("ACL", "SETUSER", "app", ">wrong"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(t.Context()); err != nil {
		t.Fatalf("Ready after the password was set right: %v", err)
	}
	if err := s.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	if logs := buf.String(); strings.Count(logs, "configuration fault cleared") != 1 || !strings.Contains(logs, "level=INFO") {
		t.Errorf("want one INFO line saying the fault cleared:\n%s", logs)
	}
	clearAfter(t, s)

	// No password, default user off: NOAUTH.
	if _, err := n.DoString("ACL", "SETUSER", "default", "off"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = n.DoString("ACL", "SETUSER", "default", "on") })
	s2, buf2 := faultStore(t, "redis://"+n.Addr()+"/0", nil)
	burst(t, s2, 2, "NOAUTH")
	loggedOnce(t, buf2, "Redis refused the credentials")
}

// TestACLRule: a user with exactly ACLRule(prefix) passes the storetest
// suite and is ready; a user lacking any one of the store's commands is
// not ready, and the error and the log name that command and the rule
// that grants it; a user without the store's keys is told the key
// pattern.
func TestACLRule(t *testing.T) {
	t.Parallel()
	n := redistest.StartNode(t, "acl")
	// storeAs returns a store under prefix for a new user with rule.
	storeAs := func(t *testing.T, prefix, rule string) (*Store, *syncBuffer) {
		t.Helper()
		name := "u" + uniquePrefix(t)[len("test-inventory-"):]
		args := append([]string{"ACL", "SETUSER", name, "on", ">pw"}, strings.Fields(rule)...)
		if _, err := n.DoString(args...); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		s, buf := faultStore(t, "redis://"+name+":pw@"+n.Addr()+"/0", nil)
		s2, err := New(s.client, WithKeyPrefix(prefix), WithLogger(s.log))
		if err != nil {
			t.Fatal(err)
		}
		return s2, buf
	}
	t.Run("storetest", func(t *testing.T) {
		storetest.Run(t, storetest.Config{Writers: 8, Updates: 20, SnapshotPets: snapshotPets(), NewStore: func(t *testing.T) inventory.Store {
			prefix := uniquePrefix(t)
			s, _ := storeAs(t, prefix, ACLRule(prefix))
			if err := s.Ready(t.Context()); err != nil {
				t.Fatalf("Ready with ACLRule: %v", err)
			}
			clearAfter(t, s)
			return s
		}})
	})
	for _, cmd := range storeCommands {
		t.Run("without "+cmd, func(t *testing.T) {
			prefix := uniquePrefix(t)
			rule := strings.Replace(ACLRule(prefix), " +"+cmd, "", 1)
			s, buf := storeAs(t, prefix, rule)
			for range 3 {
				err := s.Ready(t.Context())
				if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) ||
					!strings.Contains(err.Error(), "may not run "+strings.ToUpper(cmd)) ||
					!strings.Contains(err.Error(), "ACL SETUSER <user> +"+cmd) {
					t.Fatalf("Ready = %v; want unavailable, misconfigured, naming %s and +%s", err, strings.ToUpper(cmd), cmd)
				}
				if f := wantFault(t, err, faultACL, ""); f.Command != cmd || f.File != "" {
					t.Fatalf("ConfigFault.Command = %q, File = %q; want %q, none", f.Command, f.File, cmd)
				}
				// A write that needs no such command succeeds, and says
				// nothing of what Ready found.
				_ = s.Put(t.Context(), inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold})
			}
			loggedOnce(t, buf, "+"+cmd)
		})
	}
	t.Run("other keys", func(t *testing.T) {
		prefix := uniquePrefix(t)
		s, buf := storeAs(t, prefix, ACLRule("someone-else"))
		err := s.Ready(t.Context())
		if !errors.Is(err, ErrMisconfigured) || !strings.Contains(err.Error(), "~{"+prefix+"}:*") {
			t.Fatalf("Ready = %v; want misconfigured, naming ~{%s}:*", err, prefix)
		}
		if f := wantFault(t, err, faultACL, ""); f.Command != "" {
			t.Fatalf("ConfigFault.Command = %q for the keys; want none", f.Command)
		}
		loggedOnce(t, buf, "~{"+prefix+"}:*")
		// The whole rule the fix offers is ACLRule itself.
		if !strings.Contains(buf.String(), "ACL SETUSER <user> "+ACLRule(prefix)) {
			t.Errorf("the fix does not offer ACLRule(%q) whole:\n%s", prefix, buf.String())
		}
	})
	if !slices.Contains(storeCommands, "xadd") || !strings.Contains(ACLRule("p"), "~{p}:* ") {
		t.Errorf("ACLRule(p) = %q", ACLRule("p"))
	}
}

// TestConfigFaultsMemory: a maxmemory-policy that can evict the store's
// keys makes the store not ready, unless WithEvictionAllowed; a store at
// maxmemory answers unavailable, naming maxmemory.
func TestConfigFaultsMemory(t *testing.T) {
	t.Parallel()
	n := redistest.StartNode(t, "memory", "--maxmemory-policy", "allkeys-lru")
	s, buf := faultStore(t, "redis://"+n.Addr()+"/0", nil)
	for range 5 {
		err := s.Ready(t.Context())
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) || !strings.Contains(err.Error(), "allkeys-lru") {
			t.Fatalf("Ready with allkeys-lru = %v; want unavailable and misconfigured, naming the policy", err)
		}
		wantFault(t, err, faultEviction, "WithEvictionAllowed")
	}
	loggedOnce(t, buf, "maxmemory-policy noeviction")
	// A write succeeding does not clear it: only Ready looks at the policy.
	if err := s.Put(t.Context(), inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); err != nil {
		t.Fatal(err)
	}
	clearAfter(t, s)
	if err := s.Ready(t.Context()); !errors.Is(err, ErrMisconfigured) || strings.Count(buf.String(), "level=ERROR") != 1 {
		t.Fatalf("Ready after a write = %v; want still misconfigured, still logged once:\n%s", err, buf.String())
	}
	allowed, _ := faultStore(t, "redis://"+n.Addr()+"/0", nil, WithEvictionAllowed())
	if err := allowed.Ready(t.Context()); err != nil {
		t.Errorf("Ready WithEvictionAllowed = %v", err)
	}
	for _, policy := range []string{"volatile-lru", "noeviction"} {
		if _, err := n.DoString("CONFIG", "SET", "maxmemory-policy", policy); err != nil {
			t.Fatal(err)
		}
		if err := s.Ready(t.Context()); err != nil {
			t.Errorf("Ready with %s = %v", policy, err)
		}
	}
	if strings.Count(buf.String(), "configuration fault cleared") != 1 {
		t.Errorf("want one line saying the fault cleared:\n%s", buf.String())
	}

	// At maxmemory, with noeviction, writes are refused (OOM).
	if _, err := n.DoString("CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	err := s.Put(t.Context(), inventory.Item{PetID: 2, Quantity: 1, Status: inventory.StatusSold})
	if _, e2 := n.DoString("CONFIG", "SET", "maxmemory", "0"); e2 != nil {
		t.Fatal(e2)
	}
	if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, ErrMisconfigured) || !strings.Contains(err.Error(), "raise maxmemory") {
		t.Fatalf("Put at maxmemory = %v; want unavailable and misconfigured, naming maxmemory", err)
	}
	wantFault(t, err, faultOOM, "")
	if !strings.Contains(buf.String(), "fault=maxmemory") {
		t.Errorf("want the OOM logged:\n%s", buf.String())
	}
}

// TestACLRuleDocumented: the package doc shows the rule ACLRule returns.
func TestACLRuleDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := "ACL SETUSER app on >PASSWORD " + ACLRule(DefaultKeyPrefix) + "\n"; !strings.Contains(string(doc), want) {
		t.Errorf("doc.go does not show %q", want)
	}
}

// TestACLRuleInSecurityDoc: docs/SECURITY.md prints the one rule
// ACLRule("inventory") returns, and no other.
func TestACLRuleInSecurityDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/SECURITY.md")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("docs/SECURITY.md is not beside this module (a module zip): nothing to compare")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := "ACL SETUSER inventory on >PASSWORD " + ACLRule("inventory")
	var rules []string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "ACL SETUSER ") {
			rules = append(rules, strings.TrimSpace(line))
		}
	}
	if len(rules) != 1 || rules[0] != want {
		t.Errorf("docs/SECURITY.md prints the rules %q; want the one line\n%s", rules, want)
	}
}

// TestCredentialsFixSentinel: in the Sentinel form the fix says whose
// credentials were refused: the sentinels' (the URL's user information)
// when go-redis reports that no sentinel answered, the master's (the
// username= and password= parameters) otherwise.
func TestCredentialsFixSentinel(t *testing.T) {
	m, _ := miniClient(t)
	m.RequireAuth("right")
	cfg, err := ParseURL("redis://:wrong@" + m.Addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	defer c.Close()
	wrongpass := c.Ping(t.Context()).Err()
	if wrongpass == nil {
		t.Fatal("PING with a wrong password succeeded")
	}
	s, err := New(c, WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	s.info.masterName, s.info.failover = "shop", true
	for _, tc := range []struct {
		err  error
		says string
	}{
		{fmt.Errorf("redis: all sentinels specified in configuration are unreachable: %w", errors.Join(wrongpass)), "a sentinel refused the credentials"},
		{wrongpass, "the master refused the credentials (WRONGPASS or NOAUTH): in the Sentinel form the master's user and password are the URL's username= and password= parameters"},
	} {
		f := s.classify(tc.err)
		if f == nil || f.Kind != faultCredentials || f.Option != "URL" || !strings.Contains(f.Fix, tc.says) {
			t.Errorf("classify(%v) = %+v; want %s, option URL, saying %q", tc.err, f, faultCredentials, tc.says)
		}
	}
}

// replyErr is an error reply of Redis, as go-redis returns it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// TestClassifyKinds: every kind of configuration fault, from the error
// that shows it, with the Option that fixes it and the Command or File it
// names; errors that are no configuration fault are not classified.
func TestClassifyKinds(t *testing.T) {
	_, c := miniClient(t)
	single, err := New(c, WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	withFile, err := New(c, WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	withFile.info.passwordFile = "/run/secrets/pw"
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	cluster, err := New(cc, WithLogger(discardLog))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                        string
		s                           *Store
		err                         error
		kind, option, command, file string
	}{
		{"eviction", single, &evictionFault{policy: "allkeys-lru"}, faultEviction, "WithEvictionAllowed", "", ""},
		{"password file", single, &passwordFileError{path: "/pw"}, faultPassword, "Config.UsePasswordFile", "", "/pw"},
		{"master name", single, fmt.Errorf("redis: all sentinels specified in configuration are unreachable: %w", redis.Nil), faultMasterName, "URL", "", ""},
		{"unknown CA", single, fmt.Errorf("dial: %w", x509.UnknownAuthorityError{}), FaultTLSVerify, "Config.LoadTLSFiles", "", ""},
		{"client certificate", single, errors.New("remote error: tls: certificate required"), FaultTLSClientCertificate, "Config.LoadTLSFiles", "", ""},
		{"TLS to plain", single, tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, FaultTLSToPlainPort, "URL", "", ""},
		{"wrong password", single, replyErr("WRONGPASS invalid username-password pair"), faultCredentials, "URL", "", ""},
		{"wrong password in a file", withFile, replyErr("WRONGPASS invalid username-password pair"), faultCredentials, "Config.UsePasswordFile", "", "/run/secrets/pw"},
		{"no password", single, replyErr("NOAUTH Authentication required."), faultCredentials, "URL", "", ""},
		{"ACL command", cluster, replyErr("NOPERM this user has no permissions to run the 'cluster|slots' command"), faultACL, "", "cluster|slots", ""},
		{"ACL keys", single, replyErr("NOPERM No permissions to access a key"), faultACL, "", "", ""},
		{"OOM", single, replyErr("OOM command not allowed when used memory > 'maxmemory'."), faultOOM, "", "", ""},
		{"OOM in EXEC", single, replyErr("EXECABORT Transaction discarded because of: OOM command not allowed"), faultOOM, "", "", ""},
		{"MOVED on one node", single, replyErr("MOVED 866 127.0.0.1:7001"), faultClusterNode, "URL", "", ""},
		{"MOVED on a Cluster", cluster, replyErr("MOVED 866 127.0.0.1:7001"), "", "", "", ""},
		{"not a Cluster", cluster, replyErr("ERR This instance has cluster support disabled"), faultNotCluster, "URL", "", ""},
		{"cluster disabled on one node", single, replyErr("ERR This instance has cluster support disabled"), "", "", "", ""},
		{"sentinel port", single, replyErr("ERR unknown command 'watch', with args beginning with: "), faultSentinel, "URL", "", ""},
		{"no entry", single, redis.Nil, "", "", "", ""},
		{"READONLY", single, replyErr("READONLY You can't write against a read only replica."), "", "", "", ""},
	} {
		f := tc.s.classify(tc.err)
		if tc.kind == "" {
			if f != nil {
				t.Errorf("%s: classify = %+v, want no configuration fault", tc.name, f)
			}
			continue
		}
		if f == nil || f.Kind != tc.kind || f.Option != tc.option || f.Command != tc.command || f.File != tc.file || f.Fix == "" || f.Err != tc.err {
			t.Errorf("%s: classify = %+v; want Kind %q, Option %q, Command %q, File %q, a Fix, Err the error", tc.name, f, tc.kind, tc.option, tc.command, tc.file)
			continue
		}
		// The fix names the Go API, never a setting of an application.
		if strings.Contains(f.Fix, "INVENTORY_") || strings.Contains(f.Fix, "REDIS_URL") {
			t.Errorf("%s: the fix names an application's setting: %s", tc.name, f.Fix)
		}
		if f.Option != "" && f.Option != "URL" && !strings.Contains(f.Fix, f.Option) {
			t.Errorf("%s: the fix does not name %s: %s", tc.name, f.Option, f.Fix)
		}
	}
}
