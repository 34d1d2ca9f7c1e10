// Command loadgen puts load on a running inventory API, whatever serves it
// (net/http, Gin or Fiber; memory or Redis), and reports throughput,
// latency percentiles and every status it got:
//
//	INVENTORY_API_KEY=… go run ./examples/loadgen -base-url http://127.0.0.1:8081/v1 \
//	    -mix list=1,update=9 -connections 16 -duration 30s
//
// It is a closed-loop generator: each of -connections workers sends a
// request, waits for the answer, and sends the next, over one shared
// http.Transport that holds at most that many connections. With -rate R
// the workers instead send on a fixed schedule of R requests per second
// and a latency is measured from when its request was due, so a server
// that falls behind shows it in the percentiles (no coordinated omission).
//
// With -gzip the lists accept gzip and their bodies are counted as they
// come over the wire (not decompressed); with -conditional each worker
// revalidates its last list with If-None-Match and a 304 is an answer.
//
// Percentiles are exact: every latency is kept (8 bytes per request).
// It exits 1 when any request got a status other than 200 (or 304 to a
// conditional list) or failed in transport, and 2 on a usage error. See
// README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// usageError is a mistake in the flags: exit status 2.
type usageError struct{ error }

// The operations a mix can weigh.
const (
	opList = iota
	opUpdate
	opCount
)

var opNames = [opCount]string{"list", "update"}

type config struct {
	baseURL     string // without a trailing slash
	apiKey      string
	weights     [opCount]int
	connections int
	duration    time.Duration
	rate        float64
	pets        []int64
	timeout     time.Duration
	gzip        bool // lists send Accept-Encoding: gzip
	conditional bool // lists send If-None-Match with the worker's last ETag
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	var mix, pets string
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.baseURL, "base-url", "", "base URL of the API, version segment included (http://127.0.0.1:8081/v1)")
	fs.StringVar(&c.apiKey, "api-key", os.Getenv("INVENTORY_API_KEY"), "API key (default $INVENTORY_API_KEY)")
	fs.StringVar(&mix, "mix", "list=1,update=9", "relative weights of the requests: list=W,update=W")
	fs.IntVar(&c.connections, "connections", 8, "concurrent connections (one worker each)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to send requests")
	fs.Float64Var(&c.rate, "rate", 0, "requests per second over all connections; 0 sends as fast as the server answers")
	fs.StringVar(&pets, "pets", "", "comma-separated pet ids to update (default: every pet of one list call)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "timeout of one request")
	fs.BoolVar(&c.gzip, "gzip", false, "lists send Accept-Encoding: gzip; bodies are counted as sent, not decompressed")
	fs.BoolVar(&c.conditional, "conditional", false, "lists send If-None-Match with the ETag of the worker's last list answer; 304 counts as answered")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, usageError{err}
	}
	if fs.NArg() > 0 {
		return c, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}

	u, err := url.Parse(c.baseURL)
	if c.baseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, usageError{fmt.Errorf("-base-url %q: want an absolute http(s) URL such as http://127.0.0.1:8081/v1", c.baseURL)}
	}
	c.baseURL = strings.TrimSuffix(c.baseURL, "/")
	if c.apiKey == "" {
		return c, usageError{errors.New("no API key: pass -api-key or set INVENTORY_API_KEY")}
	}
	if c.weights, err = parseMix(mix); err != nil {
		return c, usageError{err}
	}
	if c.connections < 1 {
		return c, usageError{fmt.Errorf("-connections %d: want at least 1", c.connections)}
	}
	if c.duration <= 0 {
		return c, usageError{fmt.Errorf("-duration %v: want a positive duration", c.duration)}
	}
	if c.rate < 0 || math.IsNaN(c.rate) || math.IsInf(c.rate, 0) {
		return c, usageError{fmt.Errorf("-rate %v: want 0 (as fast as possible) or a positive number", c.rate)}
	}
	if c.timeout <= 0 {
		return c, usageError{fmt.Errorf("-timeout %v: want a positive duration", c.timeout)}
	}
	if pets != "" {
		for _, s := range strings.Split(pets, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return c, usageError{fmt.Errorf("-pets: %q is not a pet id", s)}
			}
			c.pets = append(c.pets, id)
		}
	}
	return c, nil
}

// parseMix reads "list=1,update=9".
func parseMix(s string) ([opCount]int, error) {
	var w [opCount]int
	seen := [opCount]bool{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		op := slices.Index(opNames[:], name)
		if !ok || op < 0 {
			return w, fmt.Errorf("-mix %q: want list=W,update=W", s)
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return w, fmt.Errorf("-mix %q: weight of %s must be a whole number ≥ 0", s, name)
		}
		if seen[op] {
			return w, fmt.Errorf("-mix %q: %s given twice", s, name)
		}
		seen[op] = true
		w[op] = n
	}
	if w[opList]+w[opUpdate] == 0 {
		return w, fmt.Errorf("-mix %q: every weight is 0", s)
	}
	return w, nil
}

func run(args []string, stdout io.Writer) error {
	c, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// One transport for every worker, sized so that each worker keeps its
	// own connection alive and no more are opened.
	tr := &http.Transport{
		Proxy:               nil, // measure the server, not a proxy
		MaxIdleConns:        c.connections,
		MaxIdleConnsPerHost: c.connections,
		MaxConnsPerHost:     c.connections,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		Timeout:   c.timeout,
		// A redirect is an unexpected answer, not something to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	g := &generator{cfg: c, client: client, listURL: c.baseURL + "/inventory"}

	if c.weights[opUpdate] > 0 && len(c.pets) == 0 {
		if g.cfg.pets, err = g.discoverPets(ctx); err != nil {
			return err
		}
		if len(g.cfg.pets) == 0 {
			return errors.New("the inventory is empty: there is no pet to update (seed it, or set -mix list=1,update=0)")
		}
	}
	g.itemURLs = make([]string, len(g.cfg.pets))
	for i, id := range g.cfg.pets {
		g.itemURLs[i] = c.baseURL + "/inventory/" + strconv.FormatInt(id, 10)
	}

	rep := g.run(ctx)
	rep.cfg = g.cfg
	rep.print(stdout, g.cfg)
	return rep.verdict()
}

type generator struct {
	cfg      config
	client   *http.Client
	listURL  string
	itemURLs []string
}

// discoverPets lists the inventory once to learn which pets to update.
func (g *generator) discoverPets(ctx context.Context) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.timeout)
	defer cancel()
	req, err := g.newRequest(ctx, opList, nil)
	if err != nil {
		return nil, err
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing the inventory to find pets: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("listing the inventory to find pets: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing the inventory to find pets: status %d: %s", resp.StatusCode, prefix(body))
	}
	var items []inventory.Item
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, fmt.Errorf("listing the inventory to find pets: the body is not a JSON array of items: %w", err)
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.PetID
	}
	return ids, nil
}

func (g *generator) newRequest(ctx context.Context, op int, rng *rand.Rand) (*http.Request, error) {
	if op == opList {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.listURL, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+g.cfg.apiKey)
		return req, nil
	}
	target := g.itemURLs[rng.IntN(len(g.itemURLs))]
	body := fmt.Sprintf(`{"quantity":%d}`, rng.IntN(inventory.MaxQuantity+1))
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+g.cfg.apiKey)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// workerStats is what one worker saw; merged when all are done.
type workerStats struct {
	latencies []time.Duration
	status    [opCount]map[int]int
	samples   map[int]string // a body prefix for each unexpected status
	errors    map[string]int
	lists     listStats
	etag      string // of the worker's last list answer, for -conditional
}

// listStats counts what the list answers cost on the wire.
type listStats struct {
	bodies      int   // 200 answers
	bytes       int64 // their body bytes as received (compressed or not)
	gzip        int   // of them with Content-Encoding: gzip
	tagged      int   // of them with an ETag
	conditional int   // lists sent with If-None-Match
}

func (l *listStats) add(o listStats) {
	l.bodies += o.bodies
	l.bytes += o.bytes
	l.gzip += o.gzip
	l.tagged += o.tagged
	l.conditional += o.conditional
}

func newWorkerStats() *workerStats {
	s := &workerStats{latencies: make([]time.Duration, 0, 1<<14), samples: map[int]string{}, errors: map[string]int{}}
	for i := range s.status {
		s.status[i] = map[int]int{}
	}
	return s
}

// run sends requests from every worker until the duration is over (or ctx
// is cancelled) and returns what they saw. Requests in flight at the end
// are waited for, up to the timeout, so that none is counted as an error.
func (g *generator) run(ctx context.Context) *report {
	start := time.Now()
	end := start.Add(g.cfg.duration)
	var slot atomic.Int64 // next scheduled request, with -rate
	stats := make([]*workerStats, g.cfg.connections)
	var wg sync.WaitGroup
	for w := range stats {
		stats[w] = newWorkerStats()
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
		wg.Add(1)
		go func(st *workerStats) {
			defer wg.Done()
			for ctx.Err() == nil {
				due := time.Now()
				if g.cfg.rate > 0 {
					k := slot.Add(1) - 1
					due = start.Add(time.Duration(float64(k) / g.cfg.rate * float64(time.Second)))
					if !due.Before(end) {
						return
					}
					if d := time.Until(due); d > 0 {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return
						}
					}
				} else if !due.Before(end) {
					return
				}
				g.once(st, rng, due)
			}
		}(stats[w])
	}
	wg.Wait()
	return merge(stats, time.Since(start))
}

// once sends one request and records its outcome and its latency, from
// due (when it was meant to be sent) to the end of its body.
func (g *generator) once(st *workerStats, rng *rand.Rand, due time.Time) {
	op := opList
	if rng.IntN(g.cfg.weights[opList]+g.cfg.weights[opUpdate]) >= g.cfg.weights[opList] {
		op = opUpdate
	}
	req, err := g.newRequest(context.Background(), op, rng)
	if err != nil {
		st.errors[errorKind(err)]++
		return
	}
	if op == opList {
		// Set by hand, the header also stops the transport from
		// decompressing: the bytes read are those on the wire.
		if g.cfg.gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		if g.cfg.conditional && st.etag != "" {
			req.Header.Set("If-None-Match", st.etag)
			st.lists.conditional++
		}
	}
	resp, err := g.client.Do(req)
	if err != nil {
		st.errors[errorKind(err)]++
		return
	}
	var sample []byte
	if !expected(g.cfg, op, resp.StatusCode) {
		sample, _ = io.ReadAll(io.LimitReader(resp.Body, 200))
	}
	n, err := io.Copy(io.Discard, resp.Body) // read it all, to reuse the connection
	resp.Body.Close()
	if err != nil {
		st.errors[errorKind(err)]++
		return
	}
	st.latencies = append(st.latencies, time.Since(due))
	st.status[op][resp.StatusCode]++
	if op == opList && resp.StatusCode == http.StatusOK {
		st.lists.bodies++
		st.lists.bytes += int64(len(sample)) + n
		if resp.Header.Get("Content-Encoding") == "gzip" {
			st.lists.gzip++
		}
		if tag := resp.Header.Get("ETag"); tag != "" {
			st.lists.tagged++
			st.etag = tag
		}
	}
	if sample != nil {
		if _, ok := st.samples[resp.StatusCode]; !ok {
			st.samples[resp.StatusCode] = prefix(sample)
		}
	}
}

type report struct {
	elapsed   time.Duration
	latencies []time.Duration // sorted
	status    [opCount]map[int]int
	samples   map[int]string
	errors    map[string]int
	lists     listStats
	cfg       config
}

// expected says whether status is a right answer to op: 200, or 304 to
// a list sent with If-None-Match.
func expected(c config, op, status int) bool {
	return status == http.StatusOK || (op == opList && c.conditional && status == http.StatusNotModified)
}

func merge(stats []*workerStats, elapsed time.Duration) *report {
	r := &report{elapsed: elapsed, samples: map[int]string{}, errors: map[string]int{}}
	for i := range r.status {
		r.status[i] = map[int]int{}
	}
	for _, st := range stats {
		r.latencies = append(r.latencies, st.latencies...)
		for op := range st.status {
			for code, n := range st.status[op] {
				r.status[op][code] += n
			}
		}
		for code, s := range st.samples {
			if _, ok := r.samples[code]; !ok {
				r.samples[code] = s
			}
		}
		for e, n := range st.errors {
			r.errors[e] += n
		}
		r.lists.add(st.lists)
	}
	slices.Sort(r.latencies)
	return r
}

// percentile is the exact q-quantile of the sorted latencies (nearest
// rank).
func (r *report) percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(r.latencies)))) - 1
	return r.latencies[max(i, 0)]
}

func (r *report) counts() (answered, unexpected, failed int) {
	for op := range r.status {
		for code, n := range r.status[op] {
			answered += n
			if !expected(r.cfg, op, code) {
				unexpected += n
			}
		}
	}
	for _, n := range r.errors {
		failed += n
	}
	return answered, unexpected, failed
}

func (r *report) print(w io.Writer, c config) {
	answered, _, failed := r.counts()
	rate := "as fast as answered"
	if c.rate > 0 {
		rate = fmt.Sprintf("%g/s scheduled, latency from when each request was due", c.rate)
	}
	fmt.Fprintf(w, "target       %s (mix list=%d,update=%d; %d connections; %v; rate %s; %d pets)\n",
		c.baseURL, c.weights[opList], c.weights[opUpdate], c.connections, c.duration, rate, len(c.pets))
	fmt.Fprintf(w, "requests     %d answered, %d failed in %.2fs: %.1f req/s\n",
		answered, failed, r.elapsed.Seconds(), float64(answered)/r.elapsed.Seconds())
	fmt.Fprintf(w, "latency      p50 %v  p99 %v  p99.9 %v  max %v\n",
		r.percentile(0.50), r.percentile(0.99), r.percentile(0.999), r.percentile(1))
	// The same in milliseconds with p90 added, for scripts (the line
	// above is kept as it was for those that read it).
	ms := func(q float64) float64 { return float64(r.percentile(q)) / 1e6 }
	fmt.Fprintf(w, "quantiles    p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f ms\n",
		ms(0.50), ms(0.90), ms(0.99), ms(0.999), ms(1))
	for op := range r.status {
		codes := make([]int, 0, len(r.status[op]))
		total := 0
		for code, n := range r.status[op] {
			codes = append(codes, code)
			total += n
		}
		slices.Sort(codes)
		fmt.Fprintf(w, "%-12s %d", opNames[op], total)
		for _, code := range codes {
			fmt.Fprintf(w, "  %d: %d", code, r.status[op][code])
		}
		fmt.Fprintln(w)
	}
	l := r.lists
	mean := 0.0
	if l.bodies > 0 {
		mean = float64(l.bytes) / float64(l.bodies)
	}
	fmt.Fprintf(w, "list-bodies  %d bytes %d mean %.0f gzip %d etag %d\n", l.bodies, l.bytes, mean, l.gzip, l.tagged)
	fmt.Fprintf(w, "conditional  sent %d 304 %d\n", l.conditional, r.status[opList][http.StatusNotModified])
	codes := make([]int, 0, len(r.samples))
	for code := range r.samples {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		fmt.Fprintf(w, "unexpected   %d, e.g. %s\n", code, r.samples[code])
	}
	fmt.Fprintf(w, "errors       %d\n", failed)
	msgs := make([]string, 0, len(r.errors))
	for e := range r.errors {
		msgs = append(msgs, e)
	}
	slices.Sort(msgs)
	for i, e := range msgs {
		if i == 5 {
			fmt.Fprintf(w, "             … and %d other kinds\n", len(msgs)-5)
			break
		}
		fmt.Fprintf(w, "             %d × %s\n", r.errors[e], e)
	}
}

// verdict is the error to exit with: any status but 200 (or a 304 to a
// conditional list), any transport error, or nothing answered at all.
func (r *report) verdict() error {
	answered, unexpected, failed := r.counts()
	switch {
	case unexpected > 0 || failed > 0:
		return fmt.Errorf("%d unexpected statuses and %d transport errors in %d requests", unexpected, failed, answered+failed)
	case answered == 0:
		return errors.New("no request was answered")
	}
	return nil
}

// errorKind is err without the URL that net/http puts in front of it,
// so that one failure on many pets counts as one kind.
func errorKind(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// prefix shows at most 200 bytes of a body, on one line.
func prefix(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
