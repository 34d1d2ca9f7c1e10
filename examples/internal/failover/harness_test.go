package failover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

// apiKey is the key every server under test accepts; it must never appear
// in their logs.
const apiKey = "failover-test-key-8d41e0"

var serverBin, conformanceBin string // built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "failover")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "inventory-server")
	conformanceBin = filepath.Join(dir, "inventory-conformance")
	for bin, pkg := range map[string]string{serverBin: "../../redis", conformanceBin: "../../../conformancetest/cmd/inventory-conformance"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// clusterURL is the REDIS_URL of a Cluster seeded with nodes, in
// go-redis's ParseClusterURL form: redis://first?addr=second&addr=….
func clusterURL(nodes ...*redistest.Node) string {
	u := "redis://" + nodes[0].Addr()
	for i, n := range nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + n.Addr()
	}
	return u
}

// sentinelURL is the REDIS_URL of a Sentinel-managed master, in
// go-redis's ParseFailoverURL form:
// redis://sentinel1?master_name=NAME&addr=sentinel2&addr=….
func sentinelURL(s *redistest.SentinelSet) string {
	addrs := s.SentinelAddrs()
	u := "redis://" + addrs[0] + "?master_name=" + s.MasterName
	for _, a := range addrs[1:] {
		u += "&addr=" + a
	}
	return u
}

// server is a running examples/redis process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	logs *syncBuffer
	done chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// startServer runs examples/redis on redisURL with args and waits until
// /healthz answers (not /readyz: some tests want a server that is not
// ready). The server is stopped when the test ends, and its logs must not
// contain the key.
func startServer(t *testing.T, redisURL string, args ...string) *server {
	t.Helper()
	port := redistest.FreePort(t)
	s := &server{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(serverBin, append([]string{"-addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...)...)
	s.cmd.Env = append(os.Environ(), "REDIS_URL="+redisURL, "INVENTORY_API_KEYS="+apiKey)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.stop()
		if strings.Contains(s.logs.String(), apiKey) {
			t.Errorf("the server's output contains the API key:\n%s", s.logs.String())
		}
		if t.Failed() {
			t.Logf("server output:\n%s", s.logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("examples/redis with REDIS_URL=%s exited at start (%v):\n%s", redisURL, err, s.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("examples/redis with REDIS_URL=%s: /healthz did not answer 200 in 20s:\n%s", redisURL, s.logs.String())
		}
	}
	return s
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 15 s).
func (s *server) stop() {
	select {
	case err := <-s.done:
		s.done <- err
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		s.done <- <-s.done
	}
}

// readyz returns the status of GET /readyz.
func (s *server) readyz() (int, error) {
	resp, err := http.Get(s.base + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitReady waits until /readyz answers 200.
func (s *server) waitReady(timeout time.Duration) {
	s.t.Helper()
	err := redistest.Poll(timeout, func() error {
		st, err := s.readyz()
		if err == nil && st != 200 {
			err = fmt.Errorf("/readyz answered %d", st)
		}
		return err
	})
	if err != nil {
		s.t.Fatalf("the server did not become ready: %v\n%s", err, s.logs.String())
	}
}

// reply is one answer, read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.body, &e)
	return e.Code
}

// do sends one request with the key, and reads the answer whole.
func do(ctx context.Context, client *http.Client, method, url, body string) (reply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}, err
}

type item struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   string `json:"status"`
}

// writeSeed writes n pets (ids 1..n, quantity 0) to a seed file.
func writeSeed(t *testing.T, n int) string {
	t.Helper()
	items := make([]item, n)
	for i := range items {
		items[i] = item{PetID: int64(i + 1), Status: "available"}
	}
	raw, _ := json.Marshal(items)
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// summary logs a result line and, when FAILOVER_SUMMARY names a file,
// appends it there too, so that CI can print the figures of a passing run.
func summary(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if path := os.Getenv("FAILOVER_SUMMARY"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("FAILOVER_SUMMARY: %v", err)
			return
		}
		defer f.Close()
		fmt.Fprintln(f, line)
	}
}
