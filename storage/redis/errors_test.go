package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// calls runs every method of the store that talks to Redis, for tests
// that check how each one reports a failure.
func calls(s *Store) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"List": func(ctx context.Context) error { _, err := s.List(ctx); return err },
		"SetQuantity": func(ctx context.Context) error {
			_, err := s.SetQuantity(ctx, 1, 2)
			return err
		},
		"Put": func(ctx context.Context) error {
			return s.Put(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold})
		},
		"Delete": func(ctx context.Context) error { return s.Delete(ctx, 1) },
		"PutIfEmpty": func(ctx context.Context) error {
			_, err := s.PutIfEmpty(ctx, inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold})
			return err
		},
		"Ping":  func(ctx context.Context) error { return s.Ping(ctx) },
		"Ready": func(ctx context.Context) error { return s.Ready(ctx) },
		"ListChanges": func(ctx context.Context) error {
			_, err := s.ListChanges(ctx, "1-1/7") // never a position, so a full read follows the XRANGE
			return err
		},
	}
}

// TestRedisErrorReplies: a Redis that answers "not now" (LOADING after a
// restart, READONLY during a failover, …) is unavailable; any other error
// reply is internal, never not found or success. A reply that says the
// client reaches the wrong kind of server (MOVED on a single-node client,
// an unknown command) is unavailable and misconfigured.
func TestRedisErrorReplies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reply         string
		unavailable   bool
		misconfigured bool
	}{
		{"LOADING Redis is loading the dataset in memory", true, false},
		{"READONLY You can't write against a read only replica.", true, false},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true, false},
		{"CLUSTERDOWN The cluster is down", true, false},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true, false},
		{"ERR max number of clients reached", true, false},
		{"NOAUTH Authentication required.", true, true},
		{"WRONGPASS invalid username-password pair or user is disabled.", true, true},
		{"NOPERM this user has no permissions to run the 'xadd' command", true, true},
		{"OOM command not allowed when used memory > 'maxmemory'.", true, true},
		{"ERR unknown command 'watch', with args beginning with: ", true, true},
		{"MOVED 1234 127.0.0.1:7000", true, true},
		{"ASK 1234 127.0.0.1:7000", true, true},
		{"ERR some other error", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.reply[:min(len(tc.reply), 12)], func(t *testing.T) {
			t.Parallel()
			m, c := miniClient(t)
			s := newTestStore(t, c, WithMaxRetries(0), WithLogger(discardLog))
			if err := s.Put(t.Context(), inventory.Item{PetID: 1, Quantity: 1, Status: inventory.StatusSold}); err != nil {
				t.Fatal(err) // connects before the replies turn bad
			}
			m.SetError(tc.reply)
			defer m.SetError("")
			for name, call := range calls(s) {
				err := call(t.Context())
				var ie *inventory.Error
				isOurs := errors.As(err, &ie)
				switch {
				case err == nil:
					t.Errorf("%s succeeded while Redis replies %q", name, tc.reply)
				case errors.Is(err, inventory.ErrNotFound):
					t.Errorf("%s = %v: a failure reported as not found", name, err)
				case tc.unavailable && !errors.Is(err, inventory.ErrUnavailable):
					t.Errorf("%s = %v, want unavailable", name, err)
				case !tc.unavailable && isOurs:
					t.Errorf("%s = %v (code %s), want a plain error, answered 500", name, err, ie.Code())
				case tc.misconfigured != errors.Is(err, ErrMisconfigured):
					t.Errorf("%s = %v; matches ErrMisconfigured: %v, want %v", name, err, !tc.misconfigured, tc.misconfigured)
				}
			}
		})
	}
}

// TestUnreachableRedis: New succeeds without Redis; every call against a
// port where nothing listens fails unavailable, wrapping the dial error.
func TestUnreachableRedis(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := storeAt(t, addr) // New must succeed with Redis down
	for name, call := range calls(s) {
		err := call(t.Context())
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s = %v, want unavailable wrapping connection refused", name, err)
		}
	}
}

// TestStalledRedis: a server that accepts connections and never answers.
// A call with a deadline fails unavailable once the deadline passes.
func TestStalledRedis(t *testing.T) {
	t.Parallel()
	s := storeAt(t, fakeServer(t, func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn); conn.Close() }))
	for name, call := range calls(s) {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		err := call(ctx)
		cancel()
		if !errors.Is(err, inventory.ErrUnavailable) {
			t.Errorf("%s = %v, want unavailable", name, err)
		}
	}
}

// TestHangUpRedis: a server that accepts connections and closes them at
// once, as a Redis that crashes mid-request does.
func TestHangUpRedis(t *testing.T) {
	t.Parallel()
	s := storeAt(t, fakeServer(t, func(conn net.Conn) { conn.Close() }))
	for name, call := range calls(s) {
		if err := call(t.Context()); !errors.Is(err, inventory.ErrUnavailable) {
			t.Errorf("%s = %v, want unavailable", name, err)
		}
	}
}

func TestClosedClient(t *testing.T) {
	_, c := miniClient(t)
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for name, call := range calls(s) {
		if err := call(t.Context()); !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, redis.ErrClosed) {
			t.Errorf("%s = %v, want unavailable wrapping redis.ErrClosed", name, err)
		}
	}
}

// TestTranslate covers the error values the tests above cannot provoke
// with a real server on demand.
func TestTranslate(t *testing.T) {
	opErr := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	unavailableErrs := []error{
		context.DeadlineExceeded,
		context.Canceled,
		fmt.Errorf("wrapped: %w", context.DeadlineExceeded),
		redis.ErrPoolTimeout,
		redis.ErrPoolExhausted,
		io.EOF,
		io.ErrUnexpectedEOF,
		net.ErrClosed,
		opErr(syscall.ECONNRESET),
		opErr(syscall.EPIPE),
		opErr(os.ErrDeadlineExceeded),
		&net.DNSError{Err: "no such host", Name: "redis.invalid", IsNotFound: true},
	}
	for _, cause := range unavailableErrs {
		err := translate("op", cause)
		if !errors.Is(err, inventory.ErrUnavailable) || !errors.Is(err, cause) {
			t.Errorf("translate(%v) = %v, want unavailable wrapping the cause", cause, err)
		}
	}
	if err := translate("op", redis.Nil); err != inventory.ErrNotFound {
		t.Errorf("translate(redis.Nil) = %v, want inventory.ErrNotFound", err)
	}
	if err := translate("op", nil); err != nil {
		t.Errorf("translate(nil) = %v", err)
	}
	for _, ours := range []error{corrupt("k", "f", "v", "a number"), inventory.Unavailable(errors.New("down"))} {
		if err := translate("op", ours); err != ours {
			t.Errorf("translate(%v) = %v, want it unchanged", ours, err)
		}
	}
	plain := errors.New("something else")
	err := translate("list", plain)
	var ie *inventory.Error
	if errors.As(err, &ie) || !errors.Is(err, plain) {
		t.Errorf("translate(%v) = %v, want a plain error wrapping it", plain, err)
	}
}

// fakeServer listens on a loopback port until the test ends, handing each
// connection to handle, and returns its address: a "Redis" that misbehaves.
func fakeServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go handle(conn)
		}
	}()
	return l.Addr().String()
}

// storeAt returns a store whose client talks to addr, with the store's
// own timeouts; New must succeed whether anything answers there or not.
func storeAt(t *testing.T, addr string) *Store {
	t.Helper()
	opts, err := optionsFromURL("redis://" + addr + "/0")
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(c)
	if err != nil {
		t.Fatalf("New = %v, want success whatever is at %s", err, addr)
	}
	return s
}

func TestGoRedisLogger(t *testing.T) {
	var b strings.Builder
	l := NewGoRedisLogger(slog.New(slog.NewTextHandler(&b, nil)))
	l.Printf(t.Context(), "sentinel: new master=%q addr=%q", "shop", "127.0.0.1:7000")
	l.Printf(t.Context(), "sentinel: GetMasterAddrByName name=%q failed: %s", "shop", "i/o timeout")
	got := b.String()
	if !strings.Contains(got, `level=INFO msg="go-redis: sentinel: new master=`) ||
		!strings.Contains(got, `level=WARN msg="go-redis: sentinel: GetMasterAddrByName`) {
		t.Errorf("log:\n%s\nwant the new master at INFO and the failure at WARN", got)
	}

	// The same failure again, as go-redis retries a dial: Debug, not a
	// WARN line a second.
	b.Reset()
	dbg := NewGoRedisLogger(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for range 3 { // alternating, as go-redis does with two sentinels
		dbg.Printf(t.Context(), "redis: connection pool: failed to dial after %d attempts: %s", 5, "connection refused")
		dbg.Printf(t.Context(), "sentinel: %s failed: %s", "127.0.0.1:26380", "WRONGPASS")
	}
	dbg.Printf(t.Context(), "redis: connection pool: failed to dial after %d attempts: %s", 5, "x509: unknown authority")
	got = b.String()
	if strings.Count(got, "level=WARN") != 3 || strings.Count(got, "level=DEBUG") != 4 || !strings.Contains(got, `level=WARN msg="go-redis: redis: connection pool: failed to dial after 5 attempts: x509`) {
		t.Errorf("log:\n%s\nwant the first of each repeated failure and the other failure at WARN, the four repeats at DEBUG", got)
	}

	// A refused command (go-redis asking for COMMAND as a user without
	// +command) is a failure to see, not routine.
	b.Reset()
	l.Printf(t.Context(), "getting command info: %s", "NOPERM this user has no permissions to run the 'command' command")
	if got := b.String(); !strings.Contains(got, "level=WARN") {
		t.Errorf("log:\n%s\nwant NOPERM at WARN", got)
	}

	// Once the quiet time is over (a nanosecond here, a minute by
	// default), the next occurrence is warned about with the count held
	// back (2 of the 3 above).
	b.Reset()
	dbg.gate.Interval = time.Nanosecond
	dbg.Printf(t.Context(), "sentinel: %s failed: %s", "127.0.0.1:26380", "WRONGPASS")
	if got := b.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "repeated=2") {
		t.Errorf("log:\n%s\nwant the failure warned about again with the count of repeats", got)
	}
}

// TestGoRedisLoggerBrokenConnections: go-redis's lines about a connection
// that broke under it differ by port and wording; they are warned about
// once, in the store's words, and counted, never printed raw above Debug.
func TestGoRedisLoggerBrokenConnections(t *testing.T) {
	var b strings.Builder
	l := NewGoRedisLogger(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	lines := []string{
		"push: pre-command drain failed, retiring conn: read tcp 127.0.0.1:41234->127.0.0.1:6379: read: connection reset by peer",
		"push: pre-command drain failed, retiring conn: read tcp 127.0.0.1:41240->127.0.0.1:6379: read: connection reset by peer",
		"push: error processing pending notifications before reading reply: redis: connection unusable (reply stream desynchronized)",
		"redis: Conn is in a bad state: EOF",
	}
	for _, line := range lines {
		l.Printf(t.Context(), "%s", line)
	}
	got := b.String()
	if n := strings.Count(got, "level=WARN"); n != 1 || !strings.Contains(got, "connections to Redis were closed under it") {
		t.Errorf("log:\n%s\nwant one WARN line in the store's words for %d lines about broken connections, got %d", got, len(lines), n)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if strings.Contains(line, "level=WARN") && (strings.Contains(line, "41234") || strings.Contains(line, "drain failed")) {
			t.Errorf("a raw go-redis line warned about: %s", line)
		}
	}
	if n := strings.Count(got, "level=DEBUG"); n != len(lines)-1 {
		t.Errorf("log:\n%s\nwant the %d repeats at DEBUG, got %d", got, len(lines)-1, n)
	}
	b.Reset()
	l.gate.Interval = time.Nanosecond
	l.Printf(t.Context(), "%s", lines[0])
	if got := b.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "repeated=3") {
		t.Errorf("log:\n%s\nwant the cut warned about again with the count of the 3 held back", got)
	}
	// A dial that fails is no broken connection: it keeps its own line.
	b.Reset()
	l.Printf(t.Context(), "redis: connection pool: failed to dial after %d attempts: %s", 3, "dial tcp 127.0.0.1:1: connect: connection refused")
	if got := b.String(); !strings.Contains(got, "failed to dial") || !strings.Contains(got, "level=WARN") {
		t.Errorf("log:\n%s\nwant a dial failure warned about in go-redis's words", got)
	}
}

// reply is an error reply of Redis as go-redis returns it (redis.Error).
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// TestReplyChecks: each named check of errors.go tells its replies, as
// Redis 7 words them, wrapped or not, and no other reply or error.
func TestReplyChecks(t *testing.T) {
	checks := map[string]func(error) bool{
		"isDemoted": isDemoted, "isRedirect": isRedirect, "isExecAbort": isExecAbort, "isNoPerm": isNoPerm,
	}
	cases := []struct {
		err  error
		want string // the one check that tells it, "" for none
	}{
		{reply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"), "isDemoted"},
		{reply("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."), "isDemoted"},
		{reply("READONLY You can't write against a read only replica."), "isDemoted"},
		{reply("MOVED 3999 127.0.0.1:6381"), "isRedirect"},
		{reply("ASK 3999 127.0.0.1:6381"), "isRedirect"},
		{reply("EXECABORT Transaction discarded because of previous errors."), "isExecAbort"},
		{reply("NOPERM User u has no permissions to run the 'xadd' command"), "isNoPerm"},
		{reply("UNBLOCKED client unblocked via CLIENT UNBLOCK"), ""},
		{reply("ERR unknown command 'wait'"), ""},
		{errors.New("MOVED 3999 127.0.0.1:6381 said by no Redis"), ""},
		{io.EOF, ""},
		{nil, ""},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			if c.err == nil && err != nil {
				continue
			}
			for name, check := range checks {
				if got := check(err); got != (name == c.want) {
					t.Errorf("%s(%v) = %v", name, err, got)
				}
			}
		}
	}
	if err := translate("set quantity", reply("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")); !errors.Is(err, inventory.ErrUnavailable) {
		t.Errorf("translate of a blocked command's answer when its master was demoted = %v, want unavailable", err)
	}
}
