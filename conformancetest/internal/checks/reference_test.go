package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// newChecks are the checks the reference server implements every rule
// of; a correct reference server passes them all.
const newChecks = `^(gzip|etag|head)/|^routes/(unknown|list-other)-methods$|^headers/cache-control$|^concurrency/|^body/stalled$`

func runRef(t *testing.T, rs *refserver.Server, run string) *conformancetest.Report {
	t.Helper()
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{BaseURL: rs.Start(t), APIKey: refserver.Key, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReferenceServerPasses(t *testing.T) {
	rep := runRef(t, &refserver.Server{}, newChecks)
	if len(rep.Results) < 10 {
		t.Fatalf("only %d checks ran", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Outcome != conformancetest.Pass {
			var sb strings.Builder
			report.WriteFailures(&sb, res, "  ")
			t.Errorf("%s: %s %s\n%s", res.Name, res.Outcome, res.Reason, sb.String())
		}
	}
}

// TestUncompressedListSkips: a server that answers identity to a
// gzip-accepting request (a list under its threshold) is allowed; the
// decode check says it had nothing to decode.
func TestUncompressedListSkips(t *testing.T) {
	rep := runRef(t, &refserver.Server{GzipMin: 1 << 20}, newChecks)
	for _, res := range rep.Results {
		want := conformancetest.Pass
		if res.Name == "gzip/decodes-to-identity" {
			want = conformancetest.Skip
			if !strings.Contains(res.Reason, "not compressed") {
				t.Errorf("%s: reason %q", res.Name, res.Reason)
			}
		}
		if res.Outcome != want {
			t.Errorf("%s: %s, want %s: %s %v", res.Name, res.Outcome, want, res.Reason, res.Failures)
		}
	}
}

// TestBrokenReferenceServers proves that each new check can fail, for
// the reason it names.
func TestBrokenReferenceServers(t *testing.T) {
	for _, tc := range []struct {
		broken, check, mention string
	}{
		{"gzip of another body", "gzip/decodes-to-identity", "differ from the identity list"},
		{"no Vary", "gzip/vary", "no Vary header"},
		{"gzip ignoring q=0", "gzip/only-when-accepted", "Content-Encoding: gzip although"},
		{"a new tag on every list", "etag/stable", "ETag:"},
		{"tag never changes", "etag/changes-after-update", "answered 304"},
		{"ignores If-None-Match", "etag/not-modified", "not 304"},
		{"304 for any tag", "etag/stale-tag", "answered 304"},
		{"304 before auth", "etag/auth-first", "answered 304"},
		{"plain 404 for unknown methods", "routes/unknown-methods", "came from something in front of the API"},
		{"no-store on the list", "headers/cache-control", "Cache-Control: no-store on a list answer"},
		{"405 for HEAD", "head/list", "answered 405"},
		{"HEAD with another Content-Length", "head/list", "Content-Length"},
		{"405 for HEAD", "head/not-modified", "answered 405"},
		{"HEAD before auth", "head/auth-first", "answered 200"},
		{"no body timeout", "body/stalled", "no answer within"},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			rep := runRef(t, &refserver.Server{Broken: tc.broken}, "^"+tc.check+"$")
			res, _ := rep.Result(tc.check)
			if res.Outcome != conformancetest.Fail {
				t.Fatalf("%s did not catch %q: %s %s", tc.check, tc.broken, res.Outcome, res.Reason)
			}
			var problems []string
			for _, f := range res.Failures {
				problems = append(problems, f.Problem)
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.mention) {
				t.Errorf("%s failed, but not for %q:\n%s", tc.check, tc.mention, strings.Join(problems, "\n"))
			}
		})
	}
}

// TestParallelUpdatesCatchesLostUpdate: a server whose update answer is
// read back half a millisecond after its write, outside the lock, fails
// the concurrency check in every one of 20 runs; a correct one passes.
func TestParallelUpdatesCatchesLostUpdate(t *testing.T) {
	const runs = 20
	const check = "concurrency/parallel-updates"
	for i := range runs {
		rep := runRef(t, &refserver.Server{LostUpdate: true}, "^"+check+"$")
		res, _ := rep.Result(check)
		if res.Outcome != conformancetest.Fail {
			t.Errorf("run %d of %d: the lost update was not caught (%s); %s", i+1, runs, res.Outcome, res.Detail)
		}
	}
	rep := runRef(t, &refserver.Server{}, "^"+check+"$")
	res, _ := rep.Result(check)
	if res.Outcome != conformancetest.Pass {
		t.Fatalf("a correct server: %s %v", res.Outcome, res.Failures)
	}
	if !strings.Contains(res.Detail, "requests in") || !strings.Contains(res.Detail, "12 rounds") {
		t.Errorf("Detail %q does not state the cost", res.Detail)
	}
	t.Log(res.Detail)
}

// TestHugeListNotCompared: a list longer than the suite reads of an
// answer is not compared with its gzip coding (a cut identity body would
// differ), and the skip says why.
func TestHugeListNotCompared(t *testing.T) {
	defer func(n int) { wire.MaxResponseBytes = n }(wire.MaxResponseBytes)
	wire.MaxResponseBytes = 1 << 20
	rep := runRef(t, &refserver.Server{ExtraPets: 25000}, `^gzip/decodes-to-identity$`)
	res, _ := rep.Result("gzip/decodes-to-identity")
	if res.Outcome != conformancetest.Skip || !strings.Contains(res.Reason, "more than the suite reads") {
		t.Errorf("%s %q %v", res.Outcome, res.Reason, res.Failures)
	}
}
