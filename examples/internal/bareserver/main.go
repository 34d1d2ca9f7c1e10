// Command bareserver is the baseline of the list load test
// (scripts/bench/list-load.sh): a Gin server set up as examples/redis sets
// up its engine (gin.New with Recovery, served by demo.ServeHTTP with the
// same timeouts), whose GET /v1/inventory checks the bearer key with a
// plain comparison and writes fixed bytes read at start, with the headers
// the inventory API sends with an identity list. It is the least a Gin handler can do to give
// the same answer, so "library req/s ÷ bareserver req/s" is the fraction
// the library keeps. With -gzip the engine uses gin-contrib/gzip, as a team
// would put it in front of a handler to compress the list: it compresses
// the whole body again for every request that accepts gzip. It is a
// measuring tool, not an example to copy.
//
//	INVENTORY_API_KEYS=KEY bareserver -addr 127.0.0.1:18090 -body list.json [-gzip]
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gin-contrib/gzip"
	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/examples/internal/demo"
)

func main() {
	log := demo.Logger()
	addr := flag.String("addr", "127.0.0.1:18090", "listen address")
	bodyFile := flag.String("body", "", "file whose bytes GET /v1/inventory answers (required)")
	gz := flag.Bool("gzip", false, "compress answers with gin-contrib/gzip (default level) when the request accepts gzip")
	flag.Parse()
	if err := run(*addr, *bodyFile, *gz); err != nil {
		log.Error("bareserver", "error", err)
		os.Exit(1)
	}
}

func run(addr, bodyFile string, gz bool) error {
	if bodyFile == "" {
		return errors.New("-body FILE is required: the bytes to answer GET /v1/inventory with")
	}
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	key, _, _ := strings.Cut(os.Getenv("INVENTORY_API_KEYS"), ",")
	if key == "" {
		return errors.New("INVENTORY_API_KEYS is not set: the bare server checks one bearer key, as the library does")
	}
	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log := demo.Logger()
	log.Info("serving fixed bytes", "addr", ln.Addr().String(), "bytes", len(body), "file", bodyFile, "gzip", gz)
	ctx, stop := demo.SignalContext()
	defer stop()
	if err := demo.ServeHTTP(ctx, log, ln, newEngine(body, key, gz)); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// newEngine answers GET /v1/inventory with body for the bearer key, behind
// gin-contrib/gzip when gz is set.
func newEngine(body []byte, key string, gz bool) *gin.Engine {
	bearer := "Bearer " + key
	length := strconv.Itoa(len(body))
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"` // as long as the API's list tag

	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	if gz {
		engine.Use(gzip.Gzip(gzip.DefaultCompression))
	}
	engine.GET("/v1/inventory", func(c *gin.Context) {
		if c.Request.Header.Get("Authorization") != bearer {
			c.Status(http.StatusUnauthorized)
			return
		}
		c.Header("Cache-Control", "private, no-cache")
		c.Header("Etag", etag)
		c.Header("Vary", "Accept-Encoding")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Header("Content-Length", length)
		c.Data(http.StatusOK, "application/json", body)
	})
	return engine
}
