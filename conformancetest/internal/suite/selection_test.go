package suite_test

import (
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

// TestSkipRegexp: -skip leaves out the checks it matches, after -run.
func TestSkipRegexp(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^routes/", Skip: "unknown|trailing"})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if strings.Contains(res.Name, "unknown") || strings.Contains(res.Name, "trailing") {
			t.Errorf("%s ran", res.Name)
		}
	}
	if len(rep.Results) == 0 {
		t.Fatal("nothing ran")
	}
	if _, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Run: "^routes/", Skip: "."}); err == nil || !strings.Contains(err.Error(), "once Skip") {
		t.Errorf("everything skipped: %v", err)
	}
	if _, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: refserver.Key, Skip: "("}); err == nil || !strings.Contains(err.Error(), "Config.Skip") {
		t.Errorf("a bad Skip: %v", err)
	}
}
