package testcerts

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// TestHandshake: a TLS server with the server certificate that requires
// a client certificate signed by the CA accepts ClientConfig's client
// (by 127.0.0.1 and by localhost), and refuses one without the client
// certificate; a client that does not trust the CA refuses the server.
func TestHandshake(t *testing.T) {
	f := Write(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); c.Write([]byte("ok")) }()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	read := func(addr string, conf *tls.Config) error {
		c, err := tls.Dial("tcp", addr, conf)
		if err != nil {
			return err
		}
		defer c.Close()
		got, err := io.ReadAll(c)
		if err == nil && string(got) != "ok" {
			err = fmt.Errorf("read %q, want ok", got)
		}
		return err
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if err := read(net.JoinHostPort(host, port), f.ClientConfig(t)); err != nil {
			t.Errorf("%s with the client certificate: %v", host, err)
		}
	}
	noCert := f.ClientConfig(t)
	noCert.Certificates = nil
	if err := read(ln.Addr().String(), noCert); err == nil {
		t.Error("a client without a certificate was accepted")
	}
	other := Write(t, t.TempDir())
	if err := read(ln.Addr().String(), other.ClientConfig(t)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client trusting another CA: %v, want a certificate error", err)
	}
}

func TestServerArgs(t *testing.T) {
	f := Write(t, t.TempDir())
	got := strings.Join(f.ServerArgs(), " ")
	for _, want := range []string{"--tls-cert-file " + f.ServerCert, "--tls-key-file " + f.ServerKey, "--tls-ca-cert-file " + f.CA, "--tls-auth-clients optional"} {
		if !strings.Contains(got, want) {
			t.Errorf("ServerArgs %q lacks %q", got, want)
		}
	}
}
