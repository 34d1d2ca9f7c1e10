package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateList = flag.Bool("update-list", false, "rewrite testdata/list-*.txt from the checks as they are now")

// TestListGolden holds -list, at each level, to testdata/list-LEVEL.txt:
// the checks' names, order, sources, rules and whether they write are
// what users select with -run and -skip, read in reports and compare
// across releases, so that none changes by accident (a rename, a check
// moved to another place in the run). After a change meant to be seen,
// regenerate the files and review their diff:
//
//	go test ./cmd/inventory-conformance -run TestListGolden -update-list
func TestListGolden(t *testing.T) {
	for _, level := range []string{"contract", "spec"} {
		t.Run(level, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"-list", "-level", level}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			path := filepath.Join("testdata", "list-"+level+".txt")
			if *updateList {
				if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stdout.Bytes(), want) {
				t.Errorf("-list -level %s differs from %s: a check was renamed, moved, added or reworded. "+
					"If that is meant, regenerate it (-update-list) and review the diff.\ngot:\n%s", level, path, stdout.String())
			}
		})
	}
}
