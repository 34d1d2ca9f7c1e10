package conformancetest

import (
	"strings"
	"testing"
)

// Run runs the selected checks against cfg.BaseURL as subtests of t, one
// per check, named after it (t.Run("auth/missing-header", …), so that
// go test -run 'TestX/auth/' selects a group). A failed check fails its
// subtest with the failures, the requests and curl commands that show
// them; a skipped check is a skipped subtest with the reason.
//
// Run fails t at once when the configuration is invalid or the target
// cannot be reached.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	rn, err := newRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := rn.selected()
	if err != nil {
		t.Fatal(err)
	}
	// Leave no idle connection to the target behind (see RunChecks).
	t.Cleanup(rn.cfg.HTTPClient.CloseIdleConnections)
	if note, err := rn.probe(t.Context()); err != nil {
		t.Fatal(err)
	} else if note != "" {
		t.Log(note)
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			res := rn.runCheck(t.Context(), ch)
			if rn.cfg.Progress != nil {
				rn.cfg.Progress(res)
			}
			switch res.Outcome {
			case Fail:
				var sb strings.Builder
				writeFailures(&sb, res, "")
				t.Errorf("%s (%s)\n%s", res.Name, res.Source, sb.String())
			case Skip:
				t.Skip(res.Reason)
			}
		})
	}
}
