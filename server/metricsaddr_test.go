package server

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestMetricsAddr: with MetricsAddr, /metrics is served there (with the
// build-info gauge) and not on the API's address, on both frameworks.
func TestMetricsAddr(t *testing.T) {
	for _, fw := range []string{"gin", "fiber"} {
		t.Run(fw, func(t *testing.T) {
			s := start(t, Config{Framework: fw, MetricsAddr: "127.0.0.1:0"})
			m := regexp.MustCompile(`metrics_addr=(\S+)`).FindStringSubmatch(s.logs.String())
			if m == nil {
				t.Fatalf("the start-up line names no metrics_addr:\n%s", s.logs.String())
			}
			s.list(t) // a request the counters count
			resp, err := http.Get("http://" + m[1] + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `inventory_build_info{goversion="` + runtime.Version() + `",revision="`
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) || !strings.Contains(string(body), "inventory_http_requests_total") {
				t.Errorf("GET /metrics on %s: %d, want 200 with %s… and the API's counters:\n%.2000s", m[1], resp.StatusCode, want, body)
			}
			if r := s.do(t, http.MethodGet, "/metrics", "", ""); r.status != http.StatusNotFound {
				t.Errorf("GET /metrics on the API's address: %d, want 404 (it has its own)", r.status)
			}
			if r := s.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
				t.Errorf("/readyz: %d", r.status)
			}
		})
	}
}

// TestMetricsAddrTaken: a metrics address that is taken fails the start,
// naming the setting, and releases the API's listener.
func TestMetricsAddrTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	l := &lifecycle{settled: settled{cfg: Config{Addr: "127.0.0.1:0", MetricsAddr: taken.Addr().String()}}}
	err = l.listen()
	if err == nil || !strings.Contains(err.Error(), "-metrics-addr") {
		t.Errorf("listen = %v, want an error naming -metrics-addr", err)
	}
}

// TestTryAddr: the start-up line's try= is a URL a client on this machine
// can dial, never the unspecified [::] or 0.0.0.0.
func TestTryAddr(t *testing.T) {
	for in, want := range map[string]string{
		"[::]:8080":      "localhost:8080",
		"0.0.0.0:8080":   "localhost:8080",
		"127.0.0.1:9000": "127.0.0.1:9000",
		"[::1]:9000":     "[::1]:9000",
		"10.0.0.5:80":    "10.0.0.5:80",
	} {
		addr, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := tryAddr(addr); got != want {
			t.Errorf("tryAddr(%s) = %s, want %s", in, got, want)
		}
	}
	ln, err := net.Listen("tcp", ":0") // as the default :8080 listens
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := tryAddr(ln.Addr()); !strings.HasPrefix(got, "localhost:") {
		t.Errorf("tryAddr of a listener on all addresses (%s) = %s, want localhost:PORT", ln.Addr(), got)
	}
}
