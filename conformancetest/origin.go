package conformancetest

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// notFromAPI returns the evidence that an answer came from something in
// front of the API (a router's or a proxy's own answer) rather than from
// the API, or "" when nothing says so. Every answer of the API that is an
// error carries an Error body, and every body of the API is JSON: a
// plain-text, HTML or empty error, or JSON that is not an Error, was
// written by something else.
func notFromAPI(ex *exchange) string {
	if ex == nil || ex.resp == nil || ex.resp.status == http.StatusNotModified {
		return ""
	}
	resp := ex.resp
	ct := resp.header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	var evidence []string
	switch {
	case resp.status >= 400 && ex.req.method != http.MethodHead:
		body, err := resp.identityBody()
		if err != nil {
			return ""
		}
		v, jerr := decodeJSON(body)
		obj, isObj := v.(map[string]any)
		_, hasCode := obj["code"]
		switch {
		case len(body) == 0:
			evidence = append(evidence, "the body is empty, not an Error")
		case jerr != nil || !isObj || !hasCode:
			evidence = append(evidence, fmt.Sprintf("the body is `%s`, not an Error", shorten(strings.Join(strings.Fields(showBody(body)), " "), 80)))
		default:
			return ""
		}
		if ct == "" {
			evidence = append(evidence, "no Content-Type")
		} else if mt != "application/json" {
			evidence = append(evidence, "Content-Type: "+ct)
		}
	case mt == "text/html" || (resp.status >= 400 && strings.HasPrefix(mt, "text/")):
		evidence = append(evidence, "Content-Type: "+ct)
	default:
		return ""
	}
	for _, h := range []string{"Server", "Via", "X-Powered-By"} {
		if v := resp.header.Get(h); v != "" {
			evidence = append(evidence, h+": "+v)
		}
	}
	who := "something in front of the API (router or proxy)"
	switch resp.status {
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		who = "a proxy or gateway in front of the API"
	}
	return fmt.Sprintf("this %d came from %s: %s", resp.status, who, strings.Join(evidence, "; "))
}

// foreignAnswer is an answer that came from something in front of the
// API, for the report's headline.
type foreignAnswer struct {
	check    string
	request  string // "GET http://…/v1/inventory/"
	evidence string
}

// keyRefusal describes the key's refusal at the start of the run, "" when
// the key was accepted.
func (rn *runner) keyRefusal() string {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.refused
}

// headlines returns what a reader must see first: a refused key and what
// failed or was skipped because of it, and the answers that came from
// something in front of the API.
func (rn *runner) headlines(rep *Report) []string {
	var out []string
	if refused := rn.keyRefusal(); refused != "" {
		var failed, skipped []string
		for _, res := range rep.Results {
			switch res.Outcome {
			case Fail:
				failed = append(failed, res.Name)
			case Skip:
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
			if !containsString(checks, f.check) {
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

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// frontRefusal reports whether ex was refused by a standard intermediary
// (a proxy or load balancer) before the API could see it: a 400 that did
// not come from the API, to a request that intermediaries refuse as
// malformed although HTTP allows it (a method name in lower case, which
// nginx refuses whatever its settings). It returns who refused (the
// Server or Via header) and what in the request was refused.
func frontRefusal(ex *exchange) (who, what string, ok bool) {
	if ex.resp == nil || ex.resp.status != http.StatusBadRequest || notFromAPI(ex) == "" {
		return "", "", false
	}
	if ex.req.method != strings.ToLower(ex.req.method) {
		return "", "", false
	}
	// The answer is known not to be the API's: any Server header names
	// what gave it.
	if who = proxyName(ex.resp.header, true); who == "" {
		who = "an intermediary in front of the API"
	}
	return who, "a method name in lower case", true
}

// knownIntermediaries are the Server header values of proxies and load
// balancers that may stand in front of an API (lower case, matched as a
// prefix): the API itself sends no Server header, and neither do Gin,
// Fiber or net/http by default.
var knownIntermediaries = []string{"nginx", "openresty", "envoy", "haproxy", "traefik", "caddy", "apache", "cloudflare", "awselb", "istio-envoy", "kong", "varnish"}

// intermediary names the proxy in front of the API, as the answer to a
// plain list shows it (a Via header, or a Server header of a known proxy),
// or "" when the answer shows none. A check asks it only to tell a request
// an intermediary held from one the API failed.
func (c *checker) intermediary() string {
	ex := c.try(request{method: http.MethodGet, path: "/inventory"})
	if ex.err != nil {
		return ""
	}
	// The answer is the API's, passed on: only a Server header of a known
	// proxy names one (an implementation may send its own).
	return proxyName(ex.resp.header, false)
}

// proxyName names the intermediary an answer's headers show: its Server
// header (any value when anyServer, else only a known proxy's), or else
// the proxy of its Via header; "" when they show none.
func proxyName(h http.Header, anyServer bool) string {
	if v := h.Get("Server"); v != "" {
		if anyServer {
			return v
		}
		for _, p := range knownIntermediaries {
			if strings.HasPrefix(strings.ToLower(v), p) {
				return v
			}
		}
	}
	if v := h.Get("Via"); v != "" {
		return "the proxy of Via: " + v
	}
	return ""
}

// noteNotJudged records a request of the check that an intermediary kept
// from the API: the check is then not judged through it (a skip that says
// so) unless it failed on another request.
func (c *checker) noteNotJudged(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notJudged = append(c.notJudged, fmt.Sprintf(format, args...))
}

// refusedInFront reports whether ex was refused before the API could see
// it (see frontRefusal). Such a request cannot be judged through that
// intermediary: the check notes it as not judged, naming it, instead of
// failing. An answer that came from the API, or any other status, is
// judged as usual, so a proxy that changes the API's answers still fails.
func (c *checker) refusedInFront(ex *exchange) bool {
	who, what, ok := frontRefusal(ex)
	if !ok {
		return false
	}
	c.noteNotJudged("%s %s (%s) was refused by %s with its own 400 before the API could see it", ex.req.method, c.rn.scrub(ex.url), what, who)
	return true
}
