package redistest

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/petinventory/petinventory/internal/testcerts"
)

// TLSFiles are the PEM files of a private certificate authority made for
// one test (see testcerts.Files): a CA, a server certificate it signed for
// 127.0.0.1 and localhost, and a client certificate it signed (for mutual
// TLS), each key beside its certificate, in a t.TempDir(); ClientConfig
// trusts the CA and presents the client certificate, ServerArgs are
// redis-server's settings to serve them.
type TLSFiles = testcerts.Files

// NewTLSFiles makes a CA, a server and a client certificate (ECDSA P-256,
// valid for a day) and writes them to a fresh directory.
func NewTLSFiles(t testing.TB) *TLSFiles {
	t.Helper()
	return testcerts.Write(t, t.TempDir())
}

// StartTLSNode is StartNode for a TLS-only redis-server: its port speaks
// TLS with files' server certificate (--port 0 --tls-port N), clients'
// certificates are optional unless args say otherwise, and the harness
// talks to it over TLS with the client certificate.
func StartTLSNode(t testing.TB, name string, files *TLSFiles, args ...string) *Node {
	t.Helper()
	Require(t)
	return startTLSNode(t, name, files, false, args...)
}

// startTLSNode is StartTLSNode, the harness speaking as AdminUser when
// admin.
func startTLSNode(t testing.TB, name string, files *TLSFiles, admin bool, args ...string) *Node {
	t.Helper()
	return startNodeAs(t, name, access{tls: files.ClientConfig(t), admin: admin}, func(port int, dir string) []string {
		a := []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "no", "--daemonize", "no",
			"--repl-diskless-sync-delay", "0",
			"--logfile", filepath.Join(dir, "redis.log")}
		a = append(a, files.ServerArgs()...)
		return append(a, args...)
	})
}
