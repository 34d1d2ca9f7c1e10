// Package deploygen makes the generated files of deploy/ from their
// sources: deploy/prometheus/prometheusrule.yaml (the rules of alerts.yaml
// as a PrometheusRule, for prometheus-operator) and
// deploy/grafana/configmap.yaml (the dashboard's JSON as a ConfigMap, for
// Grafana's sidecar). cmd/deploygen writes them (go generate, see
// docs/ARCHITECTURE.md, "Generated files"); internal/deploycheck's
// TestGeneratedFiles checks that the files in the tree are what their
// sources make, and that they decode to the same rules and dashboard.
package deploygen

//go:generate go run ../cmd/deploygen -root ../../..

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The generated files and their sources, relative to the repository's
// root.
const (
	AlertsFile         = "deploy/prometheus/alerts.yaml"
	PrometheusRuleFile = "deploy/prometheus/prometheusrule.yaml"
	DashboardFile      = "deploy/grafana/inventory-server.json"
	ConfigMapFile      = "deploy/grafana/configmap.yaml"
)

// Regenerate is the command that rewrites the generated files of the
// repository, which their headers name.
const Regenerate = "go generate work"

// Files returns the generated files of the repository at root, by their
// path from it, as their sources make them now.
func Files(root string) (map[string][]byte, error) {
	alerts, err := os.ReadFile(filepath.Join(root, AlertsFile))
	if err != nil {
		return nil, err
	}
	dashboard, err := os.ReadFile(filepath.Join(root, DashboardFile))
	if err != nil {
		return nil, err
	}
	rule, err := PrometheusRule(alerts)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{PrometheusRuleFile: rule, ConfigMapFile: ConfigMap(dashboard)}, nil
}

// PrometheusRule is prometheusrule.yaml as made from the rule file
// alerts: the same groups, comments included, under a PrometheusRule's
// spec.
func PrometheusRule(alerts []byte) ([]byte, error) {
	text := string(alerts)
	i := strings.Index(text, "\ngroups:")
	if i < 0 {
		return nil, fmt.Errorf("%s has no top-level groups (a line \"groups:\")", AlertsFile)
	}
	var b bytes.Buffer
	b.WriteString(`# GENERATED from alerts.yaml by internal/deploycheck/deploygen; do not edit.
# Change alerts.yaml, then run: ` + Regenerate + `
# The rules of alerts.yaml as a PrometheusRule, for prometheus-operator
# (kube-prometheus-stack): add the labels your Prometheus's ruleSelector
# asks for (kube-prometheus-stack's default: release: <its release name>).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: inventory-server
  labels:
    app.kubernetes.io/name: inventory-server
    app.kubernetes.io/part-of: petinventory
spec:
`)
	for _, line := range strings.SplitAfter(text[i+1:], "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	return b.Bytes(), nil
}

// ConfigMap is configmap.yaml as made from the dashboard's JSON: a
// ConfigMap that Grafana's dashboard sidecar (the grafana_dashboard
// label) loads.
func ConfigMap(dashboard []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`# GENERATED from inventory-server.json by internal/deploycheck/deploygen; do not edit.
# Change the JSON, then run: ` + Regenerate + `
# The dashboard for Grafana's sidecar (kube-prometheus-stack's
# grafana.sidecar.dashboards), which loads every ConfigMap labelled
# grafana_dashboard: "1" in the namespaces it watches: apply it in one of
# them (kubectl apply -n monitoring -f deploy/grafana/configmap.yaml).
apiVersion: v1
kind: ConfigMap
metadata:
  name: inventory-server-dashboard
  labels:
    grafana_dashboard: "1"
    app.kubernetes.io/name: inventory-server
    app.kubernetes.io/part-of: petinventory
data:
  inventory-server.json: |
`)
	for _, line := range strings.SplitAfter(string(dashboard), "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
	}
	return b.Bytes()
}

// Write writes the generated files of the repository at root that differ
// from what their sources make, and returns their paths.
func Write(root string) ([]string, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, name := range []string{PrometheusRuleFile, ConfigMapFile} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	return written, nil
}
