package release

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAPIDoc holds docs/API.md to the exported names of every released
// package: a name exported without its row, or a row naming what is not
// exported, fails with the list of both.
func TestAPIDoc(t *testing.T) {
	r, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exports, err := r.Exports()
	if err != nil {
		t.Fatal(err)
	}
	if len(exports["inventory"]) == 0 || len(exports["storage/redis"]) == 0 {
		t.Fatalf("found no exported names of inventory or storage/redis: %v", exports)
	}
	if err := r.CheckAPIDoc(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckAPIDocNamesMissingAndStale(t *testing.T) {
	s := func(v string) *string { return &v }
	dir := newRepo(t, map[string]*string{
		"a/a.go": s(`package a

import "example.com/r"

// A uses r.
const A = r.R

type T struct{ Field int }

func (T) M()          {}
func (*T) N()         {}
func (T) unexported() {}

type hidden struct{}

func (hidden) M() {}

func F() {}

var (
	V1, v2 = 1, 2
)
`),
		"a/internal/x/x.go": s("package x\n\nconst X = 1\n"),
		"a/cmd/c/main.go":   s("package main\n\nconst C = 1\n\nfunc main() {}\n"),
		"b/b.go":            s("package b\n\nconst B = 1\n"), // excluded from releases
		"docs/API.md": s("# API\n\n| `A` | outside any package section |\n\n" +
			"## Package `.`\n\n| name | audience | decision |\n|---|---|---|\n| `R` | app | stays. |\n\n" +
			"## Package `a` (`a`)\n\n| name | audience | decision |\n|---|---|---|\n" +
			"| `A`, `T`, `T.M()` | app | stay; `F` is not read from this cell. |\n| `Gone(x)`, `T.Field` | app | removed. |\n"),
	})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	exports, err := r.Exports()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := exports["a"], []string{"A", "F", "T", "T.M", "T.N", "V1"}; !slices.Equal(got, want) {
		t.Errorf("exports of a = %v, want %v", got, want)
	}
	if len(exports) != 2 {
		t.Errorf("exports = %v, want only the root package and a (no internal, command or excluded module)", exports)
	}
	err = r.CheckAPIDoc()
	if err == nil {
		t.Fatal("CheckAPIDoc passed a document with missing and stale names")
	}
	msg := err.Error()
	missing, stale, ok := strings.Cut(msg, "named in a row but not exported")
	if !ok {
		t.Fatalf("error does not list stale names:\n%s", msg)
	}
	for _, want := range []string{"a: `F`", "a: `T.N`", "a: `V1`"} {
		if !strings.Contains(missing, want) {
			t.Errorf("error does not list %s as missing:\n%s", want, msg)
		}
	}
	for _, want := range []string{"a: `Gone`", "a: `T.Field`"} {
		if !strings.Contains(stale, want) {
			t.Errorf("error does not list %s as stale:\n%s", want, msg)
		}
	}
	for _, notWant := range []string{"`R`", "`A`", "`T`\n", "`T.M`", "`X`", "`C`", "`B`", "hidden", "unexported"} {
		if strings.Contains(msg, notWant) {
			t.Errorf("error lists %s:\n%s", notWant, msg)
		}
	}
}
