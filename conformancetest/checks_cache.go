package conformancetest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

const (
	srcCaching = "CONTRACT.md §List inventory (revalidation)"
	srcGzip    = "CONTRACT.md §List inventory (compression)"
)

// staleTag is an entity tag that no state of any deployment has.
const staleTag = `"conformance-stale-tag-3b9e"`

// gzipAccept is the Accept-Encoding of a request that lets the server
// compress the list.
const gzipAccept = "gzip"

// cacheChecks are the checks of the list's content coding and
// revalidation.
func cacheChecks() []*check {
	return []*check{
		{
			name:   "gzip/decodes-to-identity",
			source: srcGzip + "; RFC 9110 §8.4",
			rule: "A list asked for with Accept-Encoding: gzip is either the identity list or Content-Encoding: gzip with a Content-Length, " +
				"and then decodes to exactly the identity list and has a strong ETag other than the identity list's. The check is skipped when the server answers identity (a list under its compression threshold).",
			run: func(c *checker) {
				for attempt := 0; ; attempt++ {
					plain := c.do(request{method: http.MethodGet, path: "/inventory"})
					zipped := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: gzipAccept})
					if !c.expectStatus(plain, http.StatusOK, "200 with the list") || !c.expectStatus(zipped, http.StatusOK, "200 with the list") {
						return
					}
					if plain.resp.truncated || zipped.resp.truncated {
						c.skipf("the list is over %d bytes, more than the suite reads of an answer: its gzip coding cannot be compared", maxResponseBytes)
					}
					switch ce := zipped.resp.contentEncoding(); ce {
					case "":
						c.skipf("not compressed: the list (%d bytes) came back identity to Accept-Encoding: gzip, which the contract allows under the server's threshold; nothing to decode", len(zipped.resp.body))
					case "gzip":
					default:
						c.fatalf(zipped, "Content-Encoding: gzip or none", "Content-Encoding: %s to a request that accepts gzip only", ce)
					}
					// A strong tag names one representation (RFC 9110
					// §8.8.3): the gzip list's differs from the identity
					// list's of the same state. A compression middleware in
					// front of the API that keeps the identity tag fails here.
					if tag := zipped.resp.header.Get("ETag"); tag != "" && !strings.HasPrefix(tag, "W/") && tag == plain.resp.header.Get("ETag") {
						c.failf(zipped, "a gzip list whose strong ETag differs from the identity list's", "the gzip list has the identity list's ETag %s, which then names two representations: "+
							"is a compression middleware in front of the API compressing its identity answer? Let the API compress its list (exclude its paths from the middleware)", tag)
					}
					if len(zipped.resp.header.Values("Content-Length")) == 0 {
						c.failf(zipped, "a gzip list with Content-Length", "no Content-Length")
					}
					body, err := gunzip(zipped.resp.body)
					if errors.Is(err, errTooLarge) {
						c.skipf("the gzip list decodes to over %d bytes, more than the suite reads of an answer: it cannot be compared", maxResponseBytes)
					}
					if err != nil {
						c.fatalf(zipped, "a gzip body that decodes", "the gzip body does not decode: %v", err)
					}
					if bytes.Equal(body, plain.resp.body) {
						return
					}
					// Another client may have written between the two
					// lists: a third one tells.
					again := c.do(request{method: http.MethodGet, path: "/inventory"})
					if bytes.Equal(body, again.resp.body) {
						return
					}
					if attempt == 2 {
						c.fatalf(zipped, "the decoded gzip list equal to the identity list", "the gzip list decodes to %d bytes that differ from the identity list (%d bytes) taken just before and after: %s",
							len(body), len(plain.resp.body), firstDifference(body, plain.resp.body))
					}
				}
			},
		},
		{
			name:   "gzip/vary",
			source: srcGzip + "; RFC 9110 §12.5.5",
			rule:   "Every list answer (identity, gzip, 304) has Vary: Accept-Encoding, so that a cache never gives one coding to a client that asked for another.",
			run: func(c *checker) {
				var tag string
				for _, ae := range []string{"", gzipAccept} {
					ex := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: ae})
					c.expectVary(ex)
					if tag == "" {
						tag = ex.resp.header.Get("ETag")
					}
				}
				if tag != "" {
					c.expectVary(c.do(request{method: http.MethodGet, path: "/inventory", ifNoneMatch: tag}))
				}
			},
		},
		{
			name:   "gzip/only-when-accepted",
			source: srcGzip + "; RFC 9110 §12.5.3",
			rule:   "No list is compressed unless the request accepts gzip: Accept-Encoding identity, gzip;q=0, \"gzip;q=0, identity\", \"*;q=0, identity\" and br answer the identity list.",
			run: func(c *checker) {
				for _, ae := range []string{"identity", "gzip;q=0", "gzip;q=0, identity", "*;q=0, identity", "br"} {
					ex := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: ae})
					if !c.expectStatus(ex, http.StatusOK, "200 with the identity list") {
						continue
					}
					if ce := ex.resp.contentEncoding(); ce != "" {
						c.failf(ex, "the identity list (no Content-Encoding)", "Content-Encoding: %s although the request does not accept it (Accept-Encoding: %s)", ce, ae)
					}
				}
			},
		},
		{
			name:   "etag/stable",
			source: srcCaching + "; RFC 9110 §8.8.3",
			rule:   "Every list has a strong ETag, and two lists with no write between have the same one.",
			run: func(c *checker) {
				for attempt := 0; ; attempt++ {
					a := c.do(request{method: http.MethodGet, path: "/inventory"})
					b := c.do(request{method: http.MethodGet, path: "/inventory"})
					ta, oka := c.strongETag(a)
					tb, okb := c.strongETag(b)
					if !oka || !okb {
						return
					}
					if ta == tb {
						return
					}
					if attempt == 2 {
						c.fatalf(b, "ETag: "+ta+", the tag of the list just before", "ETag: %s", tb)
					}
					if bytes.Equal(a.resp.body, b.resp.body) {
						// The same body under a new tag is a new state
						// only when the tag then holds: a write that put
						// back what was (another client's, or a restore
						// less than a staleness bound old that a held
						// state did not show yet). A third list tells.
						third := c.do(request{method: http.MethodGet, path: "/inventory"})
						tc, ok := c.strongETag(third)
						if !ok {
							return // strongETag said what is wrong with it
						}
						if tc != tb {
							c.fatalf(third, "ETag: "+tb+", the tag of the list just before with the same body", "ETag: %s", tc)
						}
					}
					// Another client wrote between the two: try again.
				}
			},
		},
		{
			name: "etag/changes-after-update", writes: true,
			source: srcCaching + "; CONTRACT.md §With a staleness bound",
			rule: "After an update answered 200, a strict list (Cache-Control: no-cache) sent with If-None-Match and the tag from before is 200 with the new state and a new ETag, never 304, at once; " +
				"so is the default conditional list once the staleness bound given with -consistency-staleness has passed (without a bound, within 10 s).",
			run: func(c *checker) {
				pet := c.anyPet()
				before := c.do(stateList())
				tag, ok := c.strongETag(before)
				if !ok {
					return
				}
				c.touch(pet.id)
				q := newQuantity(3, pet.qty)
				if ex := c.do(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(q)}); !c.expectItem(ex, pet.id, q, pet.status) {
					return
				}
				answered := time.Now()
				strict := stateList()
				strict.ifNoneMatch = tag
				if !c.expectChangedList(c.do(strict), tag, pet.id, q) {
					return
				}
				plain := c.defaultListAfter(answered, request{method: http.MethodGet, path: "/inventory", ifNoneMatch: tag}, func(ex *exchange) bool {
					return listedWith(ex, pet.id, q)
				})
				c.expectChangedList(plain, tag, pet.id, q)
			},
		},
		{
			name:   "etag/not-modified",
			source: srcCaching + "; RFC 9110 §13.1.2",
			rule: "If-None-Match with the list's tag (alone, weak W/ form, in a list with others) or * is 304 with the ETag, Vary and Cache-Control of the list and no body; " +
				"the tag of the gzip list matches when gzip is accepted.",
			run: func(c *checker) {
				for _, ae := range []string{"", gzipAccept} {
					first := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: ae})
					tag, ok := c.strongETag(first)
					if !ok {
						return
					}
					if ae != "" && first.resp.contentEncoding() == "" {
						continue // not compressed: the identity case covers it
					}
					for _, inm := range []string{tag, "W/" + tag, staleTag + ", " + tag, "*"} {
						ex := c.do(request{method: http.MethodGet, path: "/inventory", acceptEncoding: ae, ifNoneMatch: inm})
						if ex.resp.status == http.StatusOK && ex.resp.header.Get("ETag") != tag {
							continue // another client wrote meanwhile
						}
						expected := "304 with ETag " + tag + ", Vary: Accept-Encoding, Cache-Control: private, no-cache and no body"
						if !c.expectStatus(ex, http.StatusNotModified, expected) {
							continue
						}
						if len(ex.resp.body) > 0 {
							c.failf(ex, expected, "the 304 has a body of %d bytes", len(ex.resp.body))
						}
						if got := ex.resp.header.Get("ETag"); got != tag {
							c.failf(ex, expected, "the 304 has ETag %q", got)
						}
						c.expectVary(ex)
						if p := listCacheControl(ex.resp.header.Values("Cache-Control")); p != "" {
							c.failf(ex, expected, "%s", p)
						}
					}
				}
			},
		},
		{
			name:   "etag/stale-tag",
			source: srcCaching,
			rule:   "If-None-Match with a tag of no current state is 200 with the list and its ETag.",
			run: func(c *checker) {
				for _, inm := range []string{staleTag, "W/" + staleTag} {
					ex := c.do(request{method: http.MethodGet, path: "/inventory", ifNoneMatch: inm})
					if !c.expectStatus(ex, http.StatusOK, "200 with the list") {
						continue
					}
					if _, err := parseItems(ex.resp); err != nil {
						c.failf(ex, "200 with the list", "%v", err)
					}
					c.strongETag(ex)
				}
			},
		},
		{
			name:   "etag/auth-first",
			source: srcCaching + "; " + srcAuth,
			rule:   "A conditional list without a valid key is 401, never 304: If-None-Match: * or the list's tag with no key or a wrong key.",
			run: func(c *checker) {
				tag := c.do(request{method: http.MethodGet, path: "/inventory"}).resp.header.Get("ETag")
				tags := []string{"*"}
				if tag != "" {
					tags = append(tags, tag)
				}
				for _, inm := range tags {
					for _, a := range []*authHeader{noAuth, withAuth("Bearer " + wrongKey)} {
						c.expectUnauthorized(c.do(request{method: http.MethodGet, path: "/inventory", auth: a, ifNoneMatch: inm}), a.send)
					}
				}
			},
		},
	}
}

// expectChangedList checks the answer ex to a conditional list with the
// tag of the state before pet id was updated to qty: 200 with a new tag
// and the update, never 304. It stops the check on a 304.
func (c *checker) expectChangedList(ex *exchange, tag string, id, qty int64) bool {
	what := "the list"
	if !ex.req.noCache {
		what = c.defaultListWords()
	}
	if ex.resp.status == http.StatusNotModified {
		c.fatalf(ex, "200 with "+what+" that shows the update", "answered 304 to the tag of the state before an update answered 200: the client keeps a stale list")
	}
	if !c.expectStatus(ex, http.StatusOK, "200 with "+what+" that shows the update") {
		return false
	}
	ok := true
	if now, good := c.strongETag(ex); good && now == tag {
		c.failf(ex, "an ETag other than "+tag, "the list after the update has the tag of the list before it")
		ok = false
	}
	if items, err := parseItems(ex.resp); err == nil {
		for _, it := range items {
			if it.id == id && it.qty != qty {
				c.failf(ex, fmt.Sprintf("%s with pet %d at quantity %d", what, id, qty), "the list after the update shows pet %d with quantity %d", id, it.qty)
				ok = false
			}
		}
	}
	return ok
}

// etagRE is a strong entity tag (RFC 9110 §8.8.3): a quoted string of
// etagc characters.
var etagRE = regexp.MustCompile(`^"[\x21\x23-\x7e\x80-\xff]*"$`)

// strongETag returns the list answer's ETag, failing the check when the
// answer is not a 200 or its tag is missing, weak or malformed.
func (c *checker) strongETag(ex *exchange) (string, bool) {
	expected := `200 with a strong ETag ("…")`
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return "", false
	}
	vals := ex.resp.header.Values("ETag")
	switch {
	case len(vals) == 0:
		c.failf(ex, expected, "no ETag header on the list")
		return "", false
	case len(vals) > 1:
		c.failf(ex, expected, "%d ETag headers", len(vals))
		return "", false
	case strings.HasPrefix(vals[0], "W/"):
		c.failf(ex, expected, "ETag: %s is weak; the list's tag is strong", vals[0])
		return "", false
	case !etagRE.MatchString(vals[0]):
		c.failf(ex, expected, "ETag: %s is not a quoted entity tag", vals[0])
		return "", false
	}
	return vals[0], true
}

// expectVary fails when a list answer's Vary does not name
// Accept-Encoding.
func (c *checker) expectVary(ex *exchange) {
	for _, v := range ex.resp.header.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); strings.EqualFold(f, "Accept-Encoding") || f == "*" {
				return
			}
		}
	}
	if vals := ex.resp.header.Values("Vary"); len(vals) > 0 {
		c.failf(ex, "Vary: Accept-Encoding on every list answer", "Vary: %s (Accept-Encoding missing)", strings.Join(vals, ", "))
		return
	}
	c.failf(ex, "Vary: Accept-Encoding on every list answer", "no Vary header on a list answer (%d)", ex.resp.status)
}

// listCacheControl returns what is wrong with a list answer's
// Cache-Control ("" when it is private, no-cache and not no-store).
func listCacheControl(vals []string) string {
	if len(vals) == 0 {
		return "no Cache-Control header"
	}
	var ds []string
	for _, v := range vals {
		for _, d := range strings.Split(v, ",") {
			ds = append(ds, strings.ToLower(strings.TrimSpace(d)))
		}
	}
	if slices.Contains(ds, "no-store") || !slices.Contains(ds, "private") || !slices.Contains(ds, "no-cache") {
		return fmt.Sprintf("Cache-Control: %s on a list answer (private, no-cache: kept by the client only and revalidated each time)", strings.Join(vals, ", "))
	}
	return ""
}

// firstDifference describes where two bodies first differ.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	show := func(x []byte) string {
		end := min(i+40, len(x))
		return showBody(x[i:end])
	}
	return fmt.Sprintf("first difference at byte %d: %q against %q", i, show(a), show(b))
}
