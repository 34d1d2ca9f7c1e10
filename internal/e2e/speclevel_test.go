package e2e

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
)

// foreign is a server that keeps the seed spec but none of the contract's
// additions: other error codes and an extra member, no contract headers,
// 404 instead of 405, 400 instead of 415, no WWW-Authenticate.
var foreign = onResponse(func(_ *http.Request, rec *recorded) {
	rec.header.Del("Cache-Control")
	rec.header.Del("X-Content-Type-Options")
	rec.header.Del("WWW-Authenticate")
	rec.header.Del("Allow")
	switch rec.status {
	case 405:
		rec.status = 404
	case 415:
		rec.status = 400
	}
	if rec.status >= 400 {
		rec.editError(func(m map[string]any) {
			m["code"] = strings.ToUpper(http.StatusText(rec.status))
			m["status"] = rec.status
			m["details"] = "see https://example.test/errors"
		})
	}
})

func TestSpecLevel(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	spec := func(t *testing.T, bc brokenCase, readOnly bool) *conformancetest.Report {
		t.Helper()
		base, _ := serveBroken(t, bc)
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{
			BaseURL: base, APIKey: testKey, Level: conformancetest.LevelSpec, ReadOnly: readOnly,
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	t.Run("the real API passes every spec check", func(t *testing.T) {
		rep := spec(t, brokenCase{}, false)
		p, f, s := rep.Counts()
		if f != 0 || s != 0 || p != len(conformancetest.Checks(conformancetest.LevelSpec)) {
			t.Errorf("%s, want all %d passed", rep.Summary(), len(conformancetest.Checks(conformancetest.LevelSpec)))
		}
	})

	t.Run("read-only skips what needs a write, with the reason", func(t *testing.T) {
		rep := spec(t, brokenCase{}, true)
		for _, name := range []string{"update/ok", "update/replaces", "body/missing-quantity", "body/quantity-not-integer"} {
			if res, _ := rep.Result(name); res.Outcome != conformancetest.Skip || res.Reason == "" {
				t.Errorf("%s: %s %q, want skipped with a reason", name, res.Outcome, res.Reason)
			}
		}
		if rep.Failed() {
			t.Errorf("%s", rep.Summary())
		}
	})

	t.Run("a foreign implementation of the spec passes spec, fails contract", func(t *testing.T) {
		rep := spec(t, brokenCase{wrap: foreign}, false)
		if rep.Failed() {
			var buf bytes.Buffer
			_ = rep.WriteText(&buf, false)
			t.Errorf("level spec judged a rule the spec does not make:\n%s", buf.String())
		}
		base, _ := serveBroken(t, brokenCase{wrap: foreign})
		rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"headers/cache-control", "errors/body-shape", "auth/missing-header", "media/unsupported", "routes/list-other-methods"} {
			if res, _ := rep.Result(name); res.Outcome != conformancetest.Fail {
				t.Errorf("level contract: %s %s, want fail", name, res.Outcome)
			}
		}
	})

	t.Run("spec checks fail on spec violations", func(t *testing.T) {
		for name, check := range map[string]string{
			"accepts a missing quantity":                "body/missing-quantity",
			`accepts "5" as quantity`:                   "body/quantity-not-integer",
			"answers 404 before 401":                    "auth/unknown-pet",
			"adds instead of replacing":                 "update/replaces",
			"sets status to sold":                       "update/ok",
			"returns null for an empty list":            "list/ok",
			"Error status differs from the HTTP status": "errors/body-shape",
		} {
			bc := brokenCases[slices.IndexFunc(brokenCases, func(b brokenCase) bool { return b.name == name })]
			rep := spec(t, bc, false)
			if res, _ := rep.Result(check); res.Outcome != conformancetest.Fail {
				t.Errorf("%s: level spec: %s %s, want fail", name, check, res.Outcome)
			}
		}
	})
}
