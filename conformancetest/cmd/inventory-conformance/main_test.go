package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/conformancetest/internal/redisproc"
	"github.com/petinventory/petinventory/conformancetest/internal/refserver"
)

func TestAPIKeyFrom(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{flag: "f", env: map[string]string{"INVENTORY_API_KEY": "a", "INVENTORY_API_KEYS": "b"}, want: "f"},
		{env: map[string]string{"INVENTORY_API_KEY": "a", "INVENTORY_API_KEYS": "b"}, want: "a"},
		{env: map[string]string{"INVENTORY_API_KEYS": " b , c"}, want: "b"},
		{env: map[string]string{"INVENTORY_API_KEYS": ", ,c"}, want: "c"},
		{env: map[string]string{"INVENTORY_API_KEYS": " , "}, want: ""},
		{want: ""},
	} {
		if got := apiKeyFrom(tc.flag, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("flag %q, env %v: %q, want %q", tc.flag, tc.env, got, tc.want)
		}
	}
}

// TestHelpNamesBothVariables: -h says where the key comes from, the
// server's variable included.
func TestHelpNamesBothVariables(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"$INVENTORY_API_KEY,", "$INVENTORY_API_KEYS"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-h does not mention %s:\n%s", want, stderr.String())
		}
	}
}

func TestNoKey(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-base-url", "http://127.0.0.1:1/v1"}, func(string) string { return "" }, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "INVENTORY_API_KEYS") {
		t.Errorf("exit %d, %s", code, stderr.String())
	}
}

// keyOnly is an environment with INVENTORY_API_KEY alone.
func keyOnly(k string) string {
	if k == "INVENTORY_API_KEY" {
		return "k"
	}
	return ""
}

// TestBadConsistencyFlags: the new flags' bad values are usage errors
// that name what is wrong, before any request.
func TestBadConsistencyFlags(t *testing.T) {
	env := keyOnly
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-base-url", "ftp://x/v1"}, "Config.Replicas"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-skip", "("}, "Config.Skip"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency", "-1s"}, "Config.Consistency"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-clients", "-3"}, "Config.ConsistencyClients"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-clients", "0"}, "at least one client"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-staleness", "-1ms"}, "Config.ConsistencyStaleness"},
		{[]string{"-consistency-replay", "../../testdata/consistency/pass.json", "-consistency-staleness", "-1ms"}, "ReplayConfig.ConsistencyStaleness"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-min-updates", "0"}, "at least 1"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-recovery", "0s"}, "a positive duration"},
		{[]string{"-base-url", "http://127.0.0.1:1/v1", "-consistency-stale-if-error", "-1s"}, "-consistency-stale-if-error -1s is negative"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, env, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %s", tc.args, code, stderr.String())
		}
	}
}

// TestReplay: -consistency-replay judges a saved history without any
// deployment or key, prints the verdict and the words of the run that
// saved it, and exits as that run would have; it refuses a -base-url.
func TestReplay(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		file string
		code int
		kind string // of the first failure
	}{
		{"pass.json", exitOK, ""},
		{"stale.json", exitFailed, conformancetest.KindMissedUpdate},
		{"another-write.json", exitFailed, conformancetest.KindAnotherWrite},
	} {
		path := filepath.Join("..", "..", "testdata", "consistency", tc.file)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-consistency-replay", path}, noEnv, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), "concluded the same") {
			t.Errorf("%s: exit %d, want %d:\n%s%s", tc.file, code, tc.code, stdout.String(), stderr.String())
		}
		res := replayJSON(t, path)
		if got := firstKind(res); res.Consistency == nil || !res.Consistency.Replayed || got != tc.kind {
			t.Errorf("%s: -json: the first failure's kind %q, want %q", tc.file, got, tc.kind)
		}
	}
	// The stale history, judged against a bound above its observed
	// staleness (40 ms of cache), passes; against 10 ms it fails, older
	// than the bound.
	for _, tc := range []struct {
		bound string
		code  int
		kind  string
	}{
		{"60ms", exitOK, ""},
		{"10ms", exitFailed, conformancetest.KindOlderThanBound},
	} {
		var stdout, stderr bytes.Buffer
		path := filepath.Join("..", "..", "testdata", "consistency", "stale.json")
		code := run(context.Background(), []string{"-consistency-replay", path, "-consistency-staleness", tc.bound}, noEnv, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), "observed staleness: ") {
			t.Errorf("-consistency-staleness %s: exit %d, want %d:\n%s%s", tc.bound, code, tc.code, stdout.String(), stderr.String())
		}
		res := replayJSON(t, path, "-consistency-staleness", tc.bound)
		if got := firstKind(res); got != tc.kind || res.Consistency.Staleness.String() != tc.bound || res.Consistency.ObservedStaleness == nil {
			t.Errorf("-consistency-staleness %s: -json: kind %q, want %q; %+v", tc.bound, got, tc.kind, res.Consistency)
		}
	}
	var stdout, stderr bytes.Buffer
	path := filepath.Join("..", "..", "testdata", "consistency", "pass.json")
	if code := run(context.Background(), []string{"-consistency-replay", path, "-base-url", "http://127.0.0.1:1/v1"}, noEnv, &stdout, &stderr); code != exitUsage {
		t.Errorf("with -base-url: exit %d, %s", code, stderr.String())
	}
	if code := run(context.Background(), []string{"-consistency-replay", "main.go"}, noEnv, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "not a consistency history") {
		t.Errorf("a Go file: exit %d, %s", code, stderr.String())
	}
}

// TestFaultFlags: -h documents the fault schedule, its four kinds and
// -consistency-redis; a fault without -consistency, or malformed, is a
// usage error that says so; a Redis URL's password is never printed.
func TestFaultFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"-h"}, func(k string) string { return map[string]string{redisURLVar: "redis://:s3cr3t@h:1"}[k] }, &stdout, &stderr)
	if strings.Contains(stderr.String(), "s3cr3t") {
		t.Errorf("-h prints the password of $%s", redisURLVar)
	}
	for _, want := range []string{"-consistency-fault", "exec COMMAND", "redis-pause D", "redis-kill-clients", "redis-failover", "-consistency-redis", "master_name", "window",
		"$INVENTORY_CONSISTENCY_REDIS_URL", "-consistency-recovery", "not-recovered", "-consistency-min-updates", "thin-history", "-consistency-stale-if-error", "unexpected-stale"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-h does not mention %s", want)
		}
	}
	env := keyOnly
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-consistency-fault", "6s redis-failover"}, "with -consistency"},
		{[]string{"-consistency", "10s", "-consistency-fault", "soon redis-failover"}, "not a duration"},
		{[]string{"-consistency", "10s", "-consistency-fault", "6s redis-failover"}, "-consistency-redis"},
		{[]string{"-consistency", "10s", "-consistency-fault", "6s redis-failover", "-consistency-redis", "redis://u:s3cr3t@h:1?bogus=1"}, "unknown parameter"},
	} {
		stdout.Reset()
		stderr.Reset()
		code := run(context.Background(), append([]string{"-base-url", "http://127.0.0.1:1/v1"}, tc.args...), env, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "s3cr3t") {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// replayJSON runs -consistency-replay path -json, then args, and returns
// its one result.
func replayJSON(t *testing.T, path string, args ...string) conformancetest.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	run(context.Background(), append([]string{"-consistency-replay", path, "-json"}, args...), func(string) string { return "" }, &stdout, &stderr)
	var rep conformancetest.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("-json: %v:\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, f := range rep.Results[0].Failures {
		if f.Kind == "" || len(f.Operations) == 0 {
			t.Errorf("-json: a failure without its kind or operations: %+v", f)
		}
	}
	return rep.Results[0]
}

// firstKind is the kind of res's first failure, "" when none.
func firstKind(res conformancetest.Result) string {
	if len(res.Failures) == 0 {
		return ""
	}
	return res.Failures[0].Kind
}

// TestFaultRedisCheckedFirst: on a run of the whole suite, a wrong
// password of the fault Redis (given by INVENTORY_CONSISTENCY_REDIS_URL,
// so on no command line) exits 2 right after the probe, before any check
// sent a request, and the password is printed nowhere; the same run with
// the right password gets past it.
func TestFaultRedisCheckedFirst(t *testing.T) {
	addr := redisproc.Start(t, "--requirepass", "right-pw-123")
	rs := &refserver.Server{}
	rs.Seed()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		rs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	env := func(redisURL string) func(string) string {
		return func(k string) string {
			return map[string]string{"INVENTORY_API_KEY": refserver.Key, redisURLVar: redisURL}[k]
		}
	}
	args := []string{"-base-url", srv.URL + "/v1", "-consistency", "1s", "-consistency-fault", "500ms redis-pause 10ms"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, env("redis://:wrong-pw-456@"+addr), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "refused") || strings.Contains(stderr.String()+stdout.String(), "-pw-") {
		t.Fatalf("a wrong password: exit %d, want 2 naming the refusal without the password:\n%s%s", code, stdout.String(), stderr.String())
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the deployment before the exit, want the probe alone", n)
	}
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), append(args, "-run", "^consistency/", "-consistency-min-updates", "1"), env("redis://:right-pw-123@"+addr), &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "redis-pause applied at") {
		t.Errorf("the right password: exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestThinHistory: a run holding fewer updates answered 200 than
// -consistency-min-updates fails with kind thin-history, naming the count
// and what to change; the text, -json and HTML reports say the history's
// density.
func TestThinHistory(t *testing.T) {
	base := (&refserver.Server{}).Start(t)
	html := filepath.Join(t.TempDir(), "report.html")
	args := []string{"-base-url", base, "-run", "^consistency/", "-consistency", "300ms", "-consistency-min-updates", "1000000"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(args, "-json", "-html", html), keyOf(refserver.Key), &stdout, &stderr)
	var rep conformancetest.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || code != exitFailed || len(rep.Results) != 1 {
		t.Fatalf("exit %d, %v:\n%s%s", code, err, stdout.String(), stderr.String())
	}
	res := rep.Results[0]
	c := res.Consistency
	if firstKind(res) != conformancetest.KindThinHistory || c == nil || c.Operations == 0 || c.UpdatesOK == 0 || c.MinUpdates != 1000000 ||
		!strings.Contains(res.Failures[0].Problem, "-consistency-min-updates") || !strings.Contains(res.Failures[0].Problem, "run longer") {
		t.Fatalf("%q %+v: %v", firstKind(res), c, res.Failures)
	}
	for _, member := range []string{`"operations":`, `"updatesOK":`, `"overlappedUpdates":`, `"staleLists":`, `"refusedUpdates":`, `"minUpdates": 1000000`, `"roundNs":`} {
		if !strings.Contains(stdout.String(), member) {
			t.Errorf("-json lacks %s", member)
		}
	}
	density := fmt.Sprintf("history: %d operations; %d lists answered 200; %d updates answered 200", c.Operations, c.Lists, c.UpdatesOK)
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), density) {
		t.Errorf("the HTML report lacks %q: %v", density, err)
	}
	stdout.Reset()
	run(context.Background(), args, keyOf(refserver.Key), &stdout, &stderr)
	if !strings.Contains(stdout.String(), "consistency/linearizable: history: ") || !strings.Contains(stdout.String(), "at least 1000000 needed") {
		t.Errorf("the text report does not say the history's density:\n%s", stdout.String())
	}
}

// keyOf is an environment with INVENTORY_API_KEY k alone.
func keyOf(k string) func(string) string {
	return func(name string) string {
		if name == "INVENTORY_API_KEY" {
			return k
		}
		return ""
	}
}
