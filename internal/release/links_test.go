package release

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkDocs are the documents whose relative links TestDocLinks follows:
// the README, everything in docs/, and the other documents they send
// readers to.
var linkDocs = []string{"README.md", "docs/*.md", "BENCHMARKS.md", "CHANGELOG.md", "conformancetest/README.md", "deploy/kubernetes/README.md"}

// TestDocLinks fails for a relative link of linkDocs whose file does not
// exist, or whose #anchor names no heading of a Markdown file (as GitHub
// makes anchors of headings), so that moving a section is seen at once.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, pattern := range linkDocs {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil || len(m) == 0 {
			t.Fatalf("no document matches %s (%v)", pattern, err)
		}
		files = append(files, m...)
	}
	anchors := map[string]map[string]bool{} // by cleaned path
	checked := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(text)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			path := file // a bare #anchor is in the same file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), filepath.FromSlash(target))
			}
			rel, _ := filepath.Rel(root, file)
			where := fmt.Sprintf("%s:%d: link %q", filepath.ToSlash(rel), l.line, l.target)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: no such file", where)
				continue
			}
			checked++
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			key := filepath.Clean(path)
			if anchors[key] == nil {
				md, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				anchors[key] = headingAnchors(string(md))
			}
			if !anchors[key][anchor] {
				t.Errorf("%s: no heading of %s has the anchor #%s", where, filepath.Base(path), anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no link checked: the link pattern finds nothing")
	}
}

type mdLink struct {
	line   int
	target string
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// markdownLinks returns the relative link targets of a Markdown text,
// outside fenced code blocks and inline code.
func markdownLinks(text string) []mdLink {
	var out []mdLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripInlineCode(line), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, mdLink{line: i + 1, target: target})
		}
	}
	return out
}

var inlineCodeRE = regexp.MustCompile("`[^`]*`")

func stripInlineCode(line string) string {
	// A link's text may be code ([`docs/API.md`](docs/API.md)): keep the
	// brackets, drop what is between backticks.
	return inlineCodeRE.ReplaceAllString(line, "")
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, spaces as hyphens, punctuation other than
// hyphens and underscores dropped, a repeated anchor suffixed -1, -2, ….
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n := 1; out[a]; n++ {
			a = fmt.Sprintf("%s-%d", b.String(), n)
		}
		out[a] = true
	}
	return out
}

func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# T\n## A managed Redis: configuration faults\n### Caching (`ETag`, `If-None-Match`)\n```\n# not a heading\n```\n## Twice\n## Twice\n## The list through examples/redis\n")
	for _, want := range []string{"a-managed-redis-configuration-faults", "caching-etag-if-none-match", "twice", "twice-1", "the-list-through-examplesredis"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a code block made an anchor")
	}
}

// runbookURL is a runbook_url of deploy/prometheus/alerts.yaml: the
// repository's docs/OPERATING.md on GitHub, and a heading's anchor.
var runbookURL = regexp.MustCompile(`runbook_url:\s*(\S+)`)

const runbookBase = "https://github.com/petinventory/petinventory/blob/main/docs/OPERATING.md#"

// TestRunbookLinks fails for an alert of deploy/prometheus/alerts.yaml
// whose runbook_url is not a heading of docs/OPERATING.md, as GitHub
// makes anchors of headings: the alert would send whoever is paged to
// the top of the page.
func TestRunbookLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	rules, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "OPERATING.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(doc))
	urls := runbookURL.FindAllStringSubmatch(string(rules), -1)
	if len(urls) == 0 {
		t.Fatal("deploy/prometheus/alerts.yaml has no runbook_url")
	}
	for _, m := range urls {
		anchor, ok := strings.CutPrefix(strings.Trim(m[1], `'"`), runbookBase)
		if !ok || !anchors[anchor] {
			t.Errorf("runbook_url %s: not %s followed by the anchor of a heading of docs/OPERATING.md", m[1], runbookBase)
		}
	}
}
