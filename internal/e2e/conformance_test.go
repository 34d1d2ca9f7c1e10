package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
)

// TestConformance runs the whole conformance suite against every transport
// × every store, each on a fresh store, and then checks that the suite
// left the store as it found it.
func TestConformance(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	for _, st := range stores {
		for _, tr := range transports {
			t.Run(tr.name+"/"+st.name, func(t *testing.T) {
				store := st.open(t, seed...)
				base := tr.serve(t, nil, newAPI(t, store))
				conformancetest.Run(t, conformancetest.Config{BaseURL: base, APIKey: testKey})
				if got := listStore(t, store); !slices.Equal(got, seed) {
					t.Errorf("the suite did not restore the store:\n got  %v\n want %v", got, seed)
				}
			})
		}
	}
}

// TestEmptyInventory: against an empty inventory nothing fails, and the
// checks that need a pet are skipped with that reason.
func TestEmptyInventory(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	base := serveNetHTTP(t, nil, newAPI(t, openMemory(t)))
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		var buf strings.Builder
		_ = rep.WriteText(&buf, false)
		t.Fatalf("the suite failed on an empty inventory:\n%s", buf.String())
	}
	for _, name := range []string{"update/ok", "update/replaces", "concurrency/parallel-updates", "media/absent"} {
		res, _ := rep.Result(name)
		if res.Outcome != conformancetest.Skip || !strings.Contains(res.Reason, "inventory is empty") {
			t.Errorf("%s: %s %q, want skipped because the inventory is empty", name, res.Outcome, res.Reason)
		}
	}
	if res, _ := rep.Result("body/missing-quantity"); res.Outcome != conformancetest.Pass {
		t.Errorf("body/missing-quantity: %s; with no pet it aims at an unlisted id and must still run", res.Outcome)
	}
}
