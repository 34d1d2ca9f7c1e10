package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// foreignAnswer is an answer that came from something in front of the
// API, for the report's headline.
type foreignAnswer struct {
	check    string
	request  string // "GET http://…/v1/inventory/"
	evidence string
}

// noteForeign remembers an answer that came from something in front of
// the API, once per request line.
func (rn *Runner) noteForeign(check string, ex *wire.Exchange, evidence string) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	req := ex.Req.Method + " " + rn.client.Scrub(ex.URL)
	for _, f := range rn.foreign {
		if f.check == check && f.request == req {
			return
		}
	}
	rn.foreign = append(rn.foreign, foreignAnswer{check: check, request: req, evidence: evidence})
}

// KeyRefusal describes the key's refusal at the start of the run, "" when
// the key was accepted.
func (rn *Runner) KeyRefusal() string {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.refused
}

// Headlines returns what a reader must see first: a refused key and what
// failed or was skipped because of it, and the answers that came from
// something in front of the API.
func (rn *Runner) Headlines(rep *report.Report) []string {
	var out []string
	if refused := rn.KeyRefusal(); refused != "" {
		var failed, skipped []string
		for _, res := range rep.Results {
			switch res.Outcome {
			case report.Fail:
				failed = append(failed, res.Name)
			case report.Skip:
				skipped = append(skipped, res.Name)
			}
		}
		out = append(out, fmt.Sprintf("The API key was refused: %s. Every check that needs a valid key failed or was skipped because of it: "+
			"%d failed (%s) and %d skipped (%s). Give a key the server accepts (the inventory-conformance command reads -api-key, else INVENTORY_API_KEY, "+
			"else the first key of INVENTORY_API_KEYS, the variable the repository's servers read their keys from).",
			refused, len(failed), listOrNone(failed), len(skipped), listOrNone(skipped)))
	}
	rn.mu.Lock()
	foreign := rn.foreign
	rn.mu.Unlock()
	if len(foreign) > 0 {
		var checks []string
		for _, f := range foreign {
			if !slices.Contains(checks, f.check) {
				checks = append(checks, f.check)
			}
		}
		out = append(out, fmt.Sprintf("%s did not come from the API but from something in front of it (a router or proxy that does not pass these requests on), in %s (%s); the first: %s answered so: %s.",
			plural(len(foreign), "answer"), plural(len(checks), "check"), strings.Join(checks, ", "), foreign[0].request, foreign[0].evidence))
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
