package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
)

// A real Prometheus (Debian's prometheus package; .ci/run installs it)
// scrapes the example every second, on Gin and on Fiber, while a known
// mix of requests is sent; its HTTP API must then show exactly those
// counts by label, and its own scrape health up == 1.
func TestRealPrometheusScrape(t *testing.T) {
	t.Parallel() // it waits on the server's clocks, not the CPU
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus is not installed (Debian: apt-get install prometheus; .ci/run installs it); the real-scrape test needs it"
		if os.Getenv("PROMETHEUS_REQUIRED") != "" {
			t.Fatal(msg + " and PROMETHEUS_REQUIRED is set")
		}
		t.Skip(msg)
	}
	began := time.Now()

	// The servers: on the CI's real Redis when REDIS_URL is set, with
	// their own key prefixes, else on embedded miniredis.
	servers := map[string]*server{}
	for _, fw := range []string{"gin", "fiber"} {
		servers[fw] = start(t, Config{Framework: fw, RedisURL: os.Getenv("REDIS_URL"),
			RedisPrefix: fmt.Sprintf("promtest-%s-%d", fw, time.Now().UnixNano())})
	}
	prom := startPrometheus(t, bin, servers)
	ready := time.Since(began)

	// The mix, sent to each server: 20 lists, 7 updates, 3 unknown pets,
	// 2 bad keys, in two halves with a scrape between them, so that the
	// counters grow between two samples and rate() has something to show.
	type part struct{ lists, updates, unknown, badKeys int }
	halves := []part{{10, 4, 1, 1}, {10, 3, 2, 1}}
	want := map[string]float64{}
	var waited []time.Duration
	for _, h := range halves {
		for fw, s := range servers {
			for range h.lists {
				if r := s.do(t, "GET", "/v1/inventory", testKey, ""); r.status != 200 {
					t.Fatalf("%s list: %d %s", fw, r.status, r.body)
				}
			}
			for pet := range h.updates {
				if r := s.do(t, "PATCH", fmt.Sprintf("/v1/inventory/%d", pet+1), testKey, `{"quantity":3}`); r.status != 200 {
					t.Fatalf("%s update: %d %s", fw, r.status, r.body)
				}
			}
			for pet := range h.unknown {
				if r := s.do(t, "PATCH", fmt.Sprintf("/v1/inventory/%d", 90001+pet), testKey, `{"quantity":3}`); r.status != 404 {
					t.Fatalf("%s unknown pet: %d %s", fw, r.status, r.body)
				}
			}
			for range h.badKeys {
				if r := s.do(t, "GET", "/v1/inventory", "not-a-key", ""); r.status != 401 {
					t.Fatalf("%s bad key: %d %s", fw, r.status, r.body)
				}
			}
		}
		want["list GET 200"] += float64(h.lists)
		want["item PATCH 200"] += float64(h.updates)
		want["item PATCH 404"] += float64(h.unknown)
		want["list GET 401"] += float64(h.badKeys)
		waited = append(waited, prom.waitCounts(t, servers, want))
	}
	if want["list GET 200"] != 20 || want["item PATCH 200"] != 7 || want["item PATCH 404"] != 3 || want["list GET 401"] != 2 {
		t.Fatalf("the halves add up to %v, not the mix", want)
	}
	wantCodes := map[string]float64{"": 27, "not_found": 3, "unauthorized": 2}
	wantStore := map[string]float64{
		// One store read per list (they are sequential, so none share a
		// read), and the one API.Preload made before /readyz said ready.
		"list ok":                20 + 1,
		"set_quantity ok":        7,
		"set_quantity not_found": 3,
	}

	// The same scrape holds the store calls and the other metrics.
	store := prom.byJob(t, "inventory_store_operation_duration_seconds_count", "operation", "outcome")
	codes := prom.byJob(t, "inventory_http_requests_total", "code")
	for fw := range servers {
		if !equalCounts(codes[fw], wantCodes) {
			t.Errorf("job %s: requests by code %v, want %v", fw, codes[fw], wantCodes)
		}
		if !equalCounts(store[fw], wantStore) {
			t.Errorf("job %s: store calls %v, want %v", fw, store[fw], wantStore)
		}
		for _, name := range []string{"inventory_http_request_duration_seconds_bucket", "inventory_store_watch_aborts_total",
			"inventory_store_retries_exhausted_total", "redis_pool_hits_total", "redis_pool_connections", "go_goroutines", "process_resident_memory_bytes"} {
			if len(prom.byJob(t, name, "le", "state")[fw]) == 0 {
				t.Errorf("job %s: Prometheus has no %s", fw, name)
			}
		}
	}

	// The README's and docs/OBSERVABILITY.md's PromQL, on this data: the
	// error rate by code shows the two codes of the second half, and the
	// p99 latency both routes.
	errRate := prom.query(t, `sum by (code) (rate(inventory_http_requests_total{code!=""}[5m])) / scalar(sum(rate(inventory_http_requests_total[5m])))`, "code")
	if len(errRate) != 2 || !(errRate["not_found"] > 0 && errRate["not_found"] < 1) || !(errRate["unauthorized"] > 0 && errRate["unauthorized"] < 1) {
		t.Errorf("error rate by code = %v, want not_found and unauthorized, each a share in (0, 1)", errRate)
	}
	p99 := prom.query(t, `histogram_quantile(0.99, sum by (le, route) (rate(inventory_http_request_duration_seconds_bucket[5m])))`, "route")
	if len(p99) != 2 || !(p99["list"] > 0 && p99["list"] < 10) || !(p99["item"] > 0 && p99["item"] < 10) {
		t.Errorf("p99 latency by route = %v, want list and item, each in (0, 10) s", p99)
	}
	t.Logf("real Prometheus (%s): servers and Prometheus ready in %v; exact counts in Prometheus %v after the first half, %v after the second (1s scrapes); p99 %v; whole test %v",
		prom.version, ready.Round(time.Millisecond), waited[0].Round(time.Millisecond), waited[1].Round(time.Millisecond), p99, time.Since(began).Round(time.Millisecond))
}

// waitCounts polls Prometheus until inventory_http_requests_total shows
// exactly want (by route, method and status) for every server's job, and
// up == 1 for each; it returns how long that took. Counters only grow: a
// count above want fails at once.
func (p *prometheusProc) waitCounts(t *testing.T, servers map[string]*server, want map[string]float64) time.Duration {
	t.Helper()
	began := time.Now()
	deadline := began.Add(60 * time.Second)
	for {
		got := p.byJob(t, "inventory_http_requests_total", "route", "method", "status")
		up := p.byJob(t, "up")
		done := true
		for fw := range servers {
			for k, v := range got[fw] {
				if v > want[k] {
					t.Fatalf("job %s: inventory_http_requests_total{%s} = %v, more than the %v requests sent (all: %v)", fw, k, v, want[k], got[fw])
				}
			}
			done = done && equalCounts(got[fw], want) && up[fw][""] == 1
		}
		if done {
			return time.Since(began)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s Prometheus shows %v (up: %v), want %v for each of %d jobs\nprometheus log:\n%s", got, up, want, len(servers), p.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// query runs an instant query and returns its values by the label given
// (all jobs together).
func (p *prometheusProc) query(t *testing.T, q, label string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, byLabel := range p.byJob(t, q, label) {
		for k, v := range byLabel {
			out[k] += v
		}
	}
	return out
}

func equalCounts(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

type prometheusProc struct {
	base    string
	log     *proctest.Buffer
	version string
}

// startPrometheus runs bin on a free loopback port with its own data
// directory, scraping each server every second as the job named after its
// framework, and stops it when the test ends.
func startPrometheus(t *testing.T, bin string, servers map[string]*server) *prometheusProc {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	jobs := make([]string, 0, len(servers))
	for fw := range servers {
		jobs = append(jobs, fw)
	}
	sort.Strings(jobs)
	for _, fw := range jobs {
		u, err := url.Parse(servers[fw].base)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", fw, u.Host)
	}
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	version, _, _ := strings.Cut(string(out), "\n")

	// A free port can be taken between closing it and Prometheus binding
	// it: try a few.
	for attempt := 1; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		p := &prometheusProc{base: "http://" + addr, log: &proctest.Buffer{}, version: strings.TrimSpace(version)}
		cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, fmt.Sprint("data", attempt)),
			"--web.listen-address="+addr, "--log.level=warn")
		cmd.Stdout, cmd.Stderr = p.log, p.log
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		if err := waitReady(p.base+"/-/ready", exited, 30*time.Second); err != nil {
			stop()
			if attempt < 3 {
				t.Logf("prometheus on %s: %v; retrying on another port", addr, err)
				continue
			}
			t.Fatalf("prometheus on %s: %v\n%s", addr, err, p.log)
		}
		t.Cleanup(stop)
		return p
	}
}

// waitReady polls url until it answers 200, the process exits, or the
// timeout passes.
func waitReady(url string, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("not ready in time")
		}
	}
}

// byJob runs the instant query `name` and returns each series' value by
// job, then by the given labels' values joined with spaces.
func (p *prometheusProc) byJob(t *testing.T, name string, labels ...string) map[string]map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/api/v1/query?query="+url.QueryEscape(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %s %v %s", name, resp.Status, err, r.Error)
	}
	out := map[string]map[string]float64{}
	for _, s := range r.Data.Result {
		var key []string
		for _, l := range labels {
			if v, ok := s.Metric[l]; ok {
				key = append(key, v)
			}
		}
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64) // Prometheus writes NaN and +Inf as ParseFloat reads them
		if err != nil {
			t.Fatalf("query %s: value %v: %v", name, s.Value[1], err)
		}
		job := s.Metric["job"]
		if out[job] == nil {
			out[job] = map[string]float64{}
		}
		out[job][strings.Join(key, " ")] += v
	}
	return out
}
