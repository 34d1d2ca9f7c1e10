package wire

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// NotFromAPI returns the evidence that an answer came from something in
// front of the API (a router's or a proxy's own answer) rather than from
// the API, or "" when nothing says so. Every answer of the API that is an
// error carries an Error body, and every body of the API is JSON: a
// plain-text, HTML or empty error, or JSON that is not an Error, was
// written by something else.
func NotFromAPI(ex *Exchange) string {
	if ex == nil || ex.Resp == nil || ex.Resp.Status == http.StatusNotModified {
		return ""
	}
	resp := ex.Resp
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	var evidence []string
	switch {
	case resp.Status >= 400 && ex.Req.Method != http.MethodHead:
		body, err := resp.IdentityBody()
		if err != nil {
			return ""
		}
		v, jerr := DecodeJSON(body)
		obj, isObj := v.(map[string]any)
		_, hasCode := obj["code"]
		switch {
		case len(body) == 0:
			evidence = append(evidence, "the body is empty, not an Error")
		case jerr != nil || !isObj || !hasCode:
			evidence = append(evidence, fmt.Sprintf("the body is `%s`, not an Error", Shorten(strings.Join(strings.Fields(ShowBody(body)), " "), 80)))
		default:
			return ""
		}
		if ct == "" {
			evidence = append(evidence, "no Content-Type")
		} else if mt != "application/json" {
			evidence = append(evidence, "Content-Type: "+ct)
		}
	case mt == "text/html" || (resp.Status >= 400 && strings.HasPrefix(mt, "text/")):
		evidence = append(evidence, "Content-Type: "+ct)
	default:
		return ""
	}
	for _, h := range []string{"Server", "Via", "X-Powered-By"} {
		if v := resp.Header.Get(h); v != "" {
			evidence = append(evidence, h+": "+v)
		}
	}
	who := "something in front of the API (router or proxy)"
	switch resp.Status {
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		who = "a proxy or gateway in front of the API"
	}
	return fmt.Sprintf("this %d came from %s: %s", resp.Status, who, strings.Join(evidence, "; "))
}

// FrontRefusal reports whether ex was refused by a standard intermediary
// (a proxy or load balancer) before the API could see it: a 400 that did
// not come from the API, to a request that intermediaries refuse as
// malformed although HTTP allows it (a method name in lower case, which
// nginx refuses whatever its settings). It returns who refused (the
// Server or Via header) and what in the request was refused.
func FrontRefusal(ex *Exchange) (who, what string, ok bool) {
	if ex.Resp == nil || ex.Resp.Status != http.StatusBadRequest || NotFromAPI(ex) == "" {
		return "", "", false
	}
	if ex.Req.Method != strings.ToLower(ex.Req.Method) {
		return "", "", false
	}
	// The answer is known not to be the API's: any Server header names
	// what gave it.
	if who = ProxyName(ex.Resp.Header, true); who == "" {
		who = "an intermediary in front of the API"
	}
	return who, "a method name in lower case", true
}

// knownIntermediaries are the Server header values of proxies and load
// balancers that may stand in front of an API (lower case, matched as a
// prefix): the API itself sends no Server header, and neither do Gin,
// Fiber or net/http by default.
var knownIntermediaries = []string{"nginx", "openresty", "envoy", "haproxy", "traefik", "caddy", "apache", "cloudflare", "awselb", "istio-envoy", "kong", "varnish"}

// ProxyName names the intermediary an answer's headers show: its Server
// header (any value when anyServer, else only a known proxy's), or else
// the proxy of its Via header; "" when they show none.
func ProxyName(h http.Header, anyServer bool) string {
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

// ErrorSummary describes an answer briefly: `404 (code "not_found")`.
func ErrorSummary(resp *Response) string {
	var e struct {
		Code any `json:"code"`
	}
	if json.Unmarshal(resp.Body, &e) == nil {
		if s, ok := e.Code.(string); ok {
			return fmt.Sprintf("%d (code %q)", resp.Status, s)
		}
	}
	return strconv.Itoa(resp.Status)
}
