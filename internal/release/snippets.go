package release

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The documents' Go snippets are compiled (and the app ones run) by
// TestRelease, read from SnippetFiles at test time so that they cannot
// drift from what users copy. The convention:
//
//   - A snippet is a ```go fenced block whose opening line follows a marker
//     comment <!-- release-test snippet "NAME" ... --> (blank lines between
//     them allowed).
//   - Every name of SnippetNames must be marked exactly once, in one of
//     SnippetFiles; a marker with another name, or with no ```go block
//     after it, is an error.
//   - The block becomes, verbatim, the body of a function returning error in
//     snippets/NAME.go.tmpl (at the line "//README-SNIPPET"); the
//     template declares what the snippet uses but does not define (gin:
//     engine, items; fiber: store, key; nethttp: api, healthz; chi, echo,
//     gorillamux: api; redis: ctx, log, items), uses what it defines (fiber:
//     app; redis: store; nethttp: mux; chi, gorillamux: r; echo: e), and
//     imports the packages it may use. Edit a snippet freely; if it needs
//     another outside name or import, change its template too. A //line
//     directive makes compile errors point at the document's own lines.
//   - The app snippets (AppSnippets) then run, with the key in
//     $INVENTORY_API_KEYS and $INVENTORY_API_KEY, and must pass
//     inventory-conformance.

// SnippetFiles are the documents, relative to the repository's root, that
// hold the snippets: the README's Gin one, the embedding guide's others.
var SnippetFiles = []string{"README.md", "docs/EMBEDDING.md"}

// SnippetNames are the snippets the release test compiles: all but
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

// Snippet is one marked ```go block of a document.
type Snippet struct {
	Name string
	File string // the document, as in SnippetFiles
	Line int    // line number in File of the block's first code line
	Code string // the lines between the fences, with a final newline
}

// Doc is a document that may hold snippets, by its path in the repository.
type Doc struct {
	Path string
	Text []byte
}

// ReadSnippets reads the snippets of SnippetFiles in the repository at root.
func ReadSnippets(root string) (map[string]Snippet, error) {
	var docs []Doc
	for _, f := range SnippetFiles {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		docs = append(docs, Doc{Path: f, Text: text})
	}
	return ExtractSnippets(docs...)
}

//go:embed snippets/*.go.tmpl
var templates embed.FS

var markerRE = regexp.MustCompile(`^<!--\s*release-test snippet "([^"]*)"`)

// ExtractSnippets returns the marked snippets of the documents, by name, and
// an error naming the document and line at fault when the convention is not
// kept.
func ExtractSnippets(docs ...Doc) (map[string]Snippet, error) {
	out := map[string]Snippet{}
	for _, d := range docs {
		if err := extract(d, out); err != nil {
			return nil, err
		}
	}
	for _, name := range SnippetNames {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("%s: no release-test snippet %q (a ```go block after <!-- release-test snippet %q -->)", strings.Join(SnippetFiles, ", "), name, name)
		}
	}
	return out, nil
}

// extract adds the snippets of d to out.
func extract(d Doc, out map[string]Snippet) error {
	lines := strings.Split(strings.ReplaceAll(string(d.Text), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		name, markerLine := m[1], i+1
		if !slices.Contains(SnippetNames, name) {
			return fmt.Errorf("%s:%d: release-test snippet %q: no template for it (known: %s); add snippets/%s.go.tmpl in internal/release", d.Path, markerLine, name, strings.Join(SnippetNames, ", "), name)
		}
		if prev, ok := out[name]; ok {
			return fmt.Errorf("%s:%d: release-test snippet %q is marked twice (also before %s:%d)", d.Path, markerLine, name, prev.File, prev.Line)
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
			return fmt.Errorf("%s:%d: release-test snippet %q is not followed by a ```go block", d.Path, markerLine, name)
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end >= len(lines) {
			return fmt.Errorf("%s:%d: release-test snippet %q: its ```go block is never closed", d.Path, markerLine, name)
		}
		out[name] = Snippet{Name: name, File: d.Path, Line: start + 1, Code: strings.Join(lines[start:end], "\n") + "\n"}
		i = end
	}
	return nil
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
	// Compile errors in the snippet name the document's lines; the
	// template's own lines keep their numbers after it.
	fmt.Fprintf(&b, "//line %s:%d\n%s//line %s.go.tmpl:%d\n", s.File, s.Line, s.Code, s.Name, bytes.Count(before, []byte("\n"))+2)
	b.Write(after)
	return b.Bytes(), nil
}
