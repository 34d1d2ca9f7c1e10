package deploycheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"sigs.k8s.io/yaml"
)

// One page per cause: deploy/prometheus/alertmanager.yaml's inhibit rules,
// checked by amtool, and applied by a real Alertmanager to the alerts that
// promtool says fire in each failure alerts_test.yaml plays.

var alertmanagerFile = filepath.Join(promDir, "alertmanager.yaml")

// scenarioPrefix names the tests of alerts_test.yaml that play a whole
// failure and list every alert at each of their evaluation times.
const scenarioPrefix = "scenario: "

// scenarios are what each failure of alerts_test.yaml must leave after
// Alertmanager's inhibition, at each of its evaluation times: the alerts
// that page (routed to the pager: critical), and every alert left
// (any severity).
var scenarios = map[string]struct{ pages, left []string }{
	"scenario: a wiped store":       {pages: []string{"InventoryStoreNotInitialized"}, left: []string{"InventoryStoreNotInitialized"}},
	"scenario: every instance down": {pages: []string{"InventoryServerAllDown"}, left: []string{"InventoryServerAllDown"}},
	"scenario: targets absent":      {pages: []string{"InventoryServerTargetsAbsent"}, left: []string{"InventoryServerTargetsAbsent"}},
	"scenario: one 500":             {left: []string{"InventoryServerErrorSeen"}},
	"scenario: an evicted pod":      {},
	"scenario: a first install":     {},
}

// promTests is alerts_test.yaml, the part these tests read.
type promTests struct {
	Tests []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			EvalTime  string `json:"eval_time"`
			ExpAlerts []struct {
				ExpLabels map[string]string `json:"exp_labels"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// alertNames are the alerts of alerts.yaml, once each.
func alertNames(rf ruleFile) []string {
	var names []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && !slices.Contains(names, r.Alert) {
				names = append(names, r.Alert)
			}
		}
	}
	return names
}

// tool is the path of a program of Debian's prometheus or
// prometheus-alertmanager package (any of names); without it the test is
// skipped, or fails when PROMETHEUS_REQUIRED says it must run (.ci/run
// installs both).
func tool(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed (apt-get install %s)", names[0], pkg)
	if os.Getenv("PROMETHEUS_REQUIRED") != "" {
		t.Fatal(msg + ", and PROMETHEUS_REQUIRED is set")
	}
	t.Skip(msg)
	return ""
}

// inhibitNames are the alert names the matchers of alertmanager.yaml's
// inhibit rules name (alertname="A" or alertname=~"A|B").
func inhibitNames(t *testing.T) []string {
	t.Helper()
	var am struct {
		InhibitRules []struct {
			SourceMatchers []string `json:"source_matchers"`
			TargetMatchers []string `json:"target_matchers"`
			Equal          []string `json:"equal"`
		} `json:"inhibit_rules"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, alertmanagerFile)), &am); err != nil {
		t.Fatal(err)
	}
	if len(am.InhibitRules) == 0 {
		t.Fatalf("%s has no inhibit_rules", alertmanagerFile)
	}
	var names []string
	matcher := regexp.MustCompile(`^alertname\s*=~?\s*"([^"]+)"$`)
	for _, r := range am.InhibitRules {
		if !slices.Contains(r.Equal, "namespace") {
			t.Errorf("an inhibit rule of %s (%v → %v) is not limited to one namespace (equal: [namespace]): a cause would silence another namespace's pages", alertmanagerFile, r.SourceMatchers, r.TargetMatchers)
		}
		for _, m := range append(slices.Clone(r.SourceMatchers), r.TargetMatchers...) {
			sub := matcher.FindStringSubmatch(m)
			if sub == nil {
				t.Errorf("%s: matcher %q is not alertname=\"NAME\" or alertname=~\"A|B\"", alertmanagerFile, m)
				continue
			}
			names = append(names, strings.Split(sub[1], "|")...)
		}
	}
	return names
}

// TestAlertmanagerConfig has amtool check alertmanager.yaml, as
// Alertmanager would load it, and checks that every alert its inhibit
// rules name is one of alerts.yaml: a misspelt name would silence nothing,
// without an error.
func TestAlertmanagerConfig(t *testing.T) {
	amtool := tool(t, "prometheus-alertmanager", "amtool")
	if out, err := exec.Command(amtool, "check-config", alertmanagerFile).CombinedOutput(); err != nil {
		t.Fatalf("amtool check-config %s: %v\n%s", alertmanagerFile, err, out)
	}
	rf, _ := readRules(t)
	alerts := alertNames(rf)
	for _, n := range inhibitNames(t) {
		if !slices.Contains(alerts, n) {
			t.Errorf("%s's inhibit rules name %s, which is no alert of %s", alertmanagerFile, n, rulesFile)
		}
	}
}

// firing is an alert as promtool says it fires: its labels, alertname
// included.
type firing map[string]string

// TestAlertScenarios plays each failure of alerts_test.yaml ("scenario:
// …") through promtool and a real Alertmanager. promtool runs the file: at
// each evaluation time of a scenario it lists every alert of alerts.yaml
// (checked here), those that fire with their labels, so that it checks the
// whole set of alerts that fire, no more. Those alerts are then sent to a
// real Alertmanager (Debian's prometheus-alertmanager) loaded with
// alertmanager.yaml, and its API says which it inhibits and which pages
// are left (the groups routed to the pager); each scenario states them.
func TestAlertScenarios(t *testing.T) {
	promtool := promtool(t)
	am := tool(t, "prometheus-alertmanager", "alertmanager", "prometheus-alertmanager")
	if out, err := exec.Command(promtool, "test", "rules", rulesTestFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules %s: %v\n%s", rulesTestFile, err, out)
	}
	rf, _ := readRules(t)
	alerts := alertNames(rf)
	var tests promTests
	if err := yaml.Unmarshal([]byte(readFile(t, rulesTestFile)), &tests); err != nil {
		t.Fatal(err)
	}
	played := map[string]bool{}
	for _, tc := range tests.Tests {
		if !strings.HasPrefix(tc.Name, scenarioPrefix) {
			continue
		}
		want, ok := scenarios[tc.Name]
		if !ok {
			t.Errorf("%s: %q states no outcome in scenarios", rulesTestFile, tc.Name)
			continue
		}
		played[tc.Name] = true
		byTime := map[string][]firing{}
		listed := map[string][]string{}
		for _, a := range tc.AlertRuleTest {
			listed[a.EvalTime] = append(listed[a.EvalTime], a.Alertname)
			for _, e := range a.ExpAlerts {
				f := firing{"alertname": a.Alertname}
				maps.Copy(f, e.ExpLabels)
				byTime[a.EvalTime] = append(byTime[a.EvalTime], f)
			}
		}
		for _, at := range slices.Sorted(maps.Keys(listed)) {
			if missing := slices.DeleteFunc(slices.Clone(alerts), func(n string) bool { return slices.Contains(listed[at], n) }); len(missing) > 0 {
				t.Errorf("%s at %s does not list %v: promtool checks only the alerts it lists", tc.Name, at, missing)
				continue
			}
			pages, left := inhibited(t, am, byTime[at])
			critical := 0
			for _, f := range byTime[at] {
				if f["severity"] == "critical" {
					critical++
				}
			}
			t.Logf("%s at %s: %d alerts fire (%d critical); after inhibition %d left %v, %d page(s) %v",
				tc.Name, at, len(byTime[at]), critical, len(left), left, len(pages), pages)
			if !slices.Equal(pages, want.pages) || !slices.Equal(left, want.left) {
				t.Errorf("%s at %s: pages %v and alerts left %v after inhibition, want pages %v and alerts left %v", tc.Name, at, pages, left, want.pages, want.left)
			}
		}
	}
	for name := range scenarios {
		if !played[name] {
			t.Errorf("%s has no test %q", rulesTestFile, name)
		}
	}
}

// The probe: alerts sent after a scenario's, and an inhibit rule that
// only they match, added to a copy of alertmanager.yaml. Alertmanager
// hands alerts to its inhibitor and to its dispatcher each in the order
// they came: once the probe's target is inhibited and grouped, every
// alert sent before it has been seen by both.
const (
	probeSource = "DeploycheckProbeSource"
	probeTarget = "DeploycheckProbeTarget"
)

// inhibited sends alerts to a real Alertmanager loaded with
// alertmanager.yaml (plus the probe's rule) and returns the alert names of
// the pages left (groups routed to the receiver "pager" with an alert
// neither inhibited nor silenced) and of every alert left, each sorted.
func inhibited(t *testing.T, bin string, alerts []firing) (pages, left []string) {
	t.Helper()
	base := startAlertmanager(t, bin)
	now := time.Now().UTC()
	var post []map[string]any
	for _, f := range append(slices.Clone(alerts), firing{"alertname": probeSource}, firing{"alertname": probeTarget}) {
		post = append(post, map[string]any{"labels": f, "startsAt": now.Format(time.RFC3339), "endsAt": now.Add(time.Hour).Format(time.RFC3339)})
	}
	body, _ := json.Marshal(post)
	if status, out := amCall(t, http.MethodPost, base+"/api/v2/alerts", body); status != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %d %s", status, out)
	}
	type group struct {
		Receiver struct{ Name string } `json:"receiver"`
		Alerts   []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	read := func(inhibitedToo bool) []group {
		_, out := amCall(t, http.MethodGet, fmt.Sprintf("%s/api/v2/alerts/groups?inhibited=%v", base, inhibitedToo), nil)
		var gs []group
		if err := json.Unmarshal(out, &gs); err != nil {
			t.Fatalf("GET /api/v2/alerts/groups: %v: %s", err, out)
		}
		return gs
	}
	err := redistest.Poll(30*time.Second, func() error {
		_, out := amCall(t, http.MethodGet, base+"/api/v2/alerts?filter="+url.QueryEscape(`alertname="`+probeTarget+`"`), nil)
		var st []struct {
			Status struct{ InhibitedBy []string } `json:"status"`
		}
		if json.Unmarshal(out, &st) != nil || len(st) != 1 || len(st[0].Status.InhibitedBy) == 0 {
			return fmt.Errorf("the probe is not inhibited yet: %s", out)
		}
		for _, g := range read(true) {
			for _, a := range g.Alerts {
				if a.Labels["alertname"] == probeTarget {
					return nil
				}
			}
		}
		return fmt.Errorf("the probe is not grouped yet")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range read(false) {
		for _, a := range g.Alerts {
			name := a.Labels["alertname"]
			if name == probeSource || name == probeTarget {
				continue
			}
			left = append(left, name)
			if g.Receiver.Name == "pager" {
				pages = append(pages, name)
			}
		}
	}
	slices.Sort(pages)
	slices.Sort(left)
	return slices.Compact(pages), slices.Compact(left)
}

// startAlertmanager runs bin with a copy of alertmanager.yaml that adds
// the probe's inhibit rule, on a free loopback port, with clustering off,
// until the test ends; it returns its base URL.
func startAlertmanager(t *testing.T, bin string) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(readFile(t, alertmanagerFile)), &cfg); err != nil {
		t.Fatal(err)
	}
	rules, _ := cfg["inhibit_rules"].([]any)
	cfg["inhibit_rules"] = append(rules, map[string]any{
		"source_matchers": []string{`alertname="` + probeSource + `"`},
		"target_matchers": []string{`alertname="` + probeTarget + `"`},
	})
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "alertmanager.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return startDaemon(t, bin, "/-/ready", func(addr string) []string {
		return []string{"--config.file=" + file, "--storage.path=" + dir, "--web.listen-address=" + addr,
			"--cluster.listen-address=", "--log.level=warn"}
	})
}

// startDaemon runs bin with args(addr) on a free loopback port until the
// test ends, and returns its base URL once readyPath answers 200. A port
// taken between choosing it and the bind is tried again on another.
func startDaemon(t *testing.T, bin, readyPath string, args func(addr string) []string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := "127.0.0.1:" + fmt.Sprint(redistest.FreePort(t))
		logs := &proctest.Buffer{}
		cmd := exec.Command(bin, args(addr)...)
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		base := "http://" + addr
		err := redistest.Poll(30*time.Second, func() error {
			select {
			case <-exited:
				return fmt.Errorf("%s exited", filepath.Base(bin))
			default:
			}
			resp, err := http.Get(base + readyPath)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %d", readyPath, resp.StatusCode)
			}
			return nil
		})
		if err == nil {
			t.Cleanup(stop)
			return base
		}
		stop()
		if attempt == 3 {
			t.Fatalf("%s on %s: %v\n%s", filepath.Base(bin), addr, err, logs)
		}
	}
}

// amCall sends one request to Alertmanager's API (JSON) and returns the
// status and the body.
func amCall(t *testing.T, method, u string, body []byte) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
