package release

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The README's Go snippets are compiled (and the app ones run) by
// TestRelease, read from README.md at test time so that they cannot drift
// from what users copy. The convention, also written next to them in
// README.md:
//
//   - A snippet is a ```go fenced block whose opening line follows a marker
//     comment <!-- release-test snippet "NAME" ... --> (blank lines between
//     them allowed).
//   - Every name of SnippetNames must be marked exactly once; a marker with
//     another name, or with no ```go block after it, is an error.
//   - The block becomes, verbatim, the body of a function returning error in
//     snippets/NAME.go.tmpl (at the line "//README-SNIPPET"); the
//     template declares what the snippet uses but does not define, uses what
//     it defines, and imports the packages it may use. A //line directive
//     makes compile errors point at README.md's own lines.

// SnippetNames are the README snippets the release test compiles: all but
// redis are then run as apps and checked with inventory-conformance (see
// AppSnippets); redis is compiled only (it would need a server).
var SnippetNames = []string{"gin", "fiber", "nethttp", "chi", "echo", "gorillamux", "redis"}

// AppSnippets are the snippets run as apps.
var AppSnippets = []string{"gin", "fiber", "nethttp", "chi", "echo", "gorillamux"}

// SnippetModules are the third-party modules the router snippets import
// (Gin and Fiber come with the adapters' modules), at the versions the
// release test fetches into the user's module.
var SnippetModules = []string{
	"github.com/go-chi/chi/v5@v5.5.0",
	"github.com/labstack/echo/v4@v4.16.0",
	"github.com/gorilla/mux@v1.8.1",
}

// Snippet is one marked ```go block of README.md.
type Snippet struct {
	Name string
	Line int    // line number in README.md of the block's first code line
	Code string // the lines between the fences, with a final newline
}

//go:embed snippets/*.go.tmpl
var templates embed.FS

var markerRE = regexp.MustCompile(`^<!--\s*release-test snippet "([^"]*)"`)

// ExtractSnippets returns the marked snippets of a README, by name, and an
// error naming the README line at fault when the convention is not kept.
func ExtractSnippets(readme []byte) (map[string]Snippet, error) {
	lines := strings.Split(strings.ReplaceAll(string(readme), "\r\n", "\n"), "\n")
	out := map[string]Snippet{}
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		name, markerLine := m[1], i+1
		if !slices.Contains(SnippetNames, name) {
			return nil, fmt.Errorf("README.md:%d: release-test snippet %q: no template for it (known: %s); add snippets/%s.go.tmpl in internal/release", markerLine, name, strings.Join(SnippetNames, ", "), name)
		}
		if prev, ok := out[name]; ok {
			return nil, fmt.Errorf("README.md:%d: release-test snippet %q is marked twice (also before line %d)", markerLine, name, prev.Line)
		}
		// The marker comment may span lines; the block follows its end.
		for i < len(lines) && !strings.Contains(lines[i], "-->") {
			i++
		}
		i++
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
		if i >= len(lines) || strings.TrimSpace(lines[i]) != "```go" {
			return nil, fmt.Errorf("README.md:%d: release-test snippet %q is not followed by a ```go block", markerLine, name)
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end >= len(lines) {
			return nil, fmt.Errorf("README.md:%d: release-test snippet %q: its ```go block is never closed", markerLine, name)
		}
		out[name] = Snippet{Name: name, Line: start + 1, Code: strings.Join(lines[start:end], "\n") + "\n"}
		i = end
	}
	for _, name := range SnippetNames {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("README.md: no release-test snippet %q (a ```go block after <!-- release-test snippet %q -->)", name, name)
		}
	}
	return out, nil
}

// Program returns the Go source of a main package that holds the snippet in
// its template.
func Program(s Snippet) ([]byte, error) {
	tmpl, err := templates.ReadFile("snippets/" + s.Name + ".go.tmpl")
	if err != nil {
		return nil, fmt.Errorf("snippet %q: %w", s.Name, err)
	}
	const placeholder = "//README-SNIPPET\n"
	before, after, ok := bytes.Cut(tmpl, []byte(placeholder))
	if !ok {
		return nil, fmt.Errorf("snippets/%s.go.tmpl has no line %q", s.Name, strings.TrimSpace(placeholder))
	}
	var b bytes.Buffer
	b.Write(before)
	// Compile errors in the snippet name README.md's lines; the template's
	// own lines keep their numbers after it.
	fmt.Fprintf(&b, "//line README.md:%d\n%s//line %s.go.tmpl:%d\n", s.Line, s.Code, s.Name, bytes.Count(before, []byte("\n"))+2)
	b.Write(after)
	return b.Bytes(), nil
}
