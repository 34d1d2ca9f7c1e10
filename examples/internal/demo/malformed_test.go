package demo

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/internal/benchfix"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
	inventorygin "github.com/petinventory/petinventory/transport/gin"
)

const testKey = "demo-malformed-test-key-7d21"

// malformedHeads carry the demo's key (benchfix.MalformedHeads).
var malformedHeads = benchfix.MalformedHeads(testKey)

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
			logs := &proctest.Buffer{}
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
				answer := benchfix.RawAnswer(t, ln.Addr().String(), head)
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
