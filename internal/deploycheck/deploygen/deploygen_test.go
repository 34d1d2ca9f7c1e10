package deploygen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWrite: Write makes both files from their sources in a tree, says
// which it wrote, and writes nothing when they are up to date; a rule
// file without groups, or a missing source, is an error naming it.
func TestWrite(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(root); err == nil || !strings.Contains(err.Error(), "alerts.yaml") {
		t.Errorf("Write without sources: %v, want an error naming alerts.yaml", err)
	}
	write(AlertsFile, "# the rules\ngroups:\n  - name: g\n    rules: []\n")
	write(DashboardFile, "{\n  \"title\": \"x\"\n}\n")
	written, err := Write(root)
	if err != nil || !slices.Equal(written, []string{PrometheusRuleFile, ConfigMapFile}) {
		t.Fatalf("Write = %q, %v; want both files written", written, err)
	}
	rule, _ := os.ReadFile(filepath.Join(root, PrometheusRuleFile))
	if !strings.Contains(string(rule), "kind: PrometheusRule") || !strings.Contains(string(rule), "\n  groups:\n    - name: g\n") ||
		!strings.Contains(string(rule), "run: "+Regenerate) {
		t.Errorf("the PrometheusRule:\n%s", rule)
	}
	cm, _ := os.ReadFile(filepath.Join(root, ConfigMapFile))
	if !strings.HasSuffix(string(cm), "  inventory-server.json: |\n    {\n      \"title\": \"x\"\n    }\n") {
		t.Errorf("the ConfigMap:\n%s", cm)
	}
	if written, err := Write(root); err != nil || len(written) != 0 {
		t.Errorf("Write again = %q, %v; want nothing written", written, err)
	}
	write(AlertsFile, "rules: []\n")
	if _, err := Write(root); err == nil || !strings.Contains(err.Error(), "no top-level groups") {
		t.Errorf("a rule file without groups: %v", err)
	}
}
