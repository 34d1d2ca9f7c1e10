package hardening

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
)

// apiKey is the key every server under test accepts. It is also searched
// for in every log the servers write: it must never appear.
const apiKey = "hardening-test-key-5f0c2a"

var serverBin string // inventory-server, built once by TestMain

func TestMain(m *testing.M) {
	proctest.Main(m, "hardening", proctest.Binary{Pkg: proctest.ServerPkg, Name: "inventory-server", Path: &serverBin})
}

// redisServer is a redis-server process of the test's own, on a Unix
// socket in its own directory: a TCP port freed while it is killed could
// be taken by another test running in parallel, and the restart would then
// talk to someone else's server.
type redisServer struct {
	t    *testing.T
	dir  string
	args []string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T, extra ...string) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server); skipping the tests that need a real Redis")
	}
	r := &redisServer{t: t, dir: t.TempDir(), args: extra}
	r.start()
	t.Cleanup(func() { r.kill() })
	return r
}

func (r *redisServer) socket() string { return filepath.Join(r.dir, "redis.sock") }

func (r *redisServer) url() string { return "unix://" + r.socket() + "?db=0" }

func (r *redisServer) start() {
	r.t.Helper()
	args := append([]string{"--port", "0", "--unixsocket", r.socket(), "--dir", r.dir,
		"--save", "", "--daemonize", "no", "--logfile", filepath.Join(r.dir, "redis.log")}, r.args...)
	r.cmd = exec.Command("redis-server", args...)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out, _ := exec.Command("redis-cli", "-s", r.socket(), "ping").Output(); strings.TrimSpace(string(out)) == "PONG" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
	r.t.Fatalf("redis-server on %s did not answer PING; its log:\n%s", r.socket(), log)
}

// kill stops redis-server with SIGKILL: no clean shutdown, no last save.
func (r *redisServer) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

func (r *redisServer) cli(args ...string) string {
	r.t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-s", r.socket()}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("redis-cli %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// server is a running inventory-server process.
type server struct {
	*proctest.Server
	t *testing.T
}

// startServer runs inventory-server with the given framework on redisURL and
// waits until /readyz answers 200: the server listens before it seeds, so
// /healthz alone would let a first request meet the 503 of a store not
// seeded yet. Its logs are checked for the key when the test ends.
func startServer(t *testing.T, framework, redisURL string, extraEnv ...string) *server {
	t.Helper()
	return startServerArgs(t, framework, redisURL, nil, extraEnv...)
}

// startServerArgs is startServer with extra command-line flags. The
// server seeds the demo inventory (INVENTORY_SEED=demo) unless a -seed
// flag says otherwise.
func startServerArgs(t *testing.T, framework, redisURL string, args []string, extraEnv ...string) *server {
	t.Helper()
	env := append([]string{"REDIS_URL=" + redisURL, "INVENTORY_API_KEYS=" + apiKey, "INVENTORY_SEED=demo"}, extraEnv...)
	s := &server{proctest.Start(t, serverBin, apiKey, env, append([]string{"-framework", framework}, args...)), t}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, err := do(context.Background(), http.DefaultClient, http.MethodGet, s.Base+"/readyz", "")
		if err == nil && r.Status == http.StatusOK {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 within 20s (%v, %d %s):\n%s", err, r.Status, r.Body, s.Logs.String())
		}
	}
}

// rssKiB is the server's resident memory, from /proc.
func (s *server) rssKiB() int {
	s.t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.PID()))
	if err != nil {
		s.t.Fatalf("reading the server's RSS: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	s.t.Fatal("no VmRSS in /proc status")
	return 0
}

// reply is one answer, read whole.
type reply = proctest.Reply

// do sends one request with the key and a deadline, and reads the answer
// whole.
func do(ctx context.Context, client *http.Client, method, url, body string) (reply, error) {
	return proctest.Do(ctx, client, apiKey, method, url, body)
}

// raw sends head (request line and headers, without the final blank line)
// and then body on a connection of its own, reading the answer while it
// writes, as curl does: a server that answers 413 and closes before the
// body is all sent is seen answering, not as a failed write.
func raw(t *testing.T, addr, head string, body io.Reader) (reply, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	go func() {
		w := bufio.NewWriterSize(conn, 64<<10)
		if _, err := io.WriteString(w, head+"\r\n\r\n"); err != nil {
			return
		}
		if body != nil {
			_, _ = io.Copy(w, body) // fails once the server closes: expected
		}
		_ = w.Flush()
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}

// summary logs a result line and appends it to the file named by
// HARDENING_SUMMARY, which CI prints.
func summary(t *testing.T, format string, args ...any) {
	t.Helper()
	proctest.Summary(t, "HARDENING_SUMMARY", format, args...)
}
