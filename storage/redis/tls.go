package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// LoadTLSFiles sets the TLS settings of the configuration from PEM files,
// for a Redis that a private or provider CA certifies, or that asks for a
// client certificate (mutual TLS). caFile, when not empty, holds the CA
// certificates trusted for the servers' certificates, instead of the
// system's; certFile and keyFile, both given or both empty, are the
// client certificate and its key. The settings apply to whichever of
// Single, Cluster and Failover is set (in the Sentinel form, to the
// sentinels and to the master and replicas alike), and turn TLS on if the
// URL said redis://; the server name to verify stays the one ParseURL
// took from the URL's host. The error names the file at fault. All three
// empty changes nothing.
func (c *Config) LoadTLSFiles(caFile, certFile, keyFile string) error {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil
	}
	if (certFile == "") != (keyFile == "") {
		return errors.New("redisstore: LoadTLSFiles: a client certificate needs both its certificate file and its key file; one of them is empty")
	}
	var pool *x509.CertPool
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("redisstore: LoadTLSFiles: CA file: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("redisstore: LoadTLSFiles: CA file %s holds no PEM certificate", caFile)
		}
	}
	var certs []tls.Certificate
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("redisstore: LoadTLSFiles: client certificate %s with key %s: %w", certFile, keyFile, err)
		}
		certs = []tls.Certificate{cert}
	}
	set := func(p **tls.Config, host string) {
		if *p == nil {
			*p = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if pool != nil {
			(*p).RootCAs = pool
		}
		if certs != nil {
			(*p).Certificates = certs
		}
	}
	switch c.Topology {
	case Cluster:
		set(&c.Cluster.TLSConfig, hostOf(first(c.Cluster.Addrs)))
	case Failover:
		set(&c.Failover.TLSConfig, hostOf(first(c.Failover.SentinelAddrs)))
	default:
		set(&c.Single.TLSConfig, hostOf(c.Single.Addr))
	}
	return nil
}

func first(addrs []string) string {
	if len(addrs) == 0 {
		return ""
	}
	return addrs[0]
}

// hostOf returns the host of a host:port address.
func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

// UsePasswordFile makes every new connection authenticate with the
// password held in the file at path, read again for each connection (one
// trailing newline trimmed), with the user name of the URL (or none, for
// Redis's default user). So a rotated password, written to the file, is
// used as soon as the connections opened with the old one are closed
// (for example by CLIENT KILL USER, or when Redis drops them after an
// ACL change), without a new client. The file must be readable now: the
// error names it. In the Sentinel form it is the master's (and
// replicas') password, the one the password= parameter would give; the
// sentinels' stays the URL's user information. It replaces any password
// the URL gives for the same connections.
func (c *Config) UsePasswordFile(path string) error {
	if _, err := readPassword(path); err != nil {
		return err
	}
	var user *string
	switch c.Topology {
	case Cluster:
		c.Cluster.Password, user = "", &c.Cluster.Username
		c.Cluster.CredentialsProviderContext = passwordFile(path, user)
	case Failover:
		c.Failover.Password, user = "", &c.Failover.Username
		c.Failover.CredentialsProviderContext = passwordFile(path, user)
	default:
		c.Single.Password, user = "", &c.Single.Username
		c.Single.CredentialsProviderContext = passwordFile(path, user)
	}
	c.passwordFile = path
	return nil
}

// passwordFile is a go-redis credentials provider that reads the password
// from path and the user name from *user when a connection is opened.
func passwordFile(path string, user *string) func(context.Context) (string, string, error) {
	return func(context.Context) (string, string, error) {
		pw, err := readPassword(path)
		return *user, pw, err
	}
}

// passwordFileError is a password file that cannot be used: read at
// start (UsePasswordFile) or for a new connection, when a rotation left it
// missing or empty. It is a configuration fault (see Store.classify).
type passwordFileError struct {
	path string
	err  error // nil: the file is empty
}

func (e *passwordFileError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("redisstore: password file %s is empty", e.path)
	}
	return fmt.Sprintf("redisstore: password file: %v", e.err)
}

func (e *passwordFileError) Unwrap() error { return e.err }

// reason says what is wrong with the file, without its path.
func (e *passwordFileError) reason() string {
	if e.err == nil {
		return "it is empty"
	}
	if pe, ok := errors.AsType[*fs.PathError](e.err); ok {
		return pe.Err.Error()
	}
	return e.err.Error()
}

// readPassword reads a password file, trimming one trailing newline
// ("\n" or "\r\n").
func readPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &passwordFileError{path: path, err: err}
	}
	s := string(b)
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	if s == "" {
		return "", &passwordFileError{path: path}
	}
	return s, nil
}
