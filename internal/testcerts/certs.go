package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Files are the PEM files of a private certificate authority made for
// one test: the CA, a server certificate it signed for 127.0.0.1 and
// localhost, and a client certificate it signed, each key beside its
// certificate.
type Files struct {
	CA         string // the CA's certificate
	ServerCert string
	ServerKey  string
	ClientCert string
	ClientKey  string
}

// Write makes a CA, a server and a client certificate (ECDSA P-256, valid
// for a day) and writes them to dir. A failure ends the test.
func Write(t testing.TB, dir string) *Files {
	t.Helper()
	f := &Files{
		CA:         filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey:  filepath.Join(dir, "client.key"),
	}
	caKey, caDER := certificate(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, f.CA, "CERTIFICATE", caDER)
	for _, c := range []struct {
		cert, key string
		tmpl      *x509.Certificate
	}{
		{f.ServerCert, f.ServerKey, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "127.0.0.1"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			DNSNames:    []string{"localhost"},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			// Redis uses the server certificate for its outgoing
			// connections too (replication, Cluster bus, sentinels).
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}},
		{f.ClientCert, f.ClientKey, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "test client"},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}},
	} {
		key, der := certificate(t, c.tmpl, ca, caKey)
		writePEM(t, c.cert, "CERTIFICATE", der)
		kb, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, c.key, "PRIVATE KEY", kb)
	}
	return f
}

// serial numbers the certificates; tests running in parallel make them.
var serial atomic.Int64

// certificate signs tmpl with parent's key (itself when parent is nil)
// and returns the new key and the certificate's DER.
func certificate(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(serial.Add(1))
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ClientConfig returns the TLS settings of a client that trusts the CA
// and presents the client certificate.
func (f *Files) ClientConfig(t testing.TB) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", f.CA)
	}
	cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// ServerArgs are redis-server's settings for TLS with these files:
// certificate, key and CA, with clients' certificates optional (say
// "--tls-auth-clients", "yes" after them to require one).
func (f *Files) ServerArgs() []string {
	return []string{"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey,
		"--tls-ca-cert-file", f.CA, "--tls-auth-clients", "optional"}
}
