package e2e

import (
	"slices"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
)

// TestConformance runs the whole conformance suite against every transport
// × every store, each on a fresh store, and then checks that the suite
// left the store as it found it.
func TestConformance(t *testing.T) {
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
