package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/petinventory/petinventory/examples/internal/demo"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

func main() {
	log := demo.Logger()
	addr := flag.String("addr", "127.0.0.1:18093", "listen address")
	bodyFile := flag.String("body", "", "file whose bytes GET /v1/inventory answers, a JSON array of items (required)")
	gzipFile := flag.String("gzip-body", "", "file whose bytes a list accepting gzip answers; it must decode to -body (default: -body compressed at start)")
	prefix := flag.String("redis-prefix", "", "prefix of the yardstick's own Redis keys; must hold no items yet (required)")
	flag.Parse()
	ctx, stop := demo.SignalContext()
	defer stop()
	if err := run(ctx, log, *addr, *bodyFile, *gzipFile, *prefix, os.Getenv("REDIS_URL"), os.Getenv("INVENTORY_API_KEYS")); err != nil {
		log.Error("yardstick", "error", err)
		os.Exit(1)
	}
}

// Settings of the write path: those of the store it stands for.
const (
	timeout    = 2 * time.Second // the API's default store timeout
	maxRetries = 10              // WATCH aborts before giving up with 503
	seedChunk  = 1000            // fields per HSET while seeding
	logMaxLen  = 10000           // XADD MAXLEN ~
)

func run(ctx context.Context, log *slog.Logger, addr, bodyFile, gzipFile, prefix, redisURL, apiKeys string) error {
	if bodyFile == "" || prefix == "" {
		return errors.New("-body FILE and -redis-prefix P are required")
	}
	if redisURL == "" {
		return errors.New("REDIS_URL is not set: the yardstick writes to a real Redis, as the server it is compared with")
	}
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	var items []inventory.Item
	if err := json.Unmarshal(body, &items); err != nil {
		return fmt.Errorf("-body %s: want the JSON array of items examples/redis answers: %w", bodyFile, err)
	}
	auth, err := inventory.NewKeyAuthenticator(strings.Split(apiKeys, ",")...)
	if err != nil {
		return fmt.Errorf("INVENTORY_API_KEYS: %w", err)
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	// Named, so that the load script can tell its commands from the
	// library's in SLOWLOG.
	opts.ClientName = "yardstick"
	client := redis.NewClient(opts)
	defer client.Close()
	y, err := newYardstick(client, prefix, body, auth)
	if err != nil {
		return err
	}
	if gzipFile != "" {
		gz, err := os.ReadFile(gzipFile)
		if err != nil {
			return err
		}
		if err := y.setGzip(gz); err != nil {
			return fmt.Errorf("-gzip-body %s: %w", gzipFile, err)
		}
	}
	if err := y.seed(ctx, items); err != nil {
		return err
	}
	ln, err := demo.Listen(addr)
	if err != nil {
		return err
	}
	log.Info("serving fixed bytes and updates through Redis", "addr", ln.Addr().String(), "bytes", len(body), "gzip_bytes", len(y.gzipBody), "items", len(items), "prefix", prefix)
	if err := demo.ServeHTTP(ctx, log, ln, y.engine()); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// yardstick holds what both routes need.
type yardstick struct {
	client           redis.UniversalClient
	auth             inventory.Authenticator
	body             []byte
	length           string
	gzipBody         []byte // body, gzip-compressed
	gzipLength       string
	itemsKey, logKey string
	guardBase, nonce string

	// beforeExec, when set (by tests), runs between the read and the
	// MULTI/EXEC of every attempt of a write.
	beforeExec func(id int64)
}

func newYardstick(client redis.UniversalClient, prefix string, body []byte, auth inventory.Authenticator) (*yardstick, error) {
	n := make([]byte, 8)
	if _, err := rand.Read(n); err != nil {
		return nil, fmt.Errorf("the stream's nonce: %w", err)
	}
	tag := "{" + prefix + "}:"
	y := &yardstick{
		client: client, auth: auth, body: body, length: strconv.Itoa(len(body)),
		itemsKey: tag + "items", logKey: tag + "log", guardBase: tag + "guard:",
		nonce: hex.EncodeToString(n),
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(body)
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the body: %w", err)
	}
	y.gzipBody, y.gzipLength = gz.Bytes(), strconv.Itoa(gz.Len())
	return y, nil
}

// setGzip makes gz the bytes of a gzip list, after checking that it
// decodes to the identity body.
func (y *yardstick) setGzip(gz []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	if !bytes.Equal(plain, y.body) {
		return errors.New("it does not decode to the identity body")
	}
	y.gzipBody, y.gzipLength = gz, strconv.Itoa(len(gz))
	return nil
}

// seed writes items into the items hash in chunks, after checking that
// the prefix holds none (a leftover of an earlier run would make the
// updates find pets the list does not show).
func (y *yardstick) seed(ctx context.Context, items []inventory.Item) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, err := y.client.Exists(ctx, y.itemsKey, y.logKey).Result()
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("seeding: %s or %s already exists; give the yardstick a fresh -redis-prefix", y.itemsKey, y.logKey)
	}
	args := make([]any, 0, 2*seedChunk)
	for i, it := range items {
		args = append(args, strconv.FormatInt(it.PetID, 10), strconv.Itoa(it.Quantity)+":"+string(it.Status))
		if len(args) == 2*seedChunk || i == len(items)-1 {
			if err := y.client.HSet(ctx, y.itemsKey, args...).Err(); err != nil {
				return fmt.Errorf("seeding: %w", err)
			}
			args = args[:0]
		}
	}
	return nil
}

func (y *yardstick) engine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.Use(gin.Recovery())
	engine.GET("/v1/inventory", y.list)
	engine.PATCH("/v1/inventory/:id", y.update)
	return engine
}

// list answers the fixed bytes. A list that accepts gzip or carries
// If-None-Match first makes one Redis round trip (the last entry of the
// change stream, what showing every write answered before it costs at
// least) and derives its ETag from that entry; it then answers 304 when
// a tag matches, or the gzip or identity bytes from memory.
func (y *yardstick) list(c *gin.Context) {
	if !y.authorized(c) {
		return
	}
	h := c.Request.Header
	gz := acceptsGzip(h.Get("Accept-Encoding"))
	inm := h.Get("If-None-Match")
	if !gz && inm == "" {
		c.Header("Cache-Control", "no-store")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Header("Content-Length", y.length)
		c.Data(http.StatusOK, "application/json", y.body)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
	defer cancel()
	last, err := y.client.XRevRangeN(ctx, y.logKey, "+", "-", 1).Result()
	if err != nil {
		answer(c, http.StatusServiceUnavailable, `{"code":"unavailable"}`)
		return
	}
	id := "0-0"
	if len(last) > 0 {
		id = last[0].ID
	}
	tag := `"` + id
	if gz {
		tag += "-gzip"
	}
	tag += `"`
	c.Header("ETag", tag)
	c.Header("Vary", "Accept-Encoding")
	c.Header("Cache-Control", "private, no-cache")
	c.Header("X-Content-Type-Options", "nosniff")
	if inm == "*" || slices.Contains(strings.Split(strings.ReplaceAll(inm, " ", ""), ","), tag) {
		c.Status(http.StatusNotModified)
		return
	}
	if !gz {
		c.Header("Content-Length", y.length)
		c.Data(http.StatusOK, "application/json", y.body)
		return
	}
	c.Header("Content-Encoding", "gzip")
	c.Header("Content-Length", y.gzipLength)
	c.Data(http.StatusOK, "application/json", y.gzipBody)
}

// acceptsGzip says whether an Accept-Encoding value names gzip (or
// x-gzip, or *) with a q-value other than 0.
func acceptsGzip(v string) bool {
	for _, part := range strings.Split(v, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(val, 64); err == nil {
					q = f
				}
			}
		}
		return q > 0
	}
	return false
}

// authorized checks the bearer key as the library does, and answers 401
// when it is wrong.
func (y *yardstick) authorized(c *gin.Context) bool {
	scheme, key, _ := strings.Cut(c.Request.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "Bearer") && y.auth.Authenticate(c.Request.Context(), key) == nil {
		return true
	}
	answer(c, http.StatusUnauthorized, `{"code":"unauthorized"}`)
	return false
}

func answer(c *gin.Context, status int, body string) {
	c.Header("Cache-Control", "no-store")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(status, "application/json", []byte(body))
}

// errNoPet is the transaction's "the pet is not in the inventory".
var errNoPet = errors.New("no such pet")

func (y *yardstick) update(c *gin.Context) {
	if !y.authorized(c) {
		return
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		answer(c, http.StatusBadRequest, `{"code":"invalid_pet_id"}`)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, 1<<10))
	var req struct {
		Quantity *int `json:"quantity"`
	}
	if err != nil || json.Unmarshal(raw, &req) != nil || req.Quantity == nil || *req.Quantity < 0 || *req.Quantity > inventory.MaxQuantity {
		answer(c, http.StatusBadRequest, `{"code":"invalid_body"}`)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
	defer cancel()
	item, err := y.setQuantity(ctx, id, *req.Quantity)
	switch {
	case errors.Is(err, errNoPet):
		answer(c, http.StatusNotFound, `{"code":"not_found"}`)
	case err != nil:
		answer(c, http.StatusServiceUnavailable, `{"code":"unavailable"}`)
	default:
		b := fmt.Appendf(nil, `{"petId":%d,"quantity":%d,"status":"%s"}`, item.PetID, item.Quantity, item.Status)
		c.Header("Cache-Control", "no-store")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Data(http.StatusOK, "application/json", b)
	}
}

// setQuantity is the store's write: WATCH the pet's guard, read its
// entry, then set it and append the change to the stream in one
// MULTI/EXEC, retried when the guard changed in between.
func (y *yardstick) setQuantity(ctx context.Context, id int64, qty int) (inventory.Item, error) {
	field := strconv.FormatInt(id, 10)
	var item inventory.Item
	txf := func(tx *redis.Tx) error {
		v, err := tx.HGet(ctx, y.itemsKey, field).Result()
		if errors.Is(err, redis.Nil) {
			return errNoPet
		}
		if err != nil {
			return err
		}
		_, status, ok := strings.Cut(v, ":")
		if !ok {
			return fmt.Errorf("pet %d: entry %q is not <quantity>:<status>", id, v)
		}
		item = inventory.Item{PetID: id, Quantity: qty, Status: inventory.Status(status)}
		val := strconv.Itoa(qty) + ":" + status
		if y.beforeExec != nil {
			y.beforeExec(id)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, y.itemsKey, field, val)
			p.XAdd(ctx, &redis.XAddArgs{Stream: y.logKey, MaxLen: logMaxLen, Approx: true,
				Values: []any{"n", y.nonce, "op", "set", "d", field + ":" + val}})
			return nil
		})
		return err
	}
	for range maxRetries {
		err := y.client.Watch(ctx, txf, y.guardBase+field)
		if !errors.Is(err, redis.TxFailedErr) {
			return item, err
		}
	}
	return item, fmt.Errorf("pet %d: the transaction aborted %d times", id, maxRetries)
}
