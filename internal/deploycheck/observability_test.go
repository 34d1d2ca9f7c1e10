package deploycheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/deploycheck/deploygen"
	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The tests of deploy/prometheus and deploy/grafana: the alerting rules
// and their runbooks, the files generated from them, and the metrics the
// rules and the dashboard query, against a live server's /metrics.

var (
	promDir          = filepath.Join("..", "..", "deploy", "prometheus")
	grafanaDir       = filepath.Join("..", "..", "deploy", "grafana")
	rulesFile        = filepath.Join(promDir, "alerts.yaml")
	rulesTestFile    = filepath.Join(promDir, "alerts_test.yaml")
	prometheusRule   = filepath.Join(promDir, "prometheusrule.yaml")
	dashboardFile    = filepath.Join(grafanaDir, "inventory-server.json")
	dashboardCM      = filepath.Join(grafanaDir, "configmap.yaml")
	runbookURLPrefix = "https://github.com/petinventory/petinventory/blob/main/docs/OPERATING.md#"
)

// externalMetrics are the metrics the rules and the dashboard read that
// the server does not export, and who does.
var externalMetrics = map[string]string{
	"up":                            "Prometheus, for every scrape target",
	"kube_pod_status_ready":         "kube-state-metrics",
	"kube_pod_status_phase":         "kube-state-metrics",
	"kube_deployment_spec_replicas": "kube-state-metrics",
	"kube_deployment_status_replicas_available": "kube-state-metrics",
	"kube_job_info":     "kube-state-metrics",
	"kube_job_complete": "kube-state-metrics",
	"kube_job_failed":   "kube-state-metrics",
}

// ruleFile is a Prometheus rule file, the part these tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record      string            `json:"record"`
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

func readRules(t *testing.T) (ruleFile, []byte) {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return rf, data
}

// TestAlertRules: at least six alerts, each with a summary, a description
// and a runbook_url to docs/OPERATING.md (that its anchor is a heading
// there is internal/release's TestRunbookLinks, beside the check of every
// document's links), a severity, and a case of alerts_test.yaml in which
// it fires.
func TestAlertRules(t *testing.T) {
	rf, _ := readRules(t)
	testData, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(testData, &tests); err != nil {
		t.Fatal(err)
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	alerts := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			for _, key := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[key]) == "" {
					t.Errorf("alert %s has no %s", r.Alert, key)
				}
			}
			if anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookURLPrefix); !ok || anchor == "" || anchor != strings.ToLower(r.Alert) {
				t.Errorf("alert %s: runbook_url %q is not %s followed by the section named after the alert", r.Alert, r.Annotations["runbook_url"], runbookURLPrefix)
			}
			if r.Labels["severity"] != "critical" && r.Labels["severity"] != "warning" {
				t.Errorf("alert %s: severity %q, want critical or warning", r.Alert, r.Labels["severity"])
			}
			if !fires[r.Alert] {
				t.Errorf("alert %s: no case of %s makes it fire", r.Alert, rulesTestFile)
			}
		}
	}
	if alerts < 6 {
		t.Errorf("%s has %d alerts, want at least 6", rulesFile, alerts)
	}
}

// TestPromtool has promtool check the rules and run alerts_test.yaml, as
// CI's step does.
func TestPromtool(t *testing.T) {
	promtool := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestGeneratedFiles: prometheusrule.yaml and the dashboard's ConfigMap
// are exactly what alerts.yaml and the JSON make (deploygen; go generate
// rewrites them), and decode to the same rules and the same dashboard.
func TestGeneratedFiles(t *testing.T) {
	rf, _ := readRules(t)
	dashboard, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := deploygen.Files(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{deploygen.PrometheusRuleFile, deploygen.ConfigMapFile} {
		file := filepath.Join("..", "..", filepath.FromSlash(name))
		if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, want[name]) {
			t.Errorf("%s is not what its source makes (%v): run %s", name, err, deploygen.Regenerate)
		}
	}

	var pr struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       ruleFile       `json:"spec"`
	}
	data, _ := os.ReadFile(prometheusRule)
	if err := yaml.UnmarshalStrict(data, &pr); err != nil {
		t.Fatalf("%s: %v", prometheusRule, err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || !reflect.DeepEqual(pr.Spec, rf) {
		t.Errorf("%s is not a PrometheusRule holding the groups of %s", prometheusRule, rulesFile)
	}
	var cm corev1.ConfigMap
	data, _ = os.ReadFile(dashboardCM)
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		t.Fatalf("%s: %v", dashboardCM, err)
	}
	if cm.Labels["grafana_dashboard"] != "1" || cm.Data["inventory-server.json"] != string(dashboard) {
		t.Errorf("%s: label grafana_dashboard %q, and its inventory-server.json is not %s", dashboardCM, cm.Labels["grafana_dashboard"], dashboardFile)
	}
	if !json.Valid(dashboard) {
		t.Errorf("%s is not JSON", dashboardFile)
	}
}

// promqlToken is a PromQL identifier, a number or duration, a string, or
// a Grafana variable.
var promqlToken = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`" + `|\$\{[^}]*\}|\$\w+|[0-9][0-9.]*(?:[eE][+-]?[0-9]+)?[a-zA-Z]*|[a-zA-Z_:][a-zA-Z0-9_:]*|[{}\[\]()]|\S`)

var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "bool": true, "offset": true, "inf": true, "nan": true, "atan2": true,
}

// promqlMetricNames are the metric names a PromQL expression (Grafana's
// variables allowed) selects: the identifiers outside label matchers,
// ranges and grouping lists that call no function. label_values(m, l),
// the query of a Grafana variable, names m.
func promqlMetricNames(expr string) []string {
	toks := promqlToken.FindAllString(expr, -1)
	var names []string
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch {
		case tok == "{" || tok == "[":
			close := map[string]string{"{": "}", "[": "]"}[tok]
			for i < len(toks) && toks[i] != close {
				i++
			}
		case promqlKeywords[strings.ToLower(tok)] && i+1 < len(toks) && toks[i+1] == "(" &&
			slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, strings.ToLower(tok)):
			for i < len(toks) && toks[i] != ")" {
				i++
			}
		case tok == "label_values" && i+2 < len(toks) && toks[i+1] == "(":
			names = append(names, toks[i+2])
			for i < len(toks) && toks[i] != ")" {
				i++
			}
		case promqlKeywords[strings.ToLower(tok)]:
		case regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`).MatchString(tok):
			if i+1 < len(toks) && (toks[i+1] == "(" || strings.EqualFold(toks[i+1], "by") || strings.EqualFold(toks[i+1], "without")) {
				continue // a function or an aggregation (sum by (…) (…))
			}
			names = append(names, tok)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func TestPromQLMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum by (route, status) (rate(inventory_http_requests_total{job=~"$job", code!=""}[$__rate_interval]))`, []string{"inventory_http_requests_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(a_bucket{le="0.25"}[5m]))) > 0.25 and on (job) b offset 1h`, []string{"a_bucket", "b"}},
		{"1 - sum(rate(x_bucket[1d])) / sum without (instance) (x_count) or inventory:ratio_rate5m > (14.4 * 0.01)", []string{"inventory:ratio_rate5m", "x_bucket", "x_count"}},
		{`label_values(inventory_build_info{job=~"$job"}, namespace)`, []string{"inventory_build_info"}},
		{`up{job="x"} == 0 unless ignoring(pod) group_left(version) kube_pod_status_ready`, []string{"kube_pod_status_ready", "up"}},
	} {
		if got := promqlMetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("promqlMetricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// queriedMetrics are the metrics the rules and the dashboard select, each
// with where it is queried, and the names the rules record.
func queriedMetrics(t *testing.T) (queried map[string][]string, recorded map[string]bool) {
	t.Helper()
	rf, _ := readRules(t)
	queried, recorded = map[string][]string{}, map[string]bool{}
	add := func(where, expr string) {
		for _, n := range promqlMetricNames(expr) {
			queried[n] = append(queried[n], where)
		}
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			}
			add("rule "+r.Alert+r.Record, r.Expr)
		}
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	panels := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			add("panel "+p.Title, tg.Expr)
			panels++
		}
	}
	if panels == 0 {
		t.Fatalf("%s: no panel queries anything", dashboardFile)
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			add("variable "+v.Name, fmt.Sprint(q["query"]))
		}
	}
	return queried, recorded
}

// exportedMetrics are the series names a /metrics body declares: each
// family's name, and for histograms and summaries their _bucket, _count
// and _sum.
func exportedMetrics(body string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		switch f[3] {
		case "histogram":
			names[f[2]+"_bucket"], names[f[2]+"_count"], names[f[2]+"_sum"] = true, true, true
		case "summary":
			names[f[2]+"_count"], names[f[2]+"_sum"] = true, true
		}
	}
	return names
}

// TestQueriesNameExportedMetrics starts inventory-server on a real
// redis-server, makes it answer lists and updates (so that every family
// has a series), scrapes /metrics, and fails for each metric a rule or a
// panel selects that the server does not export (nor Prometheus or
// kube-state-metrics, nor a rule records).
func TestQueriesNameExportedMetrics(t *testing.T) {
	node := redistest.StartNode(t, "deploycheck-metrics")
	key := "deploycheck-metrics-key-0123456789abcdef"
	env := []string{"REDIS_URL=redis://" + node.Addr() + "/0", "INVENTORY_API_KEYS=" + key, "INVENTORY_API_KEYS_FILE=", "INVENTORY_METRICS_ADDR=",
		"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=", "INVENTORY_REDIS_PASSWORD_FILE="}
	s := proctest.Start(t, serverBin, key, env, []string{"-seed", "demo"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	if err := redistest.Poll(30*time.Second, func() error {
		r, err := proctest.Do(ctx, client, "", http.MethodGet, s.Base+"/readyz", "")
		if err == nil && r.Status != http.StatusOK {
			err = fmt.Errorf("/readyz %d %s", r.Status, r.Body)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/inventory", ""}, {http.MethodPatch, "/v1/inventory/1", `{"quantity":3}`}, {http.MethodPatch, "/v1/inventory/999999", `{"quantity":3}`},
	} {
		if _, err := proctest.Do(ctx, client, key, req.method, s.Base+req.path, req.body); err != nil {
			t.Fatal(err)
		}
	}
	r, err := proctest.Do(ctx, client, "", http.MethodGet, s.Base+"/metrics", "")
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("GET /metrics: %v %d", err, r.Status)
	}
	exported := exportedMetrics(string(r.Body))

	queried, recorded := queriedMetrics(t)
	ours := 0
	for _, name := range slices.Sorted(maps.Keys(queried)) {
		where := strings.Join(slices.Compact(slices.Sorted(slices.Values(queried[name]))), "; ")
		switch {
		case exported[name]:
			ours++
		case recorded[name], externalMetrics[name] != "":
		default:
			t.Errorf("%s is queried by %s, but the server does not export it (nor is it recorded by a rule, nor among the external metrics)", name, where)
		}
	}
	if ours < 4 {
		t.Errorf("the rules and the dashboard query %d of the server's metrics, want at least 4", ours)
	}
	t.Logf("the rules and the dashboard query %d of the server's metrics", ours)
}

// ruleObjectFacts reports where the rules disagree with the manifests
// they watch: the objects they select by name (the Deployment, its pods,
// the seed Job) must be the manifests' objects, and the alert on missing
// replicas must wait longer than a rollout may take (the Deployment's
// progressDeadlineSeconds), so that no rollout pages.
func ruleObjectFacts(rf ruleFile, m *manifests) []error {
	var errs []error
	sj, err := m.seedJob()
	if err != nil {
		return []error{err}
	}
	selectors := []struct {
		re   *regexp.Regexp
		want string
		what string
	}{
		{regexp.MustCompile(`deployment="([^"]*)"`), m.deployment.Name, "the Deployment's name"},
		{regexp.MustCompile(`pod=~"([^"]*)-\.\*"`), m.deployment.Name, "the Deployment's name, its pods' prefix"},
		{regexp.MustCompile(`job_name="([^"]*)"`), sj.job.Name, "the seed Job's name"},
	}
	found := make([]int, len(selectors))
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for i, s := range selectors {
				for _, sub := range s.re.FindAllStringSubmatch(r.Expr, -1) {
					found[i]++
					if sub[1] != s.want {
						errs = append(errs, fmt.Errorf("rule %s%s selects %q, want %s %q", r.Alert, r.Record, sub[0], s.what, s.want))
					}
				}
			}
			if r.Alert != "InventoryServerReplicasUnavailable" {
				continue
			}
			wait, err := time.ParseDuration(r.For)
			deadline := int32(600) // Kubernetes's default
			if d := m.deployment.Spec.ProgressDeadlineSeconds; d != nil {
				deadline = *d
			}
			if err != nil || wait <= time.Duration(deadline)*time.Second {
				errs = append(errs, fmt.Errorf("rule %s waits %q, not longer than the Deployment's progressDeadlineSeconds (%d s): a slow rollout would page", r.Alert, r.For, deadline))
			}
		}
	}
	for i, s := range selectors {
		if found[i] == 0 {
			errs = append(errs, fmt.Errorf("no rule selects %s (%s)", s.what, s.re))
		}
	}
	return errs
}

// TestRulesNameTheObjects checks the rules against deploy/kubernetes
// (ruleObjectFacts), and that it catches a renamed Deployment, a renamed
// seed Job and a progress deadline the alert does not outwait.
func TestRulesNameTheObjects(t *testing.T) {
	rf, _ := readRules(t)
	for _, err := range ruleObjectFacts(rf, readDeploy(t)) {
		t.Error(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(m *manifests)
		wants string
	}{
		{"Deployment renamed", func(m *manifests) { m.deployment.Name = "shop-inventory" }, `want the Deployment's name "shop-inventory"`},
		{"seed Job renamed", func(m *manifests) { m.jobs[0].Name = "seed" }, `want the seed Job's name "seed"`},
		{"long rollout", func(m *manifests) { d := int32(1800); m.deployment.Spec.ProgressDeadlineSeconds = &d }, "not longer than the Deployment's progressDeadlineSeconds (1800 s)"},
	} {
		m := readDeploy(t)
		tc.edit(m)
		if errs := ruleObjectFacts(rf, m); !strings.Contains(errors.Join(errs...).Error(), tc.wants) {
			t.Errorf("%s: ruleObjectFacts = %v, want an error containing %q", tc.name, errs, tc.wants)
		}
	}
}
