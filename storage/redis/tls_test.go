package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// tlsStore opens a store on a client that ParseURL(url) and
// LoadTLSFiles(ca, cert, key) build, closed when the test ends.
func tlsStore(t *testing.T, url, ca, cert, key string, opts ...Option) *Store {
	t.Helper()
	cfg, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadTLSFiles(ca, cert, key); err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(c, append([]Option{WithKeyPrefix(uniquePrefix(t)), WithLogger(discardLog)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrip writes one entry and reads it back.
func roundTrip(ctx context.Context, s *Store) error {
	if err := s.Put(ctx, inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable}); err != nil {
		return err
	}
	_, err := s.SetQuantity(ctx, 1, 4)
	return err
}

// TestLoadTLSFilesMutual: a TLS-only redis-server that requires a client
// certificate signed by a private CA serves a store whose configuration
// LoadTLSFiles completed; without the CA the server is not trusted, and
// without the client certificate the server refuses the client.
func TestLoadTLSFilesMutual(t *testing.T) {
	files := redistest.NewTLSFiles(t)
	n := redistest.StartTLSNode(t, "tls", files, "--tls-auth-clients", "yes")
	url := "rediss://" + n.Addr() + "/0"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	s := tlsStore(t, url, files.CA, files.ClientCert, files.ClientKey)
	if err := roundTrip(ctx, s); err != nil {
		t.Fatalf("with the CA and the client certificate: %v", err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready with the CA and the client certificate: %v", err)
	}

	// redis:// with the files: LoadTLSFiles turns TLS on.
	if err := roundTrip(ctx, tlsStore(t, "redis://"+n.Addr()+"/0", files.CA, files.ClientCert, files.ClientKey)); err != nil {
		t.Errorf("redis:// with LoadTLSFiles: %v", err)
	}

	if err := roundTrip(ctx, tlsStore(t, url, "", files.ClientCert, files.ClientKey)); err == nil ||
		!strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate verification error", err)
	}
	// Without the client certificate, on a server that requires one: a
	// configuration fault that names the settings to give, not an outage.
	noCert := tlsStore(t, url, files.CA, "", "")
	err := roundTrip(ctx, noCert)
	if !errors.Is(err, ErrMisconfigured) || !strings.Contains(err.Error(), "give the certificate and its key to Config.LoadTLSFiles") {
		t.Errorf("write without the client certificate: %v, want ErrMisconfigured naming Config.LoadTLSFiles", err)
	}
	wantFault(t, err, FaultTLSClientCertificate, "Config.LoadTLSFiles")
	if err := noCert.Ready(ctx); !errors.Is(err, ErrMisconfigured) || !strings.Contains(err.Error(), "client certificate") {
		t.Errorf("Ready without the client certificate: %v, want ErrMisconfigured saying a client certificate is needed", err)
	}
}

func TestLoadTLSFilesErrors(t *testing.T) {
	files := redistest.NewTLSFiles(t)
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.crt")
	for _, tc := range []struct {
		name          string
		ca, cert, key string
		says          string
	}{
		{"missing CA", missing, "", "", missing},
		{"CA not PEM", notPEM, "", "", notPEM},
		{"cert without key", files.CA, files.ClientCert, "", "both"},
		{"key without cert", "", "", files.ClientKey, "both"},
		{"missing cert", "", missing, files.ClientKey, missing},
		{"key of another cert", "", files.ClientCert, files.ServerKey, files.ClientCert},
	} {
		cfg, err := ParseURL("rediss://127.0.0.1:6380/0")
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.LoadTLSFiles(tc.ca, tc.cert, tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: LoadTLSFiles = %v, want an error naming %q", tc.name, err, tc.says)
		}
	}

	// Nothing given changes nothing; the files reach every topology,
	// sentinels included, with the URL's host as the name to verify.
	cfg, _ := ParseURL("redis://127.0.0.1:6379/0")
	if err := cfg.LoadTLSFiles("", "", ""); err != nil || cfg.Single.TLSConfig != nil {
		t.Errorf("LoadTLSFiles of nothing = %v, TLS %v; want nil and no TLS", err, cfg.Single.TLSConfig)
	}
	for _, url := range []string{"rediss://r.example:6380/0", "redis://r.example:7000?addr=b:7001", "redis://r.example:26379?master_name=m"} {
		cfg, err := ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.LoadTLSFiles(files.CA, files.ClientCert, files.ClientKey); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		conf := cfg.Single
		switch cfg.Topology {
		case Cluster:
			if c := cfg.Cluster.TLSConfig; c == nil || c.RootCAs == nil || len(c.Certificates) != 1 || c.ServerName != "r.example" {
				t.Errorf("%s: TLS %+v", url, c)
			}
			continue
		case Failover:
			if c := cfg.Failover.TLSConfig; c == nil || c.RootCAs == nil || len(c.Certificates) != 1 || c.ServerName != "r.example" {
				t.Errorf("%s: TLS %+v", url, c)
			}
			continue
		}
		if c := conf.TLSConfig; c == nil || c.RootCAs == nil || len(c.Certificates) != 1 || c.ServerName != "r.example" {
			t.Errorf("%s: TLS %+v", url, c)
		}
	}
}

// passwordFileClient starts a TLS redis-server with an ACL user "app"
// whose password is password, and returns it, the password file (holding
// password) and a client that reads the file for every new connection,
// and the option that tells New its Config.
func passwordFileClient(t *testing.T, password string) (*redistest.Node, string, redis.UniversalClient, Option) {
	t.Helper()
	files := redistest.NewTLSFiles(t)
	n := redistest.StartTLSNode(t, "acl", files)
	if _, err := n.DoString("ACL", "SETUSER", "app", "on", ">"+password, "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseURL("rediss://app@" + n.Addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadTLSFiles(files.CA, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := cfg.UsePasswordFile(pwFile); err != nil {
		t.Fatal(err)
	}
	c := cfg.NewClient()
	t.Cleanup(func() { _ = c.Close() })
	return n, pwFile, c, WithClientConfig(cfg)
}

// TestUsePasswordFileRotation: an ACL user's password read from a file,
// rotated on the server and in the file, with the old connections
// killed: the same Store writes again once its connections reconnect.
func TestUsePasswordFileRotation(t *testing.T) {
	n, pwFile, c, withConfig := passwordFileClient(t, "first")
	s := newTestStore(t, c, WithLogger(discardLog), withConfig)
	var err error
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := roundTrip(ctx, s); err != nil {
		t.Fatalf("with the first password: %v", err)
	}

	// Rotate: the server learns the new password, the file gets it, the
	// server forgets the old one and drops the user's connections.
	if _, err := n.DoString("ACL", "SETUSER", "app", ">second"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwFile, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := n.DoString("ACL", "SETUSER", "app", "<first"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Do("CLIENT", "KILL", "USER", "app"); err != nil {
		t.Fatal(err)
	}
	err = redistest.Poll(10*time.Second, func() error {
		_, err := s.SetQuantity(ctx, 1, 5)
		return err
	})
	if err != nil {
		t.Fatalf("after the rotation: %v", err)
	}
	if who, err := n.DoString("CLIENT", "LIST"); err != nil || !strings.Contains(who, "user=app") {
		t.Errorf("CLIENT LIST = %v, %v; want the store's new connections", who, err)
	}

	// A wrong password in the file fails new connections.
	if err := os.WriteFile(pwFile, []byte("third"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Do("CLIENT", "KILL", "USER", "app"); err != nil {
		t.Fatal(err)
	}
	var wrong error
	err = redistest.Poll(10*time.Second, func() error {
		if _, wrong = s.SetQuantity(ctx, 1, 6); wrong == nil || !strings.Contains(wrong.Error(), "WRONGPASS") {
			return fmt.Errorf("with a wrong password in the file: %v, want WRONGPASS", wrong)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	} else if f := wantFault(t, wrong, faultCredentials, "Config.UsePasswordFile"); f.File != pwFile || !strings.Contains(f.Fix, pwFile) {
		// WithClientConfig told the store the file: the fix names it.
		t.Errorf("credentials fault with a password file: File %q, Fix %q; want the file %s named", f.File, f.Fix, pwFile)
	}
	if err := os.WriteFile(pwFile, []byte("second"), 0o600); err != nil { // for the cleanup
		t.Fatal(err)
	}
}

func TestUsePasswordFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing"), empty} {
		cfg, _ := ParseURL("redis://127.0.0.1:6379/0")
		if err := cfg.UsePasswordFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("UsePasswordFile(%s) = %v, want an error naming the file", path, err)
		}
	}
	ok := filepath.Join(dir, "pw")
	if err := os.WriteFile(ok, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"redis://u:old@h:1/0", "redis://u:old@h:1?addr=h:2", "redis://su:spw@h:1?master_name=m&username=u&password=old"} {
		cfg, err := ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.UsePasswordFile(ok); err != nil {
			t.Fatal(err)
		}
		var user, pw string
		switch cfg.Topology {
		case Single:
			user, pw, err = cfg.Single.CredentialsProviderContext(t.Context())
		case Cluster:
			user, pw, err = cfg.Cluster.CredentialsProviderContext(t.Context())
		case Failover:
			user, pw, err = cfg.Failover.CredentialsProviderContext(t.Context())
			if cfg.Failover.SentinelPassword != "spw" || cfg.Failover.SentinelUsername != "su" {
				t.Errorf("%s: the sentinels' credentials changed: %q %q", url, cfg.Failover.SentinelUsername, cfg.Failover.SentinelPassword)
			}
		}
		if err != nil || user != "u" || pw != "s3cret" {
			t.Errorf("%s: credentials %q %q %v; want u s3cret", url, user, pw, err)
		}
	}
}

// TestPasswordFileFault: a password file that a rotation leaves missing or
// empty while the store serves is a configuration fault (503, logged once
// with the file named), not a 500 or an outage, and clears when the file
// holds the password again.
func TestPasswordFileFault(t *testing.T) {
	n, pwFile, c, _ := passwordFileClient(t, "pw1")
	var buf syncBuffer
	s := newTestStore(t, c, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := roundTrip(ctx, s); err != nil {
		t.Fatalf("with the password file: %v", err)
	}
	for _, tc := range []struct {
		name      string
		breakFile func() error
		says      string
	}{
		{"emptied", func() error { return os.WriteFile(pwFile, nil, 0o600) }, "it is empty"},
		{"removed", func() error { return os.Remove(pwFile) }, "no such file"},
	} {
		buf.Reset()
		if err := tc.breakFile(); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Do("CLIENT", "KILL", "USER", "app"); err != nil {
			t.Fatal(err)
		}
		// A call may first meet a killed pooled connection (an outage);
		// once those are gone, every call dials and fails on the file.
		if err := redistest.Poll(10*time.Second, func() error {
			for name, call := range calls(s) {
				if err := call(ctx); !errors.Is(err, ErrMisconfigured) {
					return fmt.Errorf("%s = %v; want misconfigured", name, err)
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := wantFault(t, burst(t, s, 5, "password file "+pwFile), faultPassword, "Config.UsePasswordFile")
		if f.File != pwFile {
			t.Errorf("ConfigFault.File = %q, want %q", f.File, pwFile)
		}
		loggedOnce(t, &buf, tc.says)
		loggedAttrs(t, &buf, f)
		if !strings.Contains(buf.String(), "fault=password-file") {
			t.Errorf("%s: the log does not name the fault password-file:\n%s", tc.name, buf.String())
		}
		if err := os.WriteFile(pwFile, []byte("pw1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := redistest.Poll(10*time.Second, func() error {
			if err := s.Ready(ctx); err != nil {
				return err
			}
			return roundTrip(ctx, s)
		}); err != nil {
			t.Fatalf("%s, then written again: %v", tc.name, err)
		}
		if !strings.Contains(buf.String(), "cleared") {
			t.Errorf("%s: no line says the fault cleared:\n%s", tc.name, buf.String())
		}
	}
}
