package inventoryotel_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	inventoryotel "github.com/petinventory/petinventory/instrumentation/otel"
)

// Version is the version versions.yaml releases this module at.
func TestVersionIsTheReleasedOne(t *testing.T) {
	f, err := os.Open("../../versions.yaml")
	if err != nil {
		t.Skipf("versions.yaml is not here (not in the repository): %v", err)
	}
	defer f.Close()
	const module = "github.com/petinventory/petinventory/instrumentation/otel"
	version, found := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "version: "); ok {
			version = v // the version of the set whose modules follow
		}
		if line == "- "+module {
			found = version
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if found == "" {
		t.Fatalf("versions.yaml lists no version for %s", module)
	}
	if want := strings.TrimPrefix(found, "v"); inventoryotel.Version() != want {
		t.Errorf("Version() = %q; versions.yaml releases the module at %s", inventoryotel.Version(), found)
	}
}
