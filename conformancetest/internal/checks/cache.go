package checks

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
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

// Cache are the checks of the list's content coding and
// revalidation.
var Cache = []*suite.Check{
	{
		Name:   "gzip/decodes-to-identity",
		Source: srcGzip + "; RFC 9110 §8.4",
		Rule: "A list asked for with Accept-Encoding: gzip is either the identity list or Content-Encoding: gzip with a Content-Length, " +
			"and then decodes to exactly the identity list and has a strong ETag other than the identity list's. The check is skipped when the server answers identity (a list under its compression threshold).",
		Run: run(gzipDecodesToIdentity),
	},
	{
		Name:   "gzip/vary",
		Source: srcGzip + "; RFC 9110 §12.5.5",
		Rule:   "Every list answer (identity, gzip, 304) has Vary: Accept-Encoding, so that a cache never gives one coding to a client that asked for another.",
		Run:    run(gzipVary),
	},
	{
		Name:   "gzip/only-when-accepted",
		Source: srcGzip + "; RFC 9110 §12.5.3",
		Rule:   "No list is compressed unless the request accepts gzip: Accept-Encoding identity, gzip;q=0, \"gzip;q=0, identity\", \"*;q=0, identity\" and br answer the identity list.",
		Run:    run(gzipOnlyWhenAccepted),
	},
	{
		Name:   "etag/stable",
		Source: srcCaching + "; RFC 9110 §8.8.3",
		Rule:   "Every list has a strong ETag, and two lists with no write between have the same one.",
		Run:    run(etagStable),
	},
	{
		Name: "etag/changes-after-update", Writes: true,
		Source: srcCaching + "; CONTRACT.md §With a staleness bound",
		Rule: "After an update answered 200, a strict list (Cache-Control: no-cache) sent with If-None-Match and the tag from before is 200 with the new state and a new ETag, never 304, at once; " +
			"so is the default conditional list once the staleness bound given with -consistency-staleness has passed (without a bound, within 10 s).",
		Run: run(etagChangesAfterUpdate),
	},
	{
		Name:   "etag/not-modified",
		Source: srcCaching + "; RFC 9110 §13.1.2",
		Rule: "If-None-Match with the list's tag (alone, weak W/ form, in a list with others) or * is 304 with the ETag, Vary and Cache-Control of the list and no body; " +
			"the tag of the gzip list matches when gzip is accepted.",
		Run: run(etagNotModified),
	},
	{
		Name:   "etag/stale-tag",
		Source: srcCaching,
		Rule:   "If-None-Match with a tag of no current state is 200 with the list and its ETag.",
		Run:    run(etagStaleTag),
	},
	{
		Name:   "etag/auth-first",
		Source: srcCaching + "; " + srcAuth,
		Rule:   "A conditional list without a valid key is 401, never 304: If-None-Match: * or the list's tag with no key or a wrong key.",
		Run:    run(etagAuthFirst),
	},
}

// gzipDecodesToIdentity judges gzip/decodes-to-identity.
func gzipDecodesToIdentity(c checker) {
	for attempt := 0; ; attempt++ {
		plain := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
		zipped := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: gzipAccept})
		if !c.expectStatus(plain, http.StatusOK, "200 with the list") || !c.expectStatus(zipped, http.StatusOK, "200 with the list") {
			return
		}
		if plain.Resp.Truncated || zipped.Resp.Truncated {
			c.Skipf("the list is over %d bytes, more than the suite reads of an answer: its gzip coding cannot be compared", wire.MaxResponseBytes)
		}
		switch ce := zipped.Resp.ContentEncoding(); ce {
		case "":
			c.Skipf("not compressed: the list (%d bytes) came back identity to Accept-Encoding: gzip, which the contract allows under the server's threshold; nothing to decode", len(zipped.Resp.Body))
		case "gzip":
		default:
			c.Fatalf(zipped, "Content-Encoding: gzip or none", "Content-Encoding: %s to a request that accepts gzip only", ce)
		}
		// A strong tag names one representation (RFC 9110
		// §8.8.3): the gzip list's differs from the identity
		// list's of the same state. A compression middleware in
		// front of the API that keeps the identity tag fails here.
		if tag := zipped.Resp.Header.Get("ETag"); tag != "" && !strings.HasPrefix(tag, "W/") && tag == plain.Resp.Header.Get("ETag") {
			c.Failf(zipped, "a gzip list whose strong ETag differs from the identity list's", "the gzip list has the identity list's ETag %s, which then names two representations: "+
				"is a compression middleware in front of the API compressing its identity answer? Let the API compress its list (exclude its paths from the middleware)", tag)
		}
		if len(zipped.Resp.Header.Values("Content-Length")) == 0 {
			c.Failf(zipped, "a gzip list with Content-Length", "no Content-Length")
		}
		body, err := wire.Gunzip(zipped.Resp.Body)
		if errors.Is(err, wire.ErrTooLarge) {
			c.Skipf("the gzip list decodes to over %d bytes, more than the suite reads of an answer: it cannot be compared", wire.MaxResponseBytes)
		}
		if err != nil {
			c.Fatalf(zipped, "a gzip body that decodes", "the gzip body does not decode: %v", err)
		}
		if bytes.Equal(body, plain.Resp.Body) {
			return
		}
		// Another client may have written between the two
		// lists: a third one tells.
		again := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
		if bytes.Equal(body, again.Resp.Body) {
			return
		}
		if attempt == 2 {
			c.Fatalf(zipped, "the decoded gzip list equal to the identity list", "the gzip list decodes to %d bytes that differ from the identity list (%d bytes) taken just before and after: %s",
				len(body), len(plain.Resp.Body), firstDifference(body, plain.Resp.Body))
		}
	}
}

// gzipVary judges gzip/vary.
func gzipVary(c checker) {
	var tag string
	for _, ae := range []string{"", gzipAccept} {
		ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: ae})
		c.expectVary(ex)
		if tag == "" {
			tag = ex.Resp.Header.Get("ETag")
		}
	}
	if tag != "" {
		c.expectVary(c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", IfNoneMatch: tag}))
	}
}

// gzipOnlyWhenAccepted judges gzip/only-when-accepted.
func gzipOnlyWhenAccepted(c checker) {
	for _, ae := range []string{"identity", "gzip;q=0", "gzip;q=0, identity", "*;q=0, identity", "br"} {
		ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: ae})
		if !c.expectStatus(ex, http.StatusOK, "200 with the identity list") {
			continue
		}
		if ce := ex.Resp.ContentEncoding(); ce != "" {
			c.Failf(ex, "the identity list (no Content-Encoding)", "Content-Encoding: %s although the request does not accept it (Accept-Encoding: %s)", ce, ae)
		}
	}
}

// etagStable judges etag/stable.
func etagStable(c checker) {
	for attempt := 0; ; attempt++ {
		a := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
		b := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
		ta, oka := c.strongETag(a)
		tb, okb := c.strongETag(b)
		if !oka || !okb {
			return
		}
		if ta == tb {
			return
		}
		if attempt == 2 {
			c.Fatalf(b, "ETag: "+ta+", the tag of the list just before", "ETag: %s", tb)
		}
		if bytes.Equal(a.Resp.Body, b.Resp.Body) {
			// The same body under a new tag is a new state
			// only when the tag then holds: a write that put
			// back what was (another client's, or a restore
			// less than a staleness bound old that a held
			// state did not show yet). A third list tells.
			third := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"})
			tc, ok := c.strongETag(third)
			if !ok {
				return // strongETag said what is wrong with it
			}
			if tc != tb {
				c.Fatalf(third, "ETag: "+tb+", the tag of the list just before with the same body", "ETag: %s", tc)
			}
		}
		// Another client wrote between the two: try again.
	}
}

// etagChangesAfterUpdate judges etag/changes-after-update.
func etagChangesAfterUpdate(c checker) {
	pet := c.AnyPet()
	before := c.Do(wire.StateList())
	tag, ok := c.strongETag(before)
	if !ok {
		return
	}
	c.Touch(pet.ID)
	q := newQuantity(3, pet.Qty)
	if ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: "application/json", Body: wire.QtyBody(q)}); !c.expectItem(ex, pet.ID, q, pet.Status) {
		return
	}
	answered := time.Now()
	strict := wire.StateList()
	strict.IfNoneMatch = tag
	if !c.expectChangedList(c.Do(strict), tag, pet.ID, q) {
		return
	}
	plain := c.defaultListAfter(answered, wire.Request{Method: http.MethodGet, Path: "/inventory", IfNoneMatch: tag}, func(ex *wire.Exchange) bool {
		return listedWith(ex, pet.ID, q)
	})
	c.expectChangedList(plain, tag, pet.ID, q)
}

// etagNotModified judges etag/not-modified.
func etagNotModified(c checker) {
	for _, ae := range []string{"", gzipAccept} {
		first := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: ae})
		tag, ok := c.strongETag(first)
		if !ok {
			return
		}
		if ae != "" && first.Resp.ContentEncoding() == "" {
			continue // not compressed: the identity case covers it
		}
		for _, inm := range []string{tag, "W/" + tag, staleTag + ", " + tag, "*"} {
			ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: ae, IfNoneMatch: inm})
			if ex.Resp.Status == http.StatusOK && ex.Resp.Header.Get("ETag") != tag {
				continue // another client wrote meanwhile
			}
			expected := "304 with ETag " + tag + ", Vary: Accept-Encoding, Cache-Control: private, no-cache and no body"
			if !c.expectStatus(ex, http.StatusNotModified, expected) {
				continue
			}
			if len(ex.Resp.Body) > 0 {
				c.Failf(ex, expected, "the 304 has a body of %d bytes", len(ex.Resp.Body))
			}
			if got := ex.Resp.Header.Get("ETag"); got != tag && !c.movedTo(inm, got, ae) {
				c.Failf(ex, expected, "the 304 has ETag %q", got)
			}
			c.expectVary(ex)
			if p := listCacheControl(ex.Resp.Header.Values("Cache-Control")); p != "" {
				c.Failf(ex, expected, "%s", p)
			}
		}
	}
}

// movedTo reports whether a 304 to If-None-Match: * whose tag is got,
// not the tag listed just before, names the state a list shows now:
// "*" matches whatever state is current, so another client's write (or,
// within a staleness bound, the held state renewed after one) moves the
// tag between the two requests, and the 304 rightly names the new one.
func (c checker) movedTo(inm, got, ae string) bool {
	if inm != "*" {
		return false
	}
	now := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", AcceptEncoding: ae})
	return now.Resp.Status == http.StatusOK && now.Resp.Header.Get("ETag") == got
}

// etagStaleTag judges etag/stale-tag.
func etagStaleTag(c checker) {
	for _, inm := range []string{staleTag, "W/" + staleTag} {
		ex := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", IfNoneMatch: inm})
		if !c.expectStatus(ex, http.StatusOK, "200 with the list") {
			continue
		}
		if _, err := wire.ParseItems(ex.Resp); err != nil {
			c.Failf(ex, "200 with the list", "%v", err)
		}
		c.strongETag(ex)
	}
}

// etagAuthFirst judges etag/auth-first.
func etagAuthFirst(c checker) {
	tag := c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory"}).Resp.Header.Get("ETag")
	tags := []string{"*"}
	if tag != "" {
		tags = append(tags, tag)
	}
	for _, inm := range tags {
		for _, a := range []*wire.AuthHeader{wire.NoAuth, wire.WithAuth("Bearer " + wrongKey)} {
			c.expectUnauthorized(c.Do(wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: a, IfNoneMatch: inm}), a.Send)
		}
	}
}

// expectChangedList checks the answer ex to a conditional list with the
// tag of the state before pet id was updated to qty: 200 with a new tag
// and the update, never 304. It stops the check on a 304.
func (c checker) expectChangedList(ex *wire.Exchange, tag string, id, qty int64) bool {
	what := "the list"
	if !ex.Req.NoCache {
		what = c.defaultListWords()
	}
	if ex.Resp.Status == http.StatusNotModified {
		c.Fatalf(ex, "200 with "+what+" that shows the update", "answered 304 to the tag of the state before an update answered 200: the client keeps a stale list")
	}
	if !c.expectStatus(ex, http.StatusOK, "200 with "+what+" that shows the update") {
		return false
	}
	ok := true
	if now, good := c.strongETag(ex); good && now == tag {
		c.Failf(ex, "an ETag other than "+tag, "the list after the update has the tag of the list before it")
		ok = false
	}
	if items, err := wire.ParseItems(ex.Resp); err == nil {
		for _, it := range items {
			if it.ID == id && it.Qty != qty {
				c.Failf(ex, fmt.Sprintf("%s with pet %d at quantity %d", what, id, qty), "the list after the update shows pet %d with quantity %d", id, it.Qty)
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
func (c checker) strongETag(ex *wire.Exchange) (string, bool) {
	expected := `200 with a strong ETag ("…")`
	if !c.expectStatus(ex, http.StatusOK, expected) {
		return "", false
	}
	vals := ex.Resp.Header.Values("ETag")
	switch {
	case len(vals) == 0:
		c.Failf(ex, expected, "no ETag header on the list")
		return "", false
	case len(vals) > 1:
		c.Failf(ex, expected, "%d ETag headers", len(vals))
		return "", false
	case strings.HasPrefix(vals[0], "W/"):
		c.Failf(ex, expected, "ETag: %s is weak; the list's tag is strong", vals[0])
		return "", false
	case !etagRE.MatchString(vals[0]):
		c.Failf(ex, expected, "ETag: %s is not a quoted entity tag", vals[0])
		return "", false
	}
	return vals[0], true
}

// expectVary fails when a list answer's Vary does not name
// Accept-Encoding.
func (c checker) expectVary(ex *wire.Exchange) {
	for _, v := range ex.Resp.Header.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); strings.EqualFold(f, "Accept-Encoding") || f == "*" {
				return
			}
		}
	}
	if vals := ex.Resp.Header.Values("Vary"); len(vals) > 0 {
		c.Failf(ex, "Vary: Accept-Encoding on every list answer", "Vary: %s (Accept-Encoding missing)", strings.Join(vals, ", "))
		return
	}
	c.Failf(ex, "Vary: Accept-Encoding on every list answer", "no Vary header on a list answer (%d)", ex.Resp.Status)
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
		return wire.ShowBody(x[i:end])
	}
	return fmt.Sprintf("first difference at byte %d: %q against %q", i, show(a), show(b))
}
