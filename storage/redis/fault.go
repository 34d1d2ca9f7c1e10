package redisstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrMisconfigured matches (errors.Is) the errors of a store whose
// configuration, or the server's, keeps it from serving: a fault that
// retrying does not fix and an operator must (see the package doc,
// Configuration faults). Such an error holds a *ConfigFault (errors.As)
// and also matches inventory.ErrUnavailable: the API answers 503 with
// Retry-After, and Ready fails with it. The store logs each fault once at
// Error with its fix, counts it in Stats.ConfigFaults while it persists,
// and logs at Info when it clears.
var ErrMisconfigured = errors.New("redisstore: misconfigured")

// ConfigFault is a configuration fault met by a call of the store: what
// is wrong, what fixes it and where. Every call that meets one returns an
// error from which errors.As gets it; it matches ErrMisconfigured. The
// store logs it once, at Error, with the attributes "fault" (Kind),
// "option", "file" and "command" (empty when they do not apply) and
// "error".
type ConfigFault struct {
	// Kind names the fault (see the package doc, Configuration faults):
	// "tls-verify", "tls-client-certificate", "plain-to-tls-port",
	// "tls-to-plain-port", "credentials", "acl", "master-name",
	// "cluster-node-as-single", "not-a-cluster", "sentinel-port",
	// "eviction-policy", "maxmemory" or "password-file".
	Kind string
	// Op is the store's call that met it ("ready", "set quantity", …).
	Op string
	// Command is, for an "acl" fault, the command the ACL user may not
	// run, lower case as ACL rules name it ("xadd", "cluster|slots"); ""
	// when the user may not use the store's keys, and for other kinds.
	Command string
	// File is, for a "password-file" fault, the file Config.UsePasswordFile
	// names.
	File string
	// Option is the Go API whose value fixes it, one of the Option
	// constants (OptionURL: the URL given to ParseURL, or the go-redis
	// options built without it), or "" when the fix is on the Redis side
	// (an ACL rule, memory). An application that names its own settings
	// maps this to them (WithSettingNames).
	Option string
	// Fix says what is wrong and what fixes it, in one sentence that
	// names the Go API.
	Fix string
	// Err is the error go-redis or Redis returned.
	Err error
}

// The values of ConfigFault.Option, and of the option WithSettingNames's
// function is called with: the Go API whose value fixes a fault.
const (
	OptionURL          = "URL"                    // the URL (ParseURL)
	OptionTLSFiles     = "Config.LoadTLSFiles"    // the CA, certificate and key files
	OptionPasswordFile = "Config.UsePasswordFile" // the password file
	OptionEviction     = "WithEvictionAllowed"    // an evicting maxmemory-policy accepted
	OptionInitialize   = "Store.Initialize"       // a store without its marker: initialize it
)

// The kinds of configuration fault (ConfigFault.Kind) that a program
// mapping Option to its own settings may need to tell apart: which TLS
// file fixes the fault.
const (
	FaultTLSVerify            = "tls-verify"             // the client does not trust the server's certificate: the CA
	FaultTLSClientCertificate = "tls-client-certificate" // the server wants a client certificate: the certificate and key
	FaultTLSToPlainPort       = "tls-to-plain-port"      // TLS spoken to a plain port: the URL, or TLS files that turn TLS on
	FaultPlainToTLSPort       = "plain-to-tls-port"      // plain text spoken to a TLS port: the URL (rediss://), and the CA
)

// The other kinds of configuration fault (ConfigFault.Kind).
const (
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

// Error is "redisstore: misconfigured: redis OP: FIX: ERR".
func (f *ConfigFault) Error() string {
	return fmt.Sprintf("%v: redis %s: %s: %v", ErrMisconfigured, f.Op, f.Fix, f.Err)
}

// Unwrap returns ErrMisconfigured and Err, so that the fault matches both.
func (f *ConfigFault) Unwrap() []error { return []error{ErrMisconfigured, f.Err} }

// faultRule tells one kind of configuration fault: match returns the
// fault err shows (Kind, Fix and the fields that apply), or nil.
type faultRule func(s *Store, err error) *ConfigFault

// faultRules are the configuration faults, in the order they are told:
// the store's own errors first, then TLS, then the replies of Redis. The
// first that matches names the fault.
var faultRules = []faultRule{
	evictionRule, passwordFileRule, masterNameRule, tlsVerifyRule, clientCertRule,
	tlsToPlainRule, otherProtocolRule, replyRule,
}

// classify returns the configuration fault err shows, or nil when err is
// not one. It is the one place that tells configuration faults from
// other errors.
func (s *Store) classify(err error) *ConfigFault {
	for _, rule := range faultRules {
		if f := rule(s, err); f != nil {
			f.Err = err
			return f
		}
	}
	return nil
}

func evictionRule(s *Store, err error) *ConfigFault {
	ef, ok := errors.AsType[*evictionFault](err)
	if !ok {
		return nil
	}
	return &ConfigFault{Kind: faultEviction, Option: OptionEviction, Fix: "Redis's maxmemory-policy is " + ef.policy +
		": under memory pressure Redis evicts any key, the store's items, guards and change log included, and the inventory is silently lost; " +
		"set maxmemory-policy noeviction (or a volatile-* policy: the store's keys have no expiry), or accept the risk with the option " + s.name(OptionEviction, faultEviction)}
}

func passwordFileRule(s *Store, err error) *ConfigFault {
	pf, ok := errors.AsType[*passwordFileError](err)
	if !ok {
		return nil
	}
	return &ConfigFault{Kind: faultPassword, Option: OptionPasswordFile, File: pf.path, Fix: fmt.Sprintf(
		"the password file %s (%s) cannot be used for a new connection: %s; "+
			"write the password into it (when rotating, replace the file whole, with a rename)", pf.path, s.name(OptionPasswordFile, faultPassword), pf.reason())}
}

// sentinelsUnreachable reports whether err is go-redis's "no sentinel
// answered" (which wraps what each one said).
func sentinelsUnreachable(err error) bool {
	return strings.Contains(err.Error(), "all sentinels specified in configuration are unreachable")
}

func masterNameRule(s *Store, err error) *ConfigFault {
	// go-redis says "all sentinels … are unreachable: redis: nil" when a
	// sentinel answered that it knows no such master.
	if !sentinelsUnreachable(err) || !errors.Is(err, redis.Nil) {
		return nil
	}
	name := "of the name FailoverOptions.MasterName gives"
	if s.info.masterName != "" { // known from WithClientConfig
		name = fmt.Sprintf("named %q", s.info.masterName)
	}
	return &ConfigFault{Kind: faultMasterName, Option: OptionURL,
		Fix: "the sentinels know no master " + name + " (the URL's master_name= parameter); check it against SENTINEL MASTERS on a sentinel"}
}

func tlsVerifyRule(s *Store, err error) *ConfigFault {
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	if !errors.As(err, &cve) && !errors.As(err, &ua) && !errors.As(err, &he) && !errors.As(err, &ci) {
		return nil
	}
	return &ConfigFault{Kind: FaultTLSVerify, Option: OptionTLSFiles,
		Fix: "TLS: the client does not trust the Redis server's certificate; give the CA that signed it to " + s.name(OptionTLSFiles, FaultTLSVerify) +
			", and check that the URL's host is a name the certificate holds"}
}

// clientCertRule tells the alert a TLS server sends when it requires a
// client certificate and got none (TLS 1.3: certificate required; TLS
// 1.2: bad certificate) or one it does not trust. crypto/tls gives
// received alerts no exported type, so the text is matched.
func clientCertRule(s *Store, err error) *ConfigFault {
	msg := err.Error()
	for _, alert := range []string{"tls: certificate required", "tls: bad certificate", "tls: unknown certificate authority"} {
		if strings.Contains(msg, "remote error: "+alert) {
			return &ConfigFault{Kind: FaultTLSClientCertificate, Option: OptionTLSFiles,
				Fix: "TLS: the Redis server asks for a client certificate (mutual TLS, tls-auth-clients) and got none, or none it trusts; give the certificate and its key to " +
					s.name(OptionTLSFiles, FaultTLSClientCertificate) + ", signed by a CA the server trusts (its tls-ca-cert-file)"}
		}
	}
	return nil
}

func tlsToPlainRule(s *Store, err error) *ConfigFault {
	var rh tls.RecordHeaderError
	if !errors.As(err, &rh) {
		return nil
	}
	return &ConfigFault{Kind: FaultTLSToPlainPort, Option: OptionURL, Fix: s.tlsToPlainFix("the server")}
}

// tlsToPlainFix is the fix of a client speaking TLS to server, which
// answers in plain text.
func (s *Store) tlsToPlainFix(server string) string {
	files := s.name(OptionTLSFiles, FaultTLSToPlainPort)
	return "TLS: " + server + " answers in plain text but the client speaks TLS (rediss://, or " + files + ", which turns TLS on); " +
		"for this port use a redis:// " + s.name(OptionURL, FaultTLSToPlainPort) + " without " + files + ", or name the server's TLS port"
}

// plainToTLSFix is the fix of a client speaking plain text to the server
// at addr, which speaks TLS.
func (s *Store) plainToTLSFix(addr string) string {
	return fmt.Sprintf("TLS: the server at %s speaks TLS but the client speaks plain text (redis://); use a rediss:// %s, and %s for a private CA",
		addr, s.name(OptionURL, FaultPlainToTLSPort), s.name(OptionTLSFiles, FaultPlainToTLSPort))
}

func otherProtocolRule(s *Store, err error) *ConfigFault {
	fix := s.portSpeaksOther(err)
	if fix == "" {
		return nil
	}
	if s.info.tls {
		return &ConfigFault{Kind: FaultTLSToPlainPort, Option: OptionURL, Fix: fix}
	}
	return &ConfigFault{Kind: FaultPlainToTLSPort, Option: OptionURL, Fix: fix}
}

// replyRules tell the configuration faults that Redis replies with: the
// first rule whose prefix (or, with contains, substring) the reply has
// applies, on the clients it is for (onlySingle: not a ClusterClient;
// onlyCluster: a ClusterClient).
var replyRules = []struct {
	match                   []string
	contains                bool
	onlySingle, onlyCluster bool
	fault                   func(s *Store, msg string, err error) *ConfigFault
}{
	{match: []string{"WRONGPASS", "NOAUTH", "ERR AUTH"}, fault: credentialsFault},
	{match: []string{"without any password configured"}, contains: true, fault: credentialsFault},
	{match: []string{"NOPERM"}, fault: aclFault},
	{match: []string{"OOM "}, fault: func(*Store, string, error) *ConfigFault {
		return &ConfigFault{Kind: faultOOM,
			Fix: "Redis refuses writes: its memory is at maxmemory (OOM command not allowed); raise maxmemory or free memory on the server (the store's keys must never be evicted: keep maxmemory-policy noeviction or volatile-*)"}
	}},
	{match: []string{"MOVED ", "ASK "}, onlySingle: true, fault: func(*Store, string, error) *ConfigFault {
		return &ConfigFault{Kind: faultClusterNode, Option: OptionURL,
			Fix: "the server is a Redis Cluster node that does not own the store's keys, reached as a single node; name the Cluster instead: a URL redis://host:port?cluster=true (or ?addr=host2:port2&addr=… for more seeds), or a redis.ClusterClient given to New"}
	}},
	{match: []string{"cluster support disabled"}, contains: true, onlyCluster: true, fault: func(*Store, string, error) *ConfigFault {
		return &ConfigFault{Kind: faultNotCluster, Option: OptionURL,
			Fix: "the server is not a Cluster node (cluster support disabled) but the URL names a Cluster; drop cluster=true and addr= to name one node, or use master_name= for Sentinel"}
	}},
	{match: []string{"ERR unknown command"}, fault: func(*Store, string, error) *ConfigFault {
		return &ConfigFault{Kind: faultSentinel, Option: OptionURL,
			Fix: "the server does not know a command the store needs (WATCH, MULTI, EXEC): it is probably a Redis Sentinel's port; name the master through the sentinels instead: a URL redis://sentinel:port?master_name=NAME&addr=sentinel2:port, or a redis.NewFailoverClient given to New"}
	}},
}

func replyRule(s *Store, err error) *ConfigFault {
	var re redis.Error
	if !errors.As(err, &re) {
		return nil
	}
	msg := re.Error()
	if _, cause, ok := strings.Cut(msg, "Transaction discarded because of: "); ok {
		msg = cause // EXECABORT: the reply that discarded it says why
	}
	cluster := s.cluster != nil
	for _, r := range replyRules {
		if r.onlySingle && cluster || r.onlyCluster && !cluster {
			continue
		}
		for _, m := range r.match {
			if r.contains && strings.Contains(msg, m) || !r.contains && strings.HasPrefix(msg, m) {
				return r.fault(s, msg, err)
			}
		}
	}
	return nil
}

// credentialsFault says which user and password Redis refused and where
// they come from: a sentinel's refusal reaches the store wrapped in
// go-redis's "all sentinels … are unreachable".
func credentialsFault(s *Store, _ string, err error) *ConfigFault {
	f := &ConfigFault{Kind: faultCredentials, Option: OptionURL}
	switch {
	case sentinelsUnreachable(err):
		f.Fix = "a sentinel refused the credentials (WRONGPASS or NOAUTH): in the Sentinel form the user and password of the URL itself (redis://user:password@sentinel:port?master_name=…) are the sentinels'; fix them there, or drop them if the sentinels need none"
	case s.info.failover:
		if s.info.passwordFile != "" {
			f.Option, f.File = OptionPasswordFile, s.info.passwordFile
		}
		f.Fix = "the master refused the credentials (WRONGPASS or NOAUTH): in the Sentinel form the master's user and password are the URL's username= and password= parameters (or the file given to " +
			s.name(OptionPasswordFile, faultCredentials) + "), not the URL's user information, which goes to the sentinels"
	case s.info.passwordFile != "":
		f.Option, f.File = OptionPasswordFile, s.info.passwordFile
		f.Fix = fmt.Sprintf("Redis refused the credentials (WRONGPASS or NOAUTH): check the URL's user and the password in the file %s (%s); after changing it, close the connections (CLIENT KILL USER …)",
			s.info.passwordFile, s.name(OptionPasswordFile, faultCredentials))
	default:
		f.Fix = "Redis refused the credentials (WRONGPASS or NOAUTH): check the user and password of the URL (redis://user:password@host:port), or the file given to " +
			s.name(OptionPasswordFile, faultCredentials)
	}
	return f
}

// aclFault names the command or keys an ACL user may not use, and the
// rule that grants them.
func aclFault(s *Store, msg string, _ error) *ConfigFault {
	if _, rest, ok := strings.Cut(msg, "to run the '"); ok {
		cmd, _, _ := strings.Cut(rest, "'")
		cmd = strings.ToLower(cmd)
		return &ConfigFault{Kind: faultACL, Command: cmd, Fix: fmt.Sprintf(
			"the Redis ACL user may not run %s (NOPERM); grant it: ACL SETUSER <user> +%s, or give the user the store's whole rule (ACLRule): ACL SETUSER <user> %s",
			strings.ToUpper(cmd), cmd, ACLRule(s.prefix))}
	}
	return &ConfigFault{Kind: faultACL, Fix: fmt.Sprintf(
		"the Redis ACL user may not use the store's keys (NOPERM); grant them: ACL SETUSER <user> ~{%s}:*, or give the user the store's whole rule (ACLRule): ACL SETUSER <user> %s",
		s.prefix, ACLRule(s.prefix))}
}

// evictionFault: Redis may evict the store's keys (see Ready).
type evictionFault struct{ policy string }

func (e *evictionFault) Error() string {
	return "redis maxmemory-policy is " + e.policy + ", which can evict the store's keys"
}

// activeFault is the configuration fault in force: its kind, and whether
// Ready saw it (then only Ready clears it: a fault of a command only Ready
// sends, or of the eviction policy, persists while other calls succeed).
type activeFault struct {
	kind    string
	byReady bool
}

// fault records f, met by a call to Ready or not: logged at Error when it
// starts (or replaces another), counted every time.
func (s *Store) fault(f *ConfigFault, ready bool) {
	s.configFaults.Add(1)
	for {
		old := s.activeFault.Load()
		if old != nil && old.kind == f.Kind && (old.byReady || !ready) {
			return
		}
		if s.activeFault.CompareAndSwap(old, &activeFault{kind: f.Kind, byReady: ready}) {
			if old == nil || old.kind != f.Kind {
				s.log.Error("redisstore: configuration fault: "+f.Fix,
					"fault", f.Kind, "option", f.Option, "file", f.File, "command", f.Command, "error", f.Err.Error())
			}
			return
		}
	}
}

// cleared records that a call (Ready or not) succeeded: a configuration
// fault in force is over, logged at Info, unless Ready saw it and this is
// not Ready.
func (s *Store) cleared(ready bool) {
	old := s.activeFault.Load()
	if old == nil || old.byReady && !ready {
		return
	}
	if s.activeFault.CompareAndSwap(old, nil) {
		s.log.Info("redisstore: configuration fault cleared: the store serves again", "fault", old.kind)
	}
}
