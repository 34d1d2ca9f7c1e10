package server

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Every setting -h names is in docs/OPERATING.md's settings table, on a
// row of its own with its flag, its environment variable and its default,
// and the table has no row for a setting the server does not have.
func TestSettingsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/OPERATING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Settings\n")
	if !ok {
		t.Fatal("docs/OPERATING.md has no ## Settings section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{} // environment variable or flag → the row's cells
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Flag") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		for i := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(cells[i]), "`", "")
		}
		if len(cells) != 4 {
			t.Errorf("docs/OPERATING.md: a settings row without 4 cells: %s", line)
			continue
		}
		rows[cells[0]+" "+cells[1]] = cells
	}
	var usage bytes.Buffer
	writeUsage(&usage, "inventory-server")
	for _, s := range settings {
		fl, env := "–", "–"
		if s.flag != "" {
			fl = "-" + s.flag
		}
		if s.env != "" {
			env = s.env
		}
		if !strings.Contains(usage.String(), " "+s.name()+" ") {
			t.Errorf("-h does not name %s:\n%s", s.name(), usage.String())
		}
		cells, ok := rows[fl+" "+env]
		if !ok {
			t.Errorf("docs/OPERATING.md has no row | %s | %s | …", fl, env)
			continue
		}
		delete(rows, fl+" "+env)
		if cells[2] != s.defaultText() {
			t.Errorf("docs/OPERATING.md gives %s the default %q; -h says %q", s.name(), cells[2], s.defaultText())
		}
	}
	for k := range rows {
		t.Errorf("docs/OPERATING.md has a row for %s, which is not a setting", k)
	}
}

// Each Config field's comment ends with its default as the settings table
// has it ("Default: 2s.", "Default: \":8080\"."), and every field is set
// by one setting at least.
func TestConfigCommentsGiveDefaults(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "config.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range fld.Names {
				docs[name.Name] = fld.Doc.Text()
			}
		}
		return false
	})
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if !strings.Contains(docs[name], "Default: ") {
			t.Errorf("Config.%s: its comment gives no default", name)
		}
		if !hasSetting(name) {
			t.Errorf("Config.%s: no setting sets it", name)
		}
	}
	for _, s := range settings {
		field, _ := typ.FieldByName(s.field)
		var want string
		switch {
		case field.Type.Kind() == reflect.Slice:
			want = "Default: none"
		case field.Type.Kind() == reflect.String:
			want = "Default: " + strconv.Quote(s.def)
		default:
			want = "Default: " + s.def
		}
		if !strings.Contains(docs[s.field], want) {
			t.Errorf("Config.%s: its comment does not say %q (the default of %s):\n%s", s.field, want, s.name(), docs[s.field])
		}
	}
}

func hasSetting(field string) bool {
	for _, s := range settings {
		if s.field == field {
			return true
		}
	}
	return false
}
