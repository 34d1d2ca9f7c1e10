package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// translate is the one place where errors from go-redis become the
// library's. op names the Store method for the message.
//
//   - redis.Nil (no such field) → inventory.ErrNotFound;
//   - an error of package inventory (ErrNotFound) or of this package's
//     corrupt → unchanged;
//   - Redis cannot be reached or answered too late, or refuses work for
//     now (see unavailable) → an *inventory.Error with code unavailable
//     wrapping the cause, which the API answers 503 with Retry-After;
//   - anything else → a plain error wrapping the cause, which the API
//     answers 500 and logs.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if isNil(err) {
		return inventory.ErrNotFound
	}
	var ie *inventory.Error
	if errors.As(err, &ie) || errors.Is(err, errCorrupt) {
		return err
	}
	if unavailable(err) {
		return inventory.Unavailable(fmt.Errorf("redis %s: Redis cannot be reached, timed out, or refuses work for now: %w", op, err))
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

// errRedirected: a Cluster kept redirecting a transaction (MOVED or ASK)
// past the client's max_redirects: a slot moving, or a failover under
// way. See Store.watch.
var errRedirected = errors.New("redis: the Cluster redirected the transaction (MOVED or ASK) more times than max_redirects allows; its slot is moving or failing over")

// isNil reports whether err is Redis's nil reply itself (a missing key
// or field), as a command returns it. A wrapped one is something else:
// go-redis's Sentinel client wraps the nil reply of a sentinel that knows
// no master of the configured name, and that is no missing entry.
func isNil(err error) bool {
	return err == redis.Nil
}

// ErrMisconfigured matches (errors.Is) the errors of a store whose
// configuration, or the server's, keeps it from serving: a fault that
// retrying does not fix and an operator must (see the package doc,
// Configuration faults). Such an error also matches
// inventory.ErrUnavailable: the API answers 503 with Retry-After, and
// Ready fails with it. The store logs each fault once at Error with its
// fix, counts it in Stats.ConfigFaults while it persists, and logs at Info
// when it clears.
var ErrMisconfigured = errors.New("redisstore: misconfigured")

// The kinds of configuration fault, as the store's log lines name them
// (attribute "fault").
const (
	faultTLSVerify   = "tls-verify"
	faultClientCert  = "tls-client-certificate"
	faultTLSToPlain  = "tls-to-plain-port"
	faultPlainToTLS  = "plain-to-tls-port"
	faultCredentials = "credentials"
	faultACL         = "acl"
	faultMasterName  = "master-name"
	faultClusterNode = "cluster-node-as-single"
	faultNotCluster  = "not-a-cluster"
	faultSentinel    = "sentinel-port"
	faultEviction    = "eviction-policy"
	faultOOM         = "maxmemory"
	faultPassword    = "password-file"
)

// classify returns the kind of configuration fault err shows and its fix,
// or "" when err is not one. It is the one place that tells configuration
// faults from other errors.
func (s *Store) classify(err error) (kind, fix string) {
	if ef, ok := errors.AsType[*evictionFault](err); ok {
		return faultEviction, ef.fix()
	}
	if pf, ok := errors.AsType[*passwordFileError](err); ok {
		return faultPassword, fmt.Sprintf("the password file %s (INVENTORY_REDIS_PASSWORD_FILE, Config.UsePasswordFile) cannot be used for a new connection: %s; "+
			"write the password into it (when rotating, replace the file whole, with a rename)", pf.path, pf.reason())
	}
	sentinels := strings.Contains(err.Error(), "all sentinels specified in configuration are unreachable")
	if sentinels && errors.Is(err, redis.Nil) {
		name := "of the name FailoverOptions.MasterName gives"
		if s.info.masterName != "" { // known when Config.NewClient built the client
			name = fmt.Sprintf("named %q", s.info.masterName)
		}
		return faultMasterName, "the sentinels know no master " + name + " (REDIS_URL's master_name=); check it against SENTINEL MASTERS on a sentinel"
	}
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	if errors.As(err, &cve) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) {
		return faultTLSVerify, "TLS: the client does not trust the Redis server's certificate; give the CA that signed it with INVENTORY_REDIS_CA_FILE (Config.LoadTLSFiles), and check that REDIS_URL's host is a name the certificate holds"
	}
	if clientCertRefused(err) {
		return faultClientCert, "TLS: the Redis server asks for a client certificate (mutual TLS, tls-auth-clients) and got none, or none it trusts; give the certificate and its key with INVENTORY_REDIS_CERT_FILE and INVENTORY_REDIS_KEY_FILE (Config.LoadTLSFiles), signed by a CA the server trusts (its tls-ca-cert-file)"
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return faultTLSToPlain, tlsToPlainFix("the server")
	}
	if fix := s.portSpeaksOther(err); fix != "" {
		kind := faultPlainToTLS
		if s.info.tls {
			kind = faultTLSToPlain
		}
		return kind, fix
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return "", ""
	}
	msg := re.Error()
	if _, cause, ok := strings.Cut(msg, "Transaction discarded because of: "); ok {
		msg = cause // EXECABORT: the reply that discarded it says why
	}
	cluster := s.cluster != nil
	switch {
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"),
		strings.HasPrefix(msg, "ERR AUTH"), strings.Contains(msg, "without any password configured"):
		return faultCredentials, s.credentialsFix(sentinels)
	case strings.HasPrefix(msg, "NOPERM"):
		return faultACL, s.aclFix(msg)
	case strings.HasPrefix(msg, "OOM "):
		return faultOOM, "Redis refuses writes: its memory is at maxmemory (OOM command not allowed); raise maxmemory or free memory on the server (the store's keys must never be evicted: keep maxmemory-policy noeviction or volatile-*)"
	case !cluster && (strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")):
		return faultClusterNode, "the server is a Redis Cluster node that does not own the store's keys, reached as a single node; name the Cluster instead: REDIS_URL=redis://host:port?cluster=true (or ?addr=host2:port2&addr=… for more seeds), or pass a redis.ClusterClient to New"
	case cluster && strings.Contains(msg, "cluster support disabled"):
		return faultNotCluster, "the server is not a Cluster node (cluster support disabled) but REDIS_URL names a Cluster; drop cluster=true and addr= to name one node, or use master_name= for Sentinel"
	case strings.HasPrefix(msg, "ERR unknown command"):
		return faultSentinel, "the server does not know a command the store needs (WATCH, MULTI, EXEC): it is probably a Redis Sentinel's port; name the master through the sentinels instead: REDIS_URL=redis://sentinel:port?master_name=NAME&addr=sentinel2:port, or pass a redis.NewFailoverClient to New"
	}
	return "", ""
}

// clientCertRefused reports whether err is the alert a TLS server sends
// when it requires a client certificate and got none (TLS 1.3:
// certificate required; TLS 1.2: bad certificate) or one it does not
// trust. crypto/tls gives received alerts no exported type, so the text
// is matched.
func clientCertRefused(err error) bool {
	msg := err.Error()
	for _, alert := range []string{"tls: certificate required", "tls: bad certificate", "tls: unknown certificate authority"} {
		if strings.Contains(msg, "remote error: "+alert) {
			return true
		}
	}
	return false
}

// credentialsFix says which user and password Redis refused and where
// they come from.
func (s *Store) credentialsFix(sentinels bool) string {
	switch {
	case sentinels:
		return "a sentinel refused the credentials (WRONGPASS or NOAUTH): in the Sentinel form the user and password of REDIS_URL itself (redis://user:password@sentinel:port?master_name=…) are the sentinels'; fix them there, or drop them if the sentinels need none"
	case s.info.masterName != "":
		return "the master refused the credentials (WRONGPASS or NOAUTH): in the Sentinel form the master's user and password are REDIS_URL's username= and password= parameters (or INVENTORY_REDIS_PASSWORD_FILE, Config.UsePasswordFile), not the URL's user information, which goes to the sentinels"
	}
	return "Redis refused the credentials (WRONGPASS or NOAUTH): check the user and password of REDIS_URL (redis://user:password@host:port) or the file INVENTORY_REDIS_PASSWORD_FILE names (Config.UsePasswordFile); with a password file, close the connections (CLIENT KILL USER …) after changing it"
}

// aclFix names the command or keys an ACL user may not use, and the rule
// that grants them.
func (s *Store) aclFix(msg string) string {
	if _, rest, ok := strings.Cut(msg, "to run the '"); ok {
		cmd, _, _ := strings.Cut(rest, "'")
		cmd = strings.ToLower(cmd)
		return fmt.Sprintf("the Redis ACL user may not run %s (NOPERM); grant it: ACL SETUSER <user> +%s, or give the user the store's whole rule: ACL SETUSER <user> %s",
			strings.ToUpper(cmd), cmd, ACLRule(s.prefix))
	}
	return fmt.Sprintf("the Redis ACL user may not use the store's keys (NOPERM); grant them: ACL SETUSER <user> ~{%s}:*, or give the user the store's whole rule: ACL SETUSER <user> %s",
		s.prefix, ACLRule(s.prefix))
}

// reloadAfter reports whether err tells that a ClusterClient's slot map
// may be out of date: the node did not answer or refused the slot
// (a connection error, a timeout, CLUSTERDOWN, TRYAGAIN, MOVED, ASK,
// READONLY from a master demoted to replica).
func reloadAfter(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // the caller gave up: says nothing of the Cluster
	}
	if unavailable(err) {
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		return strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")
	}
	return false
}

// unavailable reports whether err says that Redis cannot serve the call
// now but may soon: the call's deadline passed or it was cancelled, no
// connection could be had (dial failure, refused, reset, closed, pool
// timeout), or Redis answered with an error that means "not now": LOADING
// (restarting), READONLY (a replica, during failover), MASTERDOWN,
// CLUSTERDOWN, TRYAGAIN (slot migration), or max clients reached.
//
// Authentication, permission, out-of-memory and TLS errors are not in the
// list: they are configuration faults (see Store.classify), also answered
// 503 but logged with their fix.
func unavailable(err error) bool {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted), errors.Is(err, redis.ErrClosed):
		return true
	case redis.IsLoadingError(err), redis.IsReadOnlyError(err), redis.IsMasterDownError(err),
		redis.IsClusterDownError(err), redis.IsTryAgainError(err), redis.IsMaxClientsError(err):
		return true
	case errors.Is(err, errRedirected):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// Dial errors, DNS failures and socket timeouts are net.Errors
	// (*net.OpError, *net.DNSError, os.ErrDeadlineExceeded).
	var ne net.Error
	return errors.As(err, &ne)
}
