package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotFixture draws every chart from the committed fixture (the
// layout the benchmark scripts write, no timing) and checks that each
// SVG is there, is XML, and says the machine, the date and the command.
func TestPlotFixture(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	if err := run([]string{"-in", "testdata/bench", "-out", out}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, c := range charts {
		b, err := os.ReadFile(filepath.Join(out, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 {
			t.Errorf("%s: %d bytes", c.file, len(b))
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		var root string
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not XML: %v", c.file, err)
			}
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		if root != "svg" {
			t.Errorf("%s: root element %q", c.file, root)
		}
		for _, want := range []string{"Fixture CPU", "2026-11-23 08:15 UTC", "commit 0000000", "scripts/bench/"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s does not say %q", c.file, want)
			}
		}
	}
	if got := strings.Count(log.String(), "wrote "); got != len(charts) {
		t.Errorf("wrote %d charts, want %d:\n%s", got, len(charts), log.String())
	}
}

// TestPlotErrors: missing or broken input is an error that names it.
func TestPlotErrors(t *testing.T) {
	copyFixture := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS("testdata/bench")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"no in-process results", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "inprocess")) }, "inprocess.sh"},
		{"no Redis results", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "redis")) }, "redis.sh"},
		{"no machine.txt", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "redis", "machine.txt")) }, "machine.txt"},
		{"a garbled ns/op", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "inprocess", "gin.r3.txt"), []byte("BenchmarkUpdate/lib-2 100 fast ns/op\n"), 0o644)
		}, "gin.r3.txt:1"},
		{"a million.tsv row short of fields", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "million", "million.tsv"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("5000\t1\n")
			f.Close()
		}, "million.tsv:5: 2 fields"},
		{"a million.tsv without rows", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "million", "million.tsv"), []byte("pets\tlist_ms\n"), 0o644)
		}, "no row under the header"},
		{"a million.tsv with a bad size", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "million", "million.tsv"))
			os.WriteFile(filepath.Join(dir, "million", "million.tsv"), []byte(strings.Replace(string(b), "\n1000\t", "\nlots\t", 1)), 0o644)
		}, "pets \"lots\""},
		{"a million.tsv column with no value", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "million", "million.tsv"))
			os.WriteFile(filepath.Join(dir, "million", "million.tsv"), []byte(strings.ReplaceAll(string(b), "slowest_ms", "slowest")), 0o644)
		}, "no value of slowest_ms"},
		{"million.tsv without its machine.txt", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "million", "machine.txt")) }, "million/machine.txt"},
		{"a benchmark missing", func(t *testing.T, dir string) {
			for _, f := range []string{"fiber.r1.txt", "fiber.r2.txt"} {
				os.Remove(filepath.Join(dir, "inprocess", f))
			}
		}, "no result for fiber"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFixture(t)
			tc.setup(t, dir)
			err := run([]string{"-in", dir, "-out", t.TempDir()}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one that mentions %q", err, tc.want)
			}
		})
	}
	// Without million.sh's output, its chart is skipped and the others drawn.
	dir := copyFixture(t)
	os.RemoveAll(filepath.Join(dir, "million"))
	var log bytes.Buffer
	if err := run([]string{"-in", dir, "-out", t.TempDir()}, &log); err != nil {
		t.Errorf("without million/: %v", err)
	}
	if !strings.Contains(log.String(), "skipped") || !strings.Contains(log.String(), "million.sh") || strings.Count(log.String(), "wrote ") != len(charts)-2 {
		t.Errorf("without million/, want million.svg and wire.svg skipped and the others written:\n%s", log.String())
	}
	if err := run(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no -in: %v", err)
	}
}

// TestCommittedCharts: the charts under docs/bench are what this program
// draws from the benchmark output committed next to them (docs/bench/data),
// so that they cannot drift from the run the tables of BENCHMARKS.md come
// from. Regenerate with:
//
//	go run ./scripts/bench/plot -in docs/bench/data -out docs/bench
func TestCommittedCharts(t *testing.T) {
	const docs = "../../../docs/bench"
	out := t.TempDir()
	if err := run([]string{"-in", filepath.Join(docs, "data"), "-out", out}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		want, err := os.ReadFile(filepath.Join(out, c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(docs, c.file))
		if err != nil {
			t.Fatalf("%v (regenerate: go run ./scripts/bench/plot -in docs/bench/data -out docs/bench)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/bench/%s differs from what docs/bench/data draws; regenerate: go run ./scripts/bench/plot -in docs/bench/data -out docs/bench", c.file)
		}
	}
}
