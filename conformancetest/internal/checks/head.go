package checks

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcHead = "CONTRACT.md §List inventory (HEAD); RFC 9110 §9.3.2"

// Head are the checks of HEAD on the list: the GET's answer without its
// body, conditional and unauthenticated.
var Head = []*suite.Check{
	{
		Name:   "head/list",
		Source: srcHead,
		Rule: "HEAD on {base}/inventory is the GET's answer without the body: 200 with the same ETag, Content-Type, Cache-Control and Vary, " +
			"and the Content-Length and Content-Encoding of the body the GET sends (identity, and gzip when asked for).",
		Run: run(headList),
	},
	{
		Name:   "head/not-modified",
		Source: srcHead + "; " + srcCaching,
		Rule:   "A conditional HEAD on the list (If-None-Match with the list's ETag, or *) is 304 with that ETag, as the conditional GET.",
		Run:    run(headNotModified),
	},
	{
		Name:   "head/auth-first",
		Source: srcHead + "; " + srcOrder,
		Rule:   "HEAD on the list runs the GET's checks in their order: without a valid key it is 401 with WWW-Authenticate, also when it is conditional (never 200 or 304).",
		Run:    run(headAuthFirst),
	},
}

// headList judges head/list.
func headList(c checker) {
	for _, enc := range []string{"", gzipAccept} {
		c.headLikeGet(enc)
	}
}

// headNotModified judges head/not-modified.
func headNotModified(c checker) {
	get := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
	if !c.expectStatus(get, http.StatusOK, "200 with the list") {
		return
	}
	tag, ok := c.strongETag(get)
	if !ok {
		return
	}
	for _, inm := range []string{tag, "*"} {
		for attempt := 0; ; attempt++ {
			head := c.Do(wire.Request{Method: http.MethodHead, Path: "/inventory", IfNoneMatch: inm})
			if inm == tag && head.Resp.Status == http.StatusOK && head.Resp.Header.Get("ETag") != tag && attempt < 2 {
				// Another client wrote since: a new tag.
				if get = c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"}); get.Resp.Status == http.StatusOK {
					tag = get.Resp.Header.Get("ETag")
					inm = tag
				}
				continue
			}
			if c.expectStatus(head, http.StatusNotModified, "304 to a HEAD whose If-None-Match names the list's tag") &&
				inm == tag && head.Resp.Header.Get("ETag") != tag {
				c.Failf(head, "304 with ETag "+tag, "ETag %q", head.Resp.Header.Get("ETag"))
			}
			break
		}
	}
}

// headAuthFirst judges head/auth-first.
func headAuthFirst(c checker) {
	for _, r := range []wire.Request{
		{Method: http.MethodHead, Path: "/inventory", Auth: wire.NoAuth},
		{Method: http.MethodHead, Path: "/inventory", Auth: wire.WithAuth("Bearer " + wrongKey), IfNoneMatch: "*"},
	} {
		ex := c.Do(r)
		if c.expectStatus(ex, http.StatusUnauthorized, "401 to a HEAD without a valid key") && ex.Resp.Header.Get("WWW-Authenticate") == "" {
			c.Failf(ex, "401 with WWW-Authenticate", "no WWW-Authenticate header")
		}
	}
}

// headHeaders are the headers an answer to HEAD on the list repeats from
// the GET's: its representation's metadata and length.
var headHeaders = []string{"ETag", "Content-Type", "Cache-Control", "Vary", "Content-Encoding", "Content-Length"}

// headLikeGet sends GET and HEAD on the list, accepting enc (identity when
// ""), and fails unless HEAD repeats the GET's status and headers with no
// body. A write by another client between the two (a new ETag) is retried.
func (c checker) headLikeGet(enc string) {
	what := "identity"
	if enc != "" {
		what = "Accept-Encoding: " + enc
	}
	for attempt := 0; ; attempt++ {
		get := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: enc})
		head := c.Do(wire.Request{Method: http.MethodHead, Path: "/inventory", AcceptEncoding: enc})
		if !c.expectStatus(get, http.StatusOK, "200 with the list") {
			return
		}
		expected := "HEAD answered as the GET (" + what + "), without a body"
		if !c.expectStatus(head, http.StatusOK, expected) {
			return
		}
		if head.Resp.Header.Get("ETag") != get.Resp.Header.Get("ETag") && attempt < 2 {
			continue // another client wrote between the two
		}
		if len(head.Resp.Body) != 0 {
			c.Failf(head, expected, "%d bytes of body", len(head.Resp.Body))
		}
		for _, h := range headHeaders {
			g, hd := strings.Join(get.Resp.Header.Values(h), ", "), strings.Join(head.Resp.Header.Values(h), ", ")
			if h == "Content-Length" && g == "" && !get.Resp.Truncated {
				g = strconv.Itoa(len(get.Resp.Body)) // a GET sent Chunked: its length
			}
			if g != hd {
				c.Failf(head, expected, "%s: %q on HEAD, %q on the GET", h, hd, g)
			}
		}
		return
	}
}
