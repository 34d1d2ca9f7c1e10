package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// redisProcess is a redis-server of the test's own, on a Unix socket in
// its own directory, with no persistence, so that the test can kill and
// restart it without touching any other Redis. A socket, not a TCP port:
// while it is down, another test running in parallel could take a freed
// port, and the restart would then talk to someone else's server.
type redisProcess struct {
	t    *testing.T
	path string
	dir  string
	cmd  *exec.Cmd
}

func startRedisServer(t *testing.T) *redisProcess {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH, so the fault test is skipped; install it (Debian: apt-get install redis-server) to run it")
	}
	p := &redisProcess{t: t, path: path, dir: t.TempDir()}
	p.start()
	t.Cleanup(p.kill)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
			t.Logf("redis-server's log:\n%s", out)
		}
	})
	return p
}

// socket is the path of the server's Unix socket.
func (p *redisProcess) socket() string { return filepath.Join(p.dir, "redis.sock") }

// url is the server's unix:// URL.
func (p *redisProcess) url() string { return "unix://" + p.socket() + "?db=0" }

func (p *redisProcess) start() {
	p.t.Helper()
	logf, err := os.OpenFile(filepath.Join(p.dir, "redis.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	defer logf.Close()
	p.cmd = exec.Command(p.path, "--port", "0", "--unixsocket", p.socket(), "--save", "", "--appendonly", "no",
		"--dir", p.dir, "--daemonize", "no")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: p.socket(), DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(15 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return // the goroutine above reaps the process once it is killed
		}
		select {
		case werr := <-exited:
			out, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
			p.t.Fatalf("redis-server exited (%v) before answering PING:\n%s", werr, out)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("redis-server on %s did not answer PING within 15s: %v", p.socket(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *redisProcess) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		// Wait until the socket refuses connections: the server is gone.
		for range 100 {
			conn, err := net.DialTimeout("unix", p.socket(), 100*time.Millisecond)
			if err != nil {
				break
			}
			conn.Close()
			time.Sleep(20 * time.Millisecond)
		}
		p.cmd = nil
	}
}

// answer is what the fault test checks of each HTTP response.
type answer struct {
	status     int
	code       string
	retryAfter string
	err        error
}

func (a answer) String() string {
	if a.err != nil {
		return "error: " + a.err.Error()
	}
	return fmt.Sprintf("%d %s (Retry-After %q)", a.status, a.code, a.retryAfter)
}

// okOrUnavailable: the only answers allowed while Redis may be down.
func (a answer) okOrUnavailable() bool {
	return a.err == nil && (a.status == http.StatusOK ||
		a.status == http.StatusServiceUnavailable && a.code == "unavailable" && a.retryAfter == "1")
}

// TestFaultRedisStopsAndRestarts kills the redis-server under a running
// API and starts it again. While Redis is gone, every request is answered
// 503 unavailable with Retry-After within the request deadline, never 500
// or 200; once it is back, the same API, store and client serve again.
func TestFaultRedisStopsAndRestarts(t *testing.T) {
	srv := startRedisServer(t)
	opts, err := optionsFromURL(srv.url())
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() }) // after newTestStore's cleanup
	store := newTestStore(t, client)
	pet := inventory.Item{PetID: 1, Quantity: 5, Status: inventory.StatusAvailable}
	if err := store.Put(t.Context(), pet); err != nil {
		t.Fatal(err)
	}
	const key = "fault-test-key"
	api, err := inventory.New(store, inventory.WithAPIKeys(key),
		inventory.WithStoreTimeout(500*time.Millisecond),
		inventory.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.StripPrefix("/v1", api))
	defer hs.Close()
	// The request deadline: an answer later than this fails the test.
	httpClient := &http.Client{Timeout: 3 * time.Second}

	call := func(i int) answer {
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequest(http.MethodGet, hs.URL+"/v1/inventory", nil)
		} else {
			req, _ = http.NewRequest(http.MethodPatch, hs.URL+"/v1/inventory/1", strings.NewReader(fmt.Sprintf(`{"quantity":%d}`, i)))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := httpClient.Do(req)
		if err != nil {
			return answer{err: err}
		}
		defer resp.Body.Close()
		a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		if resp.StatusCode != http.StatusOK {
			var body struct{ Code string }
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				a.err = fmt.Errorf("status %d with an unreadable body: %w", resp.StatusCode, err)
			}
			a.code = body.Code
		}
		return a
	}

	for i := range 4 {
		if a := call(i); a.err != nil || a.status != http.StatusOK {
			t.Fatalf("with Redis up, request %d: %v, want 200", i, a)
		}
	}

	// Traffic runs while Redis is killed.
	var (
		mu        sync.Mutex
		ok, unav  int
		wrong     []string
		stop      = make(chan struct{})
		traffic   sync.WaitGroup
		countedOK = make(chan struct{}, 1)
	)
	for g := range 4 {
		traffic.Go(func() {
			for i := g; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				a := call(i)
				mu.Lock()
				switch {
				case !a.okOrUnavailable():
					wrong = append(wrong, a.String())
				case a.status == http.StatusOK:
					ok++
					if ok == 20 {
						countedOK <- struct{}{}
					}
				default:
					unav++
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-countedOK:
	case <-time.After(30 * time.Second):
		close(stop)
		traffic.Wait()
		t.Fatalf("with Redis up, fewer than 20 requests answered 200 within 30s; wrong answers: %v", wrong)
	}
	srv.kill()
	t.Log("redis-server killed under traffic")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := unav
		mu.Unlock()
		if n >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests answered 503 within 30s of killing Redis", n)
		}
	}
	close(stop)
	traffic.Wait()
	t.Logf("under traffic: %d answered 200, %d answered 503", ok, unav)
	if len(wrong) > 0 {
		t.Fatalf("%d answers were neither 200 nor 503 unavailable with Retry-After: %v", len(wrong), wrong[:min(len(wrong), 5)])
	}

	// With Redis gone, every answer is 503.
	for i := range 10 {
		if a := call(i); a.err != nil || a.status != http.StatusServiceUnavailable || !a.okOrUnavailable() {
			t.Fatalf("with Redis down, request %d: %v, want 503 unavailable with Retry-After: 1", i, a)
		}
	}
	if err := store.Ping(t.Context()); !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("Ping with Redis down = %v, want unavailable", err)
	}

	// The same socket again: the same API serves without a restart. This
	// redis-server keeps no data, so the entry is put again once it is back.
	//
	// After a run of failed dials, go-redis's pool answers with its last
	// dial error, without dialling, until a background dial (once a
	// second) succeeds: for up to about a second after Redis is back, a
	// call may still fail unavailable. So wait until both the API answers
	// 200 and Ping succeeds; meanwhile only 503 unavailable is allowed.
	srv.start()
	t.Log("redis-server restarted")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		a := call(0)
		if !a.okOrUnavailable() {
			t.Fatalf("while Redis comes back: %v, want 200 or 503", a)
		}
		err := store.Ping(t.Context())
		if err != nil && !errors.Is(err, inventory.ErrUnavailable) {
			t.Fatalf("Ping while Redis comes back: %v, want nil or unavailable", err)
		}
		if a.status == http.StatusOK && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30s after Redis came back, the API answers %v and Ping %v", a, err)
		}
	}
	if err := store.Put(t.Context(), pet); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 8; i += 2 {
		if a := call(i); a.err != nil || a.status != http.StatusOK {
			t.Fatalf("after the restart, PATCH %d: %v, want 200", i, a)
		}
	}
}
