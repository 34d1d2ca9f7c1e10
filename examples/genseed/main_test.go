package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/petinventory/petinventory/server"
)

// gen runs genseed with args into a file and loads it the way
// examples/redis -seed does.
func gen(t *testing.T, args ...string) ([]inventory.Item, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := run(append(args, "-o", path), nil); err != nil {
		t.Fatalf("genseed %v: %v", args, err)
	}
	items, err := server.LoadSeed(path)
	if err != nil {
		t.Fatalf("examples/redis would refuse the seed of genseed %v: %v", args, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return items, raw
}

func TestSeedIsValidAndComplete(t *testing.T) {
	for _, ids := range []string{"seq", "spread"} {
		t.Run(ids, func(t *testing.T) {
			const n = 30000
			items, _ := gen(t, "-pets", "30000", "-ids", ids)
			if len(items) != n {
				t.Fatalf("%d items, want %d", len(items), n)
			}
			var count [3]int
			var maxQ int
			for i, it := range items {
				if ids == "seq" && it.PetID != int64(i+1) {
					t.Fatalf("item %d has petId %d, want %d", i, it.PetID, i+1)
				}
				if ids == "spread" && (it.PetID <= int64(i)*1000 || it.PetID > int64(i+1)*1000) {
					t.Fatalf("item %d has petId %d, want one in %d..%d", i, it.PetID, i*1000+1, (i+1)*1000)
				}
				if it.Quantity < 0 || it.Quantity > maxQuantity {
					t.Fatalf("item %d: quantity %d outside 0..%d", i, it.Quantity, maxQuantity)
				}
				maxQ = max(maxQ, it.Quantity)
				for s, name := range statuses {
					if string(it.Status) == name {
						count[s]++
					}
				}
			}
			for s, c := range count {
				if c < n/4 { // each a third, give or take
					t.Errorf("%d items of %d are %s: the statuses are not mixed (%v)", c, n, statuses[s], count)
				}
			}
			if maxQ < maxQuantity*9/10 {
				t.Errorf("largest quantity %d: the quantities do not cover 0..%d", maxQ, maxQuantity)
			}
		})
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	_, a := gen(t, "-pets", "500", "-ids", "spread", "-seed", "7")
	_, b := gen(t, "-pets", "500", "-ids", "spread", "-seed", "7")
	_, c := gen(t, "-pets", "500", "-ids", "spread", "-seed", "8")
	if !bytes.Equal(a, b) {
		t.Error("the same flags gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("-seed 7 and -seed 8 gave the same file: the seed is not used")
	}
	// Standard output gets the same bytes as -o.
	var out bytes.Buffer
	if err := run([]string{"-pets", "500", "-ids", "spread", "-seed", "7"}, &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), a) {
		t.Error("standard output differs from the file -o writes")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-pets", "0"}, "-pets 0"},
		{[]string{"-pets", "10000001"}, "-pets 10000001"},
		{[]string{"-ids", "random"}, "-ids \"random\""},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"-nope"}, "not defined"},
		{[]string{"-o", filepath.Join(t.TempDir(), "missing", "seed.json")}, "no such file"},
	} {
		err := run(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("genseed %v: error %v, want one that mentions %q", tc.args, err, tc.want)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write that fails is an error, and -o leaves no truncated file behind
// for a later run to seed from.
func TestWriteFailure(t *testing.T) {
	if err := run([]string{"-pets", "100000"}, failingWriter{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("writing to a failing writer: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fail a file write on")
	}
	// A link to /dev/full: opening it works, writing fails, and removing
	// it removes the link only.
	link := filepath.Join(t.TempDir(), "seed.json")
	if err := os.Symlink("/dev/full", link); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-pets", "100000", "-o", link}, nil)
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("writing to /dev/full: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file of a failed write is still there: %v", err)
	}
}
