// Package redisproc starts a redis-server process of a test's own, for
// the conformance module's tests, which cannot use the root module's
// internal/redistest (the module depends on porcupine only).
package redisproc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/testcerts"
)

// Start starts a redis-server of the test's own on a free loopback
// port, with extra arguments, and stops it at the end. It skips when
// redis-server is not installed, unless REDIS_REQUIRED is set (as CI
// does), where that is a failure.
func Start(t testing.TB, args ...string) string {
	t.Helper()
	return start(t, "--port", args)
}

// StartTLS starts a redis-server that speaks TLS only, with a
// certificate for 127.0.0.1 that a CA of the test's own signs
// (testcerts; clients' certificates optional), and returns its address
// and the CA's PEM file.
func StartTLS(t testing.TB, args ...string) (addr, caFile string) {
	t.Helper()
	files := testcerts.Write(t, t.TempDir())
	args = append(append(files.ServerArgs(), "--port", "0"), args...)
	return start(t, "--tls-port", args), files.CA
}

func start(t testing.TB, portFlag string, args []string) string {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REDIS_REQUIRED") != "" {
			t.Fatal("redis-server is not installed and REDIS_REQUIRED is set")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	dir := t.TempDir()
	for attempt := 0; attempt < 5; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command("redis-server", append([]string{portFlag, strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "log")}, args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		addr := "127.0.0.1:" + strconv.Itoa(port)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case <-exited:
			default:
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				c.Close()
				t.Cleanup(func() { cmd.Process.Kill(); <-exited })
				return addr
			}
			break // exited: the port was taken, try another
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatal("redis-server did not start")
	return ""
}
