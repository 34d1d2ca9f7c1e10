package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
)

func TestLoadSeed(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		path := filepath.Join(dir, "seed.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	items, err := LoadSeed(write(`[{"petId":7,"quantity":1,"status":"sold"}, {"petId":-2,"quantity":0,"status":"pending"}]`))
	want := []inventory.Item{{PetID: 7, Quantity: 1, Status: inventory.StatusSold}, {PetID: -2, Quantity: 0, Status: inventory.StatusPending}}
	if err != nil || !slices.Equal(items, want) {
		t.Fatalf("LoadSeed = %+v, %v; want %+v", items, err, want)
	}
	if items, err := LoadSeed(write(" [ ]\n")); err != nil || items == nil || len(items) != 0 {
		t.Errorf("LoadSeed of [] = %#v, %v; want an empty seed", items, err)
	}
	ok := `{"petId":1,"quantity":1,"status":"sold"}`
	for _, tc := range []struct{ content, says string }{
		{`[` + ok + `,{"petId":20,"quantity":-1,"status":"sold"}]`, "element 2 of the array (pet id 20): quantity -1 is outside"},
		{`[` + ok + `,{"petId":3,"quantity":1,"status":"sold"},{"petId":20,"quantity":1,"status":"lost"}]`, `element 3 of the array (pet id 20): status "lost"`},
		{`[` + ok + `,{"petId":2,"quantity":1,"status":"sold"},` + ok + `]`, "element 3 of the array (pet id 1) repeats the pet id of element 1"},
		{`[` + ok + `,{"petId":2,"qty":1,"status":"sold"}]`, `element 2 of the array: json: unknown field "qty"`},
		{`[` + ok + `,{"petId":"x"}]`, "element 2 of the array"},
		{`{"petId":1}`, "does not start with ["},
		{``, "does not start with ["},
		{`[` + ok, "want a JSON array"},
		{`[` + ok + `] []`, "data after the JSON array"},
	} {
		_, err := LoadSeed(write(tc.content))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("LoadSeed(%s) = %v, want an error saying %q", tc.content, err, tc.says)
		}
	}
	if _, err := LoadSeed(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("LoadSeed of a missing file = %v, want an error naming it", err)
	}
}
