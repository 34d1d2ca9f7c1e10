package demo

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

const testKey = "demo-malformed-test-key-7d21"

// malformedHeads are request heads no HTTP parser accepts, each carrying
// the key.
var malformedHeads = map[string]string{
	"control byte in a value":       "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testKey + "\r\nX-Probe: a\x01b\r\n\r\n",
	"NUL in a value":                "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testKey + "\r\nX-Probe: a\x00b\r\n\r\n",
	"control byte in Authorization": "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testKey + "\x01\r\n\r\n",
	"invalid header name":           "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testKey + "\r\nX Pro(be): x\r\n\r\n",
	"bad request line":              "GET /v1/inventory HTTP/1.1 extra\r\nHost: x\r\nAuthorization: Bearer " + testKey + "\r\n\r\n",
}

// syncBuffer is a log the servers write from their goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMalformedHeadsNoEcho: the examples' Gin, Fiber and net/http servers
// (the embedding recipes: ServeHTTP, NewFiberApp and ServeFiber) answer
// each malformed head with a plain 400 that does not repeat the key, and
// log no line holding it.
func TestMalformedHeadsNoEcho(t *testing.T) {
	store, err := memstore.New(Items()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, fw := range []string{"gin", "fiber", "net/http"} {
		t.Run(strings.ReplaceAll(fw, "/", ""), func(t *testing.T) {
			logs := &syncBuffer{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			api, err := inventory.New(store, inventory.WithAPIKeys(testKey), inventory.WithLogger(log))
			if err != nil {
				t.Fatal(err)
			}
			ln, err := Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			switch fw {
			case "gin":
				gin.SetMode(gin.ReleaseMode)
				engine := gin.New()
				if err := inventorygin.Register(engine.Group("/v1"), api); err != nil {
					t.Fatal(err)
				}
				go func() { done <- ServeHTTP(ctx, log, ln, engine) }()
			case "fiber":
				app := NewFiberApp()
				if err := inventoryfiber.Register(app.Group("/v1"), api); err != nil {
					t.Fatal(err)
				}
				if err := inventoryfiber.ServeOtherMethods(app, api, "/v1"); err != nil {
					t.Fatal(err)
				}
				go func() { done <- ServeFiber(ctx, log, ln, app) }()
			default:
				mux := http.NewServeMux()
				if err := api.Register(mux, "/v1"); err != nil {
					t.Fatal(err)
				}
				go func() { done <- ServeHTTP(ctx, log, ln, mux) }()
			}
			for what, head := range malformedHeads {
				answer := rawAnswer(t, ln.Addr().String(), head)
				if strings.Contains(answer, testKey) {
					t.Errorf("%s: the answer repeats the key: %q", what, answer)
				}
				if !strings.HasPrefix(answer, "HTTP/1.1 400 ") {
					t.Errorf("%s: %q, want a 400", what, answer)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serving: %v", err)
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("the log holds the key:\n%s", logs.String())
			}
		})
	}
}

// rawAnswer writes head on a connection of its own and returns all that
// comes back until the server closes (5 s at most).
func rawAnswer(t *testing.T, addr, head string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(conn)
	return string(b)
}
