package conformancetest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// Run runs the selected checks against cfg.BaseURL as subtests of t, one
// per check, named after it (t.Run("auth/missing-header", …), so that
// go test -run 'TestX/auth/' selects a group). A failed check fails its
// subtest with the failures, the requests and curl commands that show
// them; a skipped check is a skipped subtest with the reason.
//
// Run fails t at once when the configuration is invalid, the target
// cannot be reached or the fault Redis of the consistency run's schedule
// refuses (ErrFault, checked before any check runs), and stops with that
// error when a fault of the schedule cannot be applied during the run:
// never a pass on a run whose faults did not happen. With
// Config.HTMLReport set, it writes the report of the checks that ran to
// that file as HTML and logs its path.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	rn, err := newRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := rn.Selected()
	if err != nil {
		t.Fatal(err)
	}
	s := rn.Settings()
	rep := &Report{BaseURL: s.BaseURL, Level: s.Level, ReadOnly: s.ReadOnly, Started: time.Now()}
	// Leave no idle connection to the target behind (see RunChecks).
	t.Cleanup(s.HTTPClient.CloseIdleConnections)
	if note, err := rn.Probe(t.Context()); err != nil {
		t.Fatal(err)
	} else if note != "" {
		t.Log(note)
		rep.Notes = append(rep.Notes, note)
	}
	if err := rn.Prepare(t.Context(), checks); err != nil {
		t.Fatal(err)
	}
	if refused := rn.KeyRefusal(); refused != "" {
		t.Errorf("conformancetest: the API key was refused: %s; the checks that need a valid key fail or skip because of it", refused)
	}
	for _, ch := range checks {
		t.Run(ch.Name, func(t *testing.T) {
			res := rn.RunCheck(t.Context(), ch)
			if err := rn.HarnessError(); err != nil {
				// A fault of the schedule could not be applied: the
				// harness broke, so nothing of the check is judged.
				t.Fatalf("%v; nothing of %s was judged", err, res.Name)
			}
			rep.Results = append(rep.Results, res)
			if s.Progress != nil {
				s.Progress(res)
			}
			if res.Detail != "" {
				t.Log(res.Detail)
			}
			for _, line := range res.Consistency.Lines() {
				t.Log(line)
			}
			switch res.Outcome {
			case Fail:
				var sb strings.Builder
				report.WriteFailures(&sb, res, "")
				t.Errorf("%s (%s)\n%s", res.Name, res.Source, sb.String())
			case Skip:
				t.Skip(res.Reason)
			}
		})
		if err := rn.HarnessError(); err != nil {
			t.Fatalf("the run stopped: %v", err)
		}
	}
	rep.Duration = time.Since(rep.Started)
	rep.Headlines = rn.Headlines(rep.rep())
	for _, h := range rep.Headlines {
		t.Log(h)
	}
	if s.HTMLReport != "" {
		if err := writeHTMLFile(s.HTMLReport, rep); err != nil {
			t.Errorf("conformancetest: %v", err)
		} else {
			t.Logf("HTML report: %s", s.HTMLReport)
		}
	}
}

// writeHTMLFile writes rep as HTML to the file path.
func writeHTMLFile(path string, rep *Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	if err := rep.WriteHTML(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the HTML report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the HTML report %s: %w", path, err)
	}
	return nil
}
