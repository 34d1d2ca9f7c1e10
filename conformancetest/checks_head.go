package conformancetest

import (
	"net/http"
	"strconv"
	"strings"
)

const srcHead = "CONTRACT.md §List inventory (HEAD); RFC 9110 §9.3.2"

// headHeaders are the headers an answer to HEAD on the list repeats from
// the GET's: its representation's metadata and length.
var headHeaders = []string{"ETag", "Content-Type", "Cache-Control", "Vary", "Content-Encoding", "Content-Length"}

func headChecks() []*check {
	return []*check{
		{
			name:   "head/list",
			source: srcHead,
			rule: "HEAD on {base}/inventory is the GET's answer without the body: 200 with the same ETag, Content-Type, Cache-Control and Vary, " +
				"and the Content-Length and Content-Encoding of the body the GET sends (identity, and gzip when asked for).",
			run: func(c *checker) {
				for _, enc := range []string{"", gzipAccept} {
					c.headLikeGet(enc)
				}
			},
		},
		{
			name:   "head/not-modified",
			source: srcHead + "; " + srcCaching,
			rule:   "A conditional HEAD on the list (If-None-Match with the list's ETag, or *) is 304 with that ETag, as the conditional GET.",
			run: func(c *checker) {
				get := c.do(request{method: http.MethodGet, path: "/inventory"})
				if !c.expectStatus(get, http.StatusOK, "200 with the list") {
					return
				}
				tag, ok := c.strongETag(get)
				if !ok {
					return
				}
				for _, inm := range []string{tag, "*"} {
					for attempt := 0; ; attempt++ {
						head := c.do(request{method: http.MethodHead, path: "/inventory", ifNoneMatch: inm})
						if inm == tag && head.resp.status == http.StatusOK && head.resp.header.Get("ETag") != tag && attempt < 2 {
							// Another client wrote since: a new tag.
							if get = c.do(request{method: http.MethodGet, path: "/inventory"}); get.resp.status == http.StatusOK {
								tag = get.resp.header.Get("ETag")
								inm = tag
							}
							continue
						}
						if c.expectStatus(head, http.StatusNotModified, "304 to a HEAD whose If-None-Match names the list's tag") &&
							inm == tag && head.resp.header.Get("ETag") != tag {
							c.failf(head, "304 with ETag "+tag, "ETag %q", head.resp.header.Get("ETag"))
						}
						break
					}
				}
			},
		},
		{
			name:   "head/auth-first",
			source: srcHead + "; " + srcOrder,
			rule:   "HEAD on the list runs the GET's checks in their order: without a valid key it is 401 with WWW-Authenticate, also when it is conditional (never 200 or 304).",
			run: func(c *checker) {
				for _, r := range []request{
					{method: http.MethodHead, path: "/inventory", auth: noAuth},
					{method: http.MethodHead, path: "/inventory", auth: withAuth("Bearer " + wrongKey), ifNoneMatch: "*"},
				} {
					ex := c.do(r)
					if c.expectStatus(ex, http.StatusUnauthorized, "401 to a HEAD without a valid key") && ex.resp.header.Get("WWW-Authenticate") == "" {
						c.failf(ex, "401 with WWW-Authenticate", "no WWW-Authenticate header")
					}
				}
			},
		},
	}
}

// headLikeGet sends GET and HEAD on the list, accepting enc (identity when
// ""), and fails unless HEAD repeats the GET's status and headers with no
// body. A write by another client between the two (a new ETag) is retried.
func (c *checker) headLikeGet(enc string) {
	what := "identity"
	if enc != "" {
		what = "Accept-Encoding: " + enc
	}
	for attempt := 0; ; attempt++ {
		get := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: enc})
		head := c.do(request{method: http.MethodHead, path: "/inventory", acceptEncoding: enc})
		if !c.expectStatus(get, http.StatusOK, "200 with the list") {
			return
		}
		expected := "HEAD answered as the GET (" + what + "), without a body"
		if !c.expectStatus(head, http.StatusOK, expected) {
			return
		}
		if head.resp.header.Get("ETag") != get.resp.header.Get("ETag") && attempt < 2 {
			continue // another client wrote between the two
		}
		if len(head.resp.body) != 0 {
			c.failf(head, expected, "%d bytes of body", len(head.resp.body))
		}
		for _, h := range headHeaders {
			g, hd := strings.Join(get.resp.header.Values(h), ", "), strings.Join(head.resp.header.Values(h), ", ")
			if h == "Content-Length" && g == "" && !get.resp.truncated {
				g = strconv.Itoa(len(get.resp.body)) // a GET sent chunked: its length
			}
			if g != hd {
				c.failf(head, expected, "%s: %q on HEAD, %q on the GET", h, hd, g)
			}
		}
		return
	}
}
