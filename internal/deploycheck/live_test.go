package deploycheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
)

// shortFor is the for: every rule of alerts.yaml gets in the live test,
// in place of its shipped wait (1 to 15 minutes): the expressions are the
// shipped ones, evaluated on live series; the shipped waits are
// promtool's to check (alerts_test.yaml).
const shortFor = "5s"

// TestLiveStoreAlert: inventory-server serving a seeded store on a real
// redis-server, scraped every second by a real Prometheus (Debian's)
// that evaluates the shipped rules of alerts.yaml (every for: shortened
// to 5 s, so that the test takes seconds, not minutes) and sends its
// alerts to a real Alertmanager loaded with the shipped alertmanager.yaml.
// Redis is flushed by hand (FLUSHDB) while clients keep listing: the
// lists answer 503, Prometheus fires InventoryStoreNotInitialized and
// InventoryServerUnavailable and never InventoryStoreConfigFault (neither
// pending nor firing; the server counts no configuration fault), and
// Alertmanager inhibits the 503s' page: one page, the cause's. The
// figures (seconds from FLUSHDB to each step) go on one summary line,
// also appended to the file ALERTS_SUMMARY names (CI prints it).
func TestLiveStoreAlert(t *testing.T) {
	proctest.Long(t)
	promBin := tool(t, "prometheus", "prometheus")
	amBin := tool(t, "prometheus-alertmanager", "alertmanager", "prometheus-alertmanager")

	node := redistest.StartNode(t, "deploycheck-live")
	key := "deploycheck-live-key-0123456789abcdef"
	env := []string{"REDIS_URL=redis://" + node.Addr() + "/0", "INVENTORY_API_KEYS=" + key, "INVENTORY_API_KEYS_FILE=", "INVENTORY_METRICS_ADDR=",
		"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=", "INVENTORY_REDIS_PASSWORD_FILE=", "INVENTORY_MAX_STALENESS="}
	s := proctest.Start(t, serverBin, key, env, []string{"-seed", "demo"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	list := func() int {
		r, err := proctest.Do(ctx, client, key, http.MethodGet, s.Base+"/v1/inventory", "")
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	if err := redistest.Poll(30*time.Second, func() error {
		if st := list(); st != http.StatusOK {
			return fmt.Errorf("list: %d", st)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	am := startDaemonAlertmanager(t, amBin)
	prom := startLivePrometheus(t, promBin, strings.TrimPrefix(s.Base, "http://"), strings.TrimPrefix(am, "http://"))
	if err := redistest.Poll(60*time.Second, func() error {
		list()
		return promHas(t, prom, `up{job="inventory-server"} == 1 and on () inventory_store_uninitialized{kind="store-vanished"} == 0`)
	}); err != nil {
		t.Fatalf("Prometheus does not scrape the server: %v", err)
	}

	if _, err := node.Do("FLUSHDB"); err != nil {
		t.Fatal(err)
	}
	flushed := time.Now()
	var firedProm, firedAM, inhibitedAt time.Duration
	var statuses []int
	err := redistest.Poll(90*time.Second, func() error {
		statuses = append(statuses, list()) // clients keep listing: 503s
		states := promAlerts(t, prom)
		if st, ok := states["InventoryStoreConfigFault"]; ok {
			t.Fatalf("InventoryStoreConfigFault is %s after a FLUSHDB: a store without its marker is no configuration fault", st)
		}
		if firedProm == 0 && states["InventoryStoreNotInitialized"] == "firing" {
			firedProm = time.Since(flushed)
		}
		if firedProm == 0 || states["InventoryServerUnavailable"] != "firing" {
			return fmt.Errorf("Prometheus's alerts: %v", states)
		}
		pages, muted := amState(t, am)
		if firedAM == 0 && slices.Contains(pages, "InventoryStoreNotInitialized") {
			firedAM = time.Since(flushed)
		}
		if !slices.Contains(muted, "InventoryServerUnavailable") || !slices.Equal(pages, []string{"InventoryStoreNotInitialized"}) {
			return fmt.Errorf("Alertmanager: pages %v, inhibited %v", pages, muted)
		}
		inhibitedAt = time.Since(flushed)
		return nil
	})
	if err != nil {
		t.Fatalf("after FLUSHDB: %v", err)
	}
	if i := slices.IndexFunc(statuses, func(st int) bool { return st != http.StatusServiceUnavailable }); i >= 0 {
		t.Errorf("list %d of %d after FLUSHDB answered %d, want 503 from the first (the store vanished)", i+1, len(statuses), statuses[i])
	}
	if err := promHas(t, prom, `inventory_store_config_faults_total{job="inventory-server"} == 0`); err != nil {
		t.Errorf("the server counted a configuration fault for the flushed store: %v", err)
	}
	proctest.Summary(t, "ALERTS_SUMMARY", "live alerts: FLUSHDB under a serving inventory-server; Prometheus (rules of alerts.yaml, for: %s) fired InventoryStoreNotInitialized after %.1f s, "+
		"Alertmanager (alertmanager.yaml) paged it after %.1f s and inhibited InventoryServerUnavailable by %.1f s; InventoryStoreConfigFault never pending; %d lists, all 503",
		shortFor, firedProm.Seconds(), firedAM.Seconds(), inhibitedAt.Seconds(), len(statuses))
}

// startDaemonAlertmanager runs Alertmanager with the shipped
// alertmanager.yaml as it is, and returns its base URL.
func startDaemonAlertmanager(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	file, err := filepath.Abs(alertmanagerFile)
	if err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, bin, "/-/ready", func(addr string) []string {
		return []string{"--config.file=" + file, "--storage.path=" + dir, "--web.listen-address=" + addr,
			"--cluster.listen-address=", "--log.level=warn"}
	})
}

// startLivePrometheus runs Prometheus scraping the server at target every
// second (job inventory-server, namespace live), evaluating alerts.yaml
// with every for: shortened to shortFor, and sending alerts to the
// Alertmanager at am; it returns its base URL.
func startLivePrometheus(t *testing.T, bin, target, am string) string {
	t.Helper()
	dir := t.TempDir()
	rules := regexp.MustCompile(`(?m)^(\s+for:\s+)\S+$`).ReplaceAllString(readFile(t, rulesFile), "${1}"+shortFor)
	rulesCopy := filepath.Join(dir, "alerts.yaml")
	if err := os.WriteFile(rulesCopy, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: inventory-server
    static_configs:
      - targets: [%q]
        labels: {namespace: live}
`, rulesCopy, am, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, bin, "/-/ready", func(addr string) []string {
		return []string{"--config.file=" + cfgFile, "--storage.tsdb.path=" + filepath.Join(dir, "data-"+strings.ReplaceAll(addr, ":", "-")),
			"--web.listen-address=" + addr, "--log.level=warn"}
	})
}

// promGet decodes the data of a GET of Prometheus's HTTP API.
func promGet(t *testing.T, u string, data any) {
	t.Helper()
	_, body := amCall(t, http.MethodGet, u, nil)
	var r struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("GET %s: %v: %s", u, err, body)
	}
	if err := json.Unmarshal(r.Data, data); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, body)
	}
}

// promHas returns nil when the PromQL query returns a series now.
func promHas(t *testing.T, prom, query string) error {
	t.Helper()
	var data struct {
		Result []json.RawMessage `json:"result"`
	}
	promGet(t, prom+"/api/v1/query?query="+url.QueryEscape(query), &data)
	if len(data.Result) == 0 {
		return fmt.Errorf("no series for %s", query)
	}
	return nil
}

// promAlerts is the state (pending, firing) of each alert Prometheus
// holds, by name.
func promAlerts(t *testing.T, prom string) map[string]string {
	t.Helper()
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	promGet(t, prom+"/api/v1/alerts", &data)
	states := map[string]string{}
	for _, a := range data.Alerts {
		if states[a.Labels["alertname"]] != "firing" {
			states[a.Labels["alertname"]] = a.State
		}
	}
	return states
}

// amState is what Alertmanager holds: the alert names of the pages left
// (groups routed to the pager with an alert neither inhibited nor
// silenced) and of the alerts inhibited, each sorted.
func amState(t *testing.T, am string) (pages, inhibited []string) {
	t.Helper()
	_, body := amCall(t, http.MethodGet, am+"/api/v2/alerts/groups", nil)
	var groups []struct {
		Receiver struct{ Name string } `json:"receiver"`
		Alerts   []struct {
			Labels map[string]string `json:"labels"`
			Status struct {
				InhibitedBy []string `json:"inhibitedBy"`
			} `json:"status"`
		} `json:"alerts"`
	}
	if err := json.Unmarshal(body, &groups); err != nil {
		t.Fatalf("GET /api/v2/alerts/groups: %v: %s", err, body)
	}
	for _, g := range groups {
		for _, a := range g.Alerts {
			switch {
			case len(a.Status.InhibitedBy) > 0:
				inhibited = append(inhibited, a.Labels["alertname"])
			case g.Receiver.Name == "pager":
				pages = append(pages, a.Labels["alertname"])
			}
		}
	}
	slices.Sort(pages)
	slices.Sort(inhibited)
	return slices.Compact(pages), slices.Compact(inhibited)
}
