package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeout bounds one command the harness sends to a node.
const Timeout = 2 * time.Second

// Require skips t, saying how to install them, when redis-server or
// redis-cli is not on PATH.
func Require(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install redis-server); skipping the tests that start real Redis topologies", bin)
		}
	}
}

// Node is one redis-server (or sentinel) process of the test's own.
type Node struct {
	// Name says what the node is in failure messages ("cluster-2",
	// "sentinel-master"); Port is its loopback port; Dir its directory.
	Name string
	Port int
	Dir  string

	t      testing.TB
	access access   // how the harness speaks to it: TLS, AdminUser
	args   []string // redis-server's arguments, for Restart
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Addr is the node's address, 127.0.0.1:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

// Log returns what the node wrote to its log file so far.
func (n *Node) Log() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "redis.log"))
	return string(b)
}

// Do sends one command to the node (see the package-level Do).
func (n *Node) Do(args ...string) (any, error) { return n.access.do(n.Addr(), Timeout, args...) }

// DoString sends one command whose reply is a string.
func (n *Node) DoString(args ...string) (string, error) {
	return n.access.doString(n.Addr(), Timeout, args...)
}

// Info returns the named field of INFO section.
func (n *Node) Info(section, field string) (string, error) {
	info, err := n.DoString("INFO", section)
	if err != nil {
		return "", err
	}
	v, ok := infoField(info, field)
	if !ok {
		return "", fmt.Errorf("%s: INFO %s has no field %s", n.Name, section, field)
	}
	return v, nil
}

// Kill stops the node with SIGKILL (no shutdown, no last save) and waits
// for the process to be gone. Killing a dead node does nothing.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
	n.cmd = nil
}

// Stop suspends the node's process with SIGSTOP: it keeps its sockets
// but answers nothing, acknowledges nothing (a replica), until Continue.
// Kill ends a stopped node too.
func (n *Node) Stop() { n.signal(syscall.SIGSTOP) }

// Continue resumes a node Stop suspended (SIGCONT).
func (n *Node) Continue() { n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		n.t.Fatalf("%s: %v sent to a node that is not running", n.Name, sig)
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("%s: %v: %v", n.Name, sig, err)
	}
}

// Alive reports whether the process is running.
func (n *Node) Alive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// StartNode starts a redis-server on a free loopback port in a directory
// of its own, with no persistence unless args say otherwise, and waits
// until it answers PING. args are extra command-line settings
// ("--appendonly", "yes"). The node is killed when the test ends.
func StartNode(t testing.TB, name string, args ...string) *Node {
	t.Helper()
	Require(t)
	return startNode(t, name, func(port int, dir string) []string {
		return append(nodeArgs(port, dir), args...)
	})
}

// nodeArgs are the settings of a plain node on port with its files in
// dir, without persistence.
func nodeArgs(port int, dir string) []string {
	return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		// A replica syncs at once, not after the default 5 s that
		// lets several replicas share one diskless transfer.
		"--repl-diskless-sync-delay", "0",
		"--logfile", filepath.Join(dir, "redis.log")}
}

// startNode starts redis-server with the arguments argv returns for a
// free port and a fresh directory. A port found free can be taken by
// someone else before redis-server binds it: then the process exits at
// once, and it is tried again on another port.
func startNode(t testing.TB, name string, argv func(port int, dir string) []string) *Node {
	t.Helper()
	return startNodeAs(t, name, access{}, argv)
}

// startNodeAs is startNode for a node the harness talks to with a (over
// TLS, as AdminUser).
func startNodeAs(t testing.TB, name string, a access, argv func(port int, dir string) []string) *Node {
	t.Helper()
	var lastLog string
	for attempt := 0; attempt < 5; attempt++ {
		n := &Node{Name: name, Port: FreePort(t), Dir: t.TempDir(), t: t, access: a}
		n.args = argv(n.Port, n.Dir)
		t.Cleanup(n.Kill)
		err := n.spawn()
		if err == nil {
			return n
		}
		lastLog = n.Log()
		n.Kill()
		if err != errExited || !strings.Contains(lastLog, "in use") {
			t.Fatalf("redis-server for %s on port %d: %v; its log:\n%s", name, n.Port, err, lastLog)
		}
	}
	t.Fatalf("redis-server for %s: no free port after 5 attempts; last log:\n%s", name, lastLog)
	return nil
}

// spawn starts the process with n.args and waits until it answers PING.
func (n *Node) spawn() error {
	n.mu.Lock()
	n.cmd = exec.Command("redis-server", n.args...)
	n.exited = make(chan struct{})
	cmd, exited := n.cmd, n.exited
	if err := cmd.Start(); err != nil {
		n.cmd = nil
		n.mu.Unlock()
		return err
	}
	n.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return Poll(10*time.Second, func() error {
		select {
		case <-exited:
			return errExited
		default:
		}
		pong, err := n.DoString("PING")
		if err == nil && pong != "PONG" {
			err = fmt.Errorf("PING answered %q", pong)
		}
		return err
	})
}

// Restart starts a killed node again, with the same port, directory and
// settings (a Cluster node keeps its nodes.conf, so it rejoins), and waits
// until it answers PING.
func (n *Node) Restart() {
	n.t.Helper()
	if n.Alive() {
		n.t.Fatalf("%s: Restart of a node that is running", n.Name)
	}
	if err := n.spawn(); err != nil {
		n.t.Fatalf("restarting %s on port %d: %v; its log:\n%s", n.Name, n.Port, err, n.Log())
	}
}

// Replicated writes key on master and waits, up to 10 s, until every
// replica has processed the replication stream up to that write, and
// returns how long that took. Use it to know a replica is streaming, not
// just connected: after the initial sync a master streams to a replica
// only from its first REPLCONF ACK (up to a second later), and until then
// WAIT counts no acknowledgement from it. On a Cluster, key must be in a
// slot master serves.
func Replicated(key string, master *Node, replicas ...*Node) (time.Duration, error) {
	start := time.Now()
	v, err := master.Do("SET", key, strconv.FormatInt(start.UnixNano(), 10))
	if re, ok := v.(ReplyError); ok {
		err = fmt.Errorf("SET %s on %s: %w", key, master.Name, re)
	}
	if err != nil {
		return 0, err
	}
	raw, err := master.Info("replication", "master_repl_offset")
	if err != nil {
		return 0, err
	}
	want, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: master_repl_offset %q", master.Name, raw)
	}
	for _, r := range replicas {
		for {
			raw, err := r.Info("replication", "slave_repl_offset")
			if err != nil {
				return 0, err
			}
			if got, _ := strconv.ParseInt(raw, 10, 64); got >= want {
				break
			}
			if time.Since(start) > 10*time.Second {
				return 0, fmt.Errorf("%s has not processed a write made 10 s ago on %s (offset %s, want %d)", r.Name, master.Name, raw, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return time.Since(start), nil
}

var errExited = fmt.Errorf("redis-server exited")

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Poll calls check every 20 ms until it returns nil or timeout has
// passed, and returns its last error then.
func Poll(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || err == errExited {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
