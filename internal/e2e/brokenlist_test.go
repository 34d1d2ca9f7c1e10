package e2e

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// listBreaking finishes every list answer of the API as the contract's
// list caching and compression rules say (a strong ETag per state and
// coding, Vary, Cache-Control: private, no-cache, 304 for a matching
// If-None-Match or *, gzip when accepted) with one rule broken, named by
// brk. It negotiates itself, on the API's identity answer, so that it
// breaks the same rule whether or not the API implements these rules.
func listBreaking(brk string) wrapper {
	return func(_ *inventory.API, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/inventory" {
				next.ServeHTTP(w, r)
				return
			}
			ae, inm := r.Header.Get("Accept-Encoding"), r.Header.Get("If-None-Match")
			if brk == "304 before auth" && inm == "*" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			r2 := r.Clone(r.Context())
			r2.Header.Del("Accept-Encoding")
			r2.Header.Del("If-None-Match")
			rec := serveRecorded(next, r2)
			if rec.status != http.StatusOK {
				writeRecorded(w, rec)
				return
			}
			sum := sha256.Sum256(rec.body)
			tag := hex.EncodeToString(sum[:8])
			switch brk {
			case "a new tag on every list":
				tag = strconv.FormatInt(time.Now().UnixNano(), 36)
			case "one tag for every state":
				tag = "always"
			}
			zip := acceptsGzipForTest(ae)
			if brk == "gzip ignoring q=0" {
				zip = strings.Contains(ae, "gzip")
			}
			if zip && brk != "one tag for both codings" {
				tag += "-gzip"
			}
			tag = `"` + tag + `"`
			rec.header.Set("ETag", tag)
			rec.header.Set("Cache-Control", "private, no-cache")
			rec.header.Set("Vary", "Accept-Encoding")
			if inm != "" && brk != "ignores If-None-Match" {
				for _, t := range strings.Split(inm, ",") {
					t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
					if t == "*" || t == tag || brk == "304 for any tag" {
						rec.header.Del("Content-Type")
						rec.header.Del("Content-Length")
						for k, v := range rec.header {
							w.Header()[k] = v
						}
						w.WriteHeader(http.StatusNotModified)
						return
					}
				}
			}
			if zip {
				body := rec.body
				if brk == "gzip of another body" {
					body = bytes.Replace(body, []byte(`"quantity":`), []byte(`"quantity": `), 1)
				}
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				_, _ = zw.Write(body)
				_ = zw.Close()
				rec.body = z.Bytes()
				rec.header.Set("Content-Encoding", "gzip")
			}
			writeRecorded(w, rec)
		})
	}
}

// acceptsGzipForTest applies Accept-Encoding's q-values to gzip.
func acceptsGzipForTest(h string) bool {
	gz, star := -1.0, -1.0
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, _ = strconv.ParseFloat(v, 64)
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "gzip", "x-gzip":
			gz = q
		case "*":
			star = q
		}
	}
	if gz < 0 {
		gz = star
	}
	return gz > 0
}

// listCachingCases break one rule each of the list's caching and
// compression.
var listCachingCases = []brokenCase{
	{name: "gzip of another body", check: "gzip/decodes-to-identity", mention: "differ from the identity list", wrap: listBreaking("gzip of another body")},
	{name: "one tag for both codings", check: "gzip/decodes-to-identity", mention: "the identity list's ETag", wrap: listBreaking("one tag for both codings")},
	{name: "no Vary on the list", check: "gzip/vary", mention: "no Vary header", wrap: func(api *inventory.API, next http.Handler) http.Handler {
		inner := listBreaking("")(api, next)
		return onResponse(func(_ *http.Request, rec *recorded) { rec.header.Del("Vary") })(api, inner)
	}},
	{name: "gzip ignoring q=0", check: "gzip/only-when-accepted", mention: "Content-Encoding: gzip although", wrap: listBreaking("gzip ignoring q=0")},
	{name: "a new tag on every list", check: "etag/stable", mention: "ETag: \"", wrap: listBreaking("a new tag on every list")},
	{name: "one tag for every state", check: "etag/changes-after-update", mention: "answered 304 to the tag of the state before an update", wrap: listBreaking("one tag for every state")},
	{name: "ignores If-None-Match", check: "etag/not-modified", mention: "not 304", wrap: listBreaking("ignores If-None-Match")},
	{name: "304 for any tag", check: "etag/stale-tag", mention: "answered 304", wrap: listBreaking("304 for any tag")},
	{name: "304 before auth", check: "etag/auth-first", mention: "answered 304", wrap: listBreaking("304 before auth")},
}

func init() { brokenCases = append(brokenCases, listCachingCases...) }

// TestListCachingReference: the real API behind listBreaking with no rule
// broken passes every gzip and etag check, so each broken case above fails
// for its one rule only.
func TestListCachingReference(t *testing.T) {
	base, store := serveBroken(t, brokenCase{wrap: listBreaking("")})
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey, Run: `^(gzip|etag)/`})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 8 {
		t.Errorf("%d checks ran, want the 8 gzip and etag checks", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Outcome != conformancetest.Pass {
			var sb strings.Builder
			_ = rep.WriteText(&sb, false)
			t.Fatalf("%s: %s\n%s", res.Name, res.Outcome, sb.String())
		}
	}
	if got := listStore(t, store); !slices.Equal(got, seed) {
		t.Errorf("the suite did not restore the store: %v", got)
	}
}

// TestGzipListDecodes: on every transport, a list large enough to be
// compressed is, and decodes to exactly the identity list; the other gzip
// and etag checks pass on it too.
func TestGzipListDecodes(t *testing.T) {
	items := slices.Clone(seed)
	for i := range 2000 {
		items = append(items, inventory.Item{PetID: int64(5000 + i), Quantity: i, Status: inventory.StatusAvailable})
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			base := tr.serve(t, nil, newAPI(t, openMemory(t, items...)))
			rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey, Run: `^(gzip|etag)/`})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range rep.Results {
				if res.Outcome != conformancetest.Pass {
					t.Errorf("%s: %s %s %v", res.Name, res.Outcome, res.Reason, res.Failures)
				}
			}
		})
	}
}
