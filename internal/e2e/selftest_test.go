package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// serveBroken serves the API of bc over net/http on a fresh store and
// returns the base URL and the store.
func serveBroken(t *testing.T, bc brokenCase) (string, inventory.Store) {
	t.Helper()
	items := seed
	if bc.empty {
		items = nil
	}
	store := openMemory(t, items...)
	api := newAPI(t, store, bc.opts...)
	if bc.serve != nil {
		return bc.serve(t, api), store
	}
	var h http.Handler = api
	if bc.wrap != nil {
		h = bc.wrap(api, api)
	}
	return serveNetHTTP(t, h, api), store
}

// TestBrokenServers proves that each check can fail: against a server
// with one rule broken, the check for that rule reports a failure, for
// that reason, with a curl command, without the key; and the suite still
// restores what it changed.
func TestBrokenServers(t *testing.T) {
	for _, bc := range brokenCases {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			base, store := serveBroken(t, bc)
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{
				BaseURL: base, APIKey: testKey, Run: "^" + regexp.QuoteMeta(bc.check) + "$",
			})
			if err != nil {
				t.Fatal(err)
			}
			res, ok := rep.Result(bc.check)
			if !ok {
				t.Fatalf("no result for check %s", bc.check)
			}
			if res.Outcome != conformancetest.Fail {
				t.Fatalf("check %s did not catch %q: outcome %s %s", bc.check, bc.name, res.Outcome, res.Reason)
			}
			var problems []string
			for _, f := range res.Failures {
				problems = append(problems, f.Problem)
				if f.Exchange != nil && !strings.HasPrefix(f.Curl, "curl ") && !strings.Contains(f.Curl, "| curl ") {
					t.Errorf("failure %q has no curl command: %q", f.Problem, f.Curl)
				}
			}
			if !strings.Contains(strings.Join(problems, "\n"), bc.mention) {
				t.Errorf("check %s failed, but no problem mentions %q:\n%s", bc.check, bc.mention, strings.Join(problems, "\n"))
			}
			out, _ := json.Marshal(rep)
			var text strings.Builder
			_ = rep.WriteText(&text, true)
			if strings.Contains(string(out), testKey) || strings.Contains(text.String(), testKey) {
				t.Errorf("the report holds the API key")
			}
			if !bc.unrestorable {
				want := seed
				if bc.empty {
					want = nil
				}
				if got := listStore(t, store); !slices.Equal(got, want) {
					t.Errorf("the suite did not restore the store after its check failed:\n got  %v\n want %v", got, want)
				}
			}
		})
	}
}

// TestEveryCheckHasABrokenServer: no check of the suite goes untested.
func TestEveryCheckHasABrokenServer(t *testing.T) {
	covered := map[string]bool{}
	for _, bc := range brokenCases {
		covered[bc.check] = true
	}
	// It needs replicas and a duration: its broken deployments are
	// brokenDeployments (TestConsistencyCatchesBrokenReplicas).
	covered["consistency/linearizable"] = len(brokenDeployments) > 0
	for _, c := range conformancetest.Checks(conformancetest.LevelContract) {
		if !covered[c.Name] {
			t.Errorf("check %s has no broken server proving it can fail", c.Name)
		}
		delete(covered, c.Name)
	}
	for name := range covered {
		t.Errorf("broken case names check %s, which does not exist", name)
	}
}
