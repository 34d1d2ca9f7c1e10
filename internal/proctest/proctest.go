// Package proctest runs a built server (inventory-server, examples/redis)
// as a process of the test's own, the way a user runs it, for the tests
// that treat it from outside: server/internal/hardening, failover, managed
// and logtrim, and internal/e2e's consistency runs. It builds the binary,
// starts it on a free loopback port, waits for /healthz, sends requests
// with a bearer key, stops it at the end of the test (checking that its
// output never contains the key), and writes the tests' summary lines
// where CI prints them. It is test support, not an example to copy.
package proctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/redistest"
)

// Build compiles the Go package at pkg (a directory, relative to the
// caller's) into dir and returns the binary's path.
func Build(dir, pkg, name string) (string, error) {
	bin := dir + string(os.PathSeparator) + name
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	return bin, nil
}

// Binary is a program a test package builds once, in Main.
type Binary struct {
	Pkg  string  // the Go package's directory, relative to the test package's
	Name string  // the binary's file name
	Path *string // where Main stores the binary's path
}

// ServerPkg and ConformancePkg are inventory-server and the conformance
// command, as seen from a test package under examples/internal.
const (
	ServerPkg      = "../../cmd/inventory-server"
	ConformancePkg = "../../../conformancetest/cmd/inventory-conformance"
)

// Main is a test package's TestMain: it builds bins into a temporary
// directory named after the package, runs the tests and removes the
// directory. A failed build exits 1 before any test runs.
func Main(m *testing.M, name string, bins ...Binary) {
	dir, err := os.MkdirTemp("", name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, b := range bins {
		if *b.Path, err = Build(dir, b.Pkg, b.Name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Server is a running server process.
type Server struct {
	Base string  // http://127.0.0.1:port
	Logs *Buffer // what it wrote to stdout and stderr
	cmd  *exec.Cmd
	done chan error // its exit, put back by whoever reads it
}

// Buffer is a bytes.Buffer safe for a process's output and a test's
// reads at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *Buffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *Buffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// Start runs bin -addr 127.0.0.1:PORT args... with env added to the
// test's environment, and waits (20 s at most) until /healthz answers
// 200; it fails the test at once if the process exits first. When the test
// ends the server is stopped, its output must not contain secret (the API
// key), and on failure the output is logged.
func Start(t *testing.T, bin, secret string, env, args []string) *Server {
	t.Helper()
	port := redistest.FreePort(t)
	s := &Server{Base: fmt.Sprintf("http://127.0.0.1:%d", port), Logs: &Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, append([]string{"-addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.Logs, s.Logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.Stop()
		if secret != "" && strings.Contains(s.Logs.String(), secret) {
			t.Errorf("the server's output contains the API key:\n%s", s.Logs.String())
		}
		if t.Failed() {
			t.Logf("server output:\n%s", s.Logs.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get(s.Base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if exited, err := s.Wait(20 * time.Millisecond); exited {
			t.Fatalf("%s %s exited at start (%v):\n%s", bin, strings.Join(args, " "), err, s.Logs.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: /healthz did not answer 200 in 20s:\n%s", bin, strings.Join(args, " "), s.Logs.String())
		}
	}
}

// PID is the process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Signal sends sig to the process.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Wait waits up to timeout for the process to exit, and returns whether
// it exited and its exit error.
func (s *Server) Wait(timeout time.Duration) (exited bool, err error) {
	select {
	case err := <-s.done:
		s.done <- err // for the next Wait and Stop
		return true, err
	case <-time.After(timeout):
		return false, nil
	}
}

// Stop sends SIGTERM and waits for the exit (SIGKILL after 15 s).
func (s *Server) Stop() {
	if exited, _ := s.Wait(0); exited {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if exited, _ := s.Wait(15 * time.Second); !exited {
		_ = s.cmd.Process.Kill()
		s.Wait(time.Minute)
	}
}

// Reply is one answer, read whole.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// Code is the "code" member of a JSON error body ("" if none).
func (r Reply) Code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Code
}

// Do sends one request with the bearer key (and, with a body, Content-Type
// application/json) and reads the answer whole.
func Do(ctx context.Context, client *http.Client, key, method, url, body string) (Reply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Reply{resp.StatusCode, resp.Header, b}, err
}

// Summary logs a result line and, when the environment variable env names
// a file, appends it there too, so that CI can print the figures of a
// passing run (go test shows a passing test's log only with -v).
func Summary(t *testing.T, env, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if path := os.Getenv(env); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("%s: %v", env, err)
			return
		}
		defer f.Close()
		fmt.Fprintln(f, line)
	}
}
