package conformancetest

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestConfigErrors(t *testing.T) {
	good := Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "key-0123456789"}
	for name, mutate := range map[string]func(*Config){
		"no base URL":       func(c *Config) { c.BaseURL = "" },
		"relative base URL": func(c *Config) { c.BaseURL = "/v1" },
		"ftp base URL":      func(c *Config) { c.BaseURL = "ftp://x/v1" },
		"query":             func(c *Config) { c.BaseURL += "?x=1" },
		"no key":            func(c *Config) { c.APIKey = "" },
		"key with a space":  func(c *Config) { c.APIKey = "a b" },
		"level":             func(c *Config) { c.Level = "strict" },
		"run":               func(c *Config) { c.Run = "(" },
		"body limit":        func(c *Config) { c.MaxBodyBytes = 10 },
		"timeout":           func(c *Config) { c.RequestTimeout = -time.Second },
		"parallelism":       func(c *Config) { c.Parallelism = 1 },
	} {
		c := good
		mutate(&c)
		if _, err := RunChecks(context.Background(), c); err == nil || errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: err %v, want a configuration error", name, err)
		}
	}
	c := good
	c.Run = "no-such-check"
	if _, err := RunChecks(context.Background(), c); !errors.Is(err, ErrNoChecks) {
		t.Errorf("a Run that matches nothing: %v, want ErrNoChecks", err)
	}
	c.Run = "headers/"
	c.Level = LevelSpec
	if _, err := RunChecks(context.Background(), c); !errors.Is(err, ErrNoChecks) {
		t.Errorf("a contract check at level spec: %v, want ErrNoChecks", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = RunChecks(context.Background(), Config{BaseURL: "http://" + addr + "/v1", APIKey: "key-0123456789", RequestTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v, want ErrUnreachable", err)
	}
	if strings.Contains(err.Error(), "key-0123456789") {
		t.Errorf("the error holds the key: %v", err)
	}
}

func TestChecksAreNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks(LevelContract) {
		if seen[c.Name] {
			t.Errorf("two checks are named %s", c.Name)
		}
		seen[c.Name] = true
		if c.Source == "" || c.Rule == "" || !strings.Contains(c.Name, "/") {
			t.Errorf("check %s lacks a group, a source or a rule", c.Name)
		}
	}
	for _, c := range Checks(LevelSpec) {
		if !c.Spec || !seen[c.Name] || !strings.Contains(c.Source, "spec §") {
			t.Errorf("spec-level check %s is not a contract check citing the spec", c.Name)
		}
	}
}

func TestParseChallenge(t *testing.T) {
	for _, tc := range []struct {
		in     string
		scheme string
		params map[string]string
		bad    bool
	}{
		{in: `Bearer realm="inventory"`, scheme: "Bearer", params: map[string]string{"realm": "inventory"}},
		{in: `Bearer realm="inventory", error="invalid_token"`, scheme: "Bearer", params: map[string]string{"realm": "inventory", "error": "invalid_token"}},
		{in: `bearer REALM=inventory,error=invalid_token`, scheme: "bearer", params: map[string]string{"realm": "inventory", "error": "invalid_token"}},
		{in: `Bearer realm="a \"b\""`, scheme: "Bearer", params: map[string]string{"realm": `a "b"`}},
		{in: `Bearer`, scheme: "Bearer", params: map[string]string{}},
		{in: `Bearer realm="x`, bad: true},
		{in: `Bearer realm`, bad: true},
		{in: `Bearer realm="a" error="b"`, bad: true},
		{in: `Bearer realm="a", realm="b"`, bad: true},
	} {
		scheme, params, err := parseChallenge(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		if tc.bad {
			continue
		}
		if scheme != tc.scheme || len(params) != len(tc.params) {
			t.Errorf("%s: %q %v", tc.in, scheme, params)
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("%s: %s=%q, want %q", tc.in, k, params[k], v)
			}
		}
	}
}

func TestValidateResponseBody(t *testing.T) {
	for _, tc := range []struct {
		op     string
		status int
		body   string
		ok     bool
	}{
		{listInventory, 200, `[]`, true},
		{listInventory, 200, `null`, false},
		{listInventory, 200, `[{"petId":9223372036854775807,"quantity":0,"status":"sold"}]`, true},
		{listInventory, 200, `[{"petId":9223372036854775808,"quantity":0,"status":"sold"}]`, false},
		{listInventory, 200, `[{"petId":1,"quantity":1e999999999,"status":"sold"}]`, false},
		{listInventory, 200, `[{"petId":1,"quantity":1e-999999999,"status":"sold"}]`, false},
		{listInventory, 200, `[{"petId":1,"quantity":0e999999999,"status":"sold"}]`, true},
		{listInventory, 200, `[{"petId":1,"quantity":5.0,"status":"sold"}]`, true},
		{listInventory, 200, `[] []`, false},
		{listInventory, 404, `{"code":"not_found","message":"m","status":404}`, false},
		{updateInventory, 404, `{"code":"not_found","message":"m","status":404}`, true},
		{updateInventory, 404, `{"code":"not_found","message":"m","status":404.0}`, true},
		{updateInventory, 404, `{"code":"invalid_json","message":"m","status":404}`, false},
		{updateInventory, 400, `{"code":"invalid_json","message":"","status":400}`, false},
		{updateInventory, 422, `{"code":"invalid_json","message":"m","status":422}`, false},
		{otherMethodOp, 405, `{"code":"method_not_allowed","message":"m","status":405}`, true},
		{"nope", 200, `[]`, false},
	} {
		err := validateResponseBody(tc.op, tc.status, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s %d %s: %v", tc.op, tc.status, tc.body, err)
		}
	}
}

// TestRecordsHideTheKey: every place a record or a failure can show the
// key shows $INVENTORY_API_KEY.
func TestRecordsHideTheKey(t *testing.T) {
	const key = "secret-key-0123456789"
	rn, err := newRunner(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	ex := &exchange{
		req: request{method: http.MethodGet, path: "/inventory", auth: withAuth(key)},
		url: "http://127.0.0.1:1/v1/inventory",
		resp: &response{status: 401, header: http.Header{"X-Echo": {"Bearer " + key}},
			body: []byte(`{"code":"unauthorized","message":"bad key ` + key + `","status":401}`)},
	}
	res := Result{Name: "x/y"}
	c := &checker{rn: rn, res: &res}
	c.failf(ex, "no "+key, "saw %s", key)
	rep := &Report{Results: []Result{{Name: "x/y", Outcome: Fail, Failures: res.Failures, Rule: "r"}}}
	var text, junit bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	for name, out := range map[string]string{"text": text.String(), "junit": junit.String(), "json": string(js)} {
		if strings.Contains(out, key) {
			t.Errorf("the %s output holds the key:\n%s", name, out)
		}
		if !strings.Contains(out, keyVar) {
			t.Errorf("the %s output does not show where the key was", name)
		}
	}
	if err := xml.Unmarshal(junit.Bytes(), new(struct{})); err != nil {
		t.Errorf("the JUnit output is not XML: %v", err)
	}
	if !rn.echoes(ex.resp, key) || rn.echoes(ex.resp, "other-key-0123456789") || rn.echoes(ex.resp, "short") {
		t.Errorf("echoes: wrong verdict")
	}
}

// TestShortKeyLeavesTextAlone: a key shorter than minEchoKey ("k") is
// hidden where the suite sent it, and nowhere else, so that the report's
// words stay whole.
func TestShortKeyLeavesTextAlone(t *testing.T) {
	rn, err := newRunner(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ex := &exchange{
		req: request{method: http.MethodGet, path: "/inventory", auth: withAuth("Bearer k")},
		url: "http://127.0.0.1:1/v1/inventory",
		resp: &response{status: 401, header: http.Header{"Www-Authenticate": {`Bearer realm="inventory"`}},
			body: []byte(`{"code":"unauthorized","message":"the key is unknown","status":401}`)},
	}
	rec := rn.record(ex)
	if got := rec.Request.Header["Authorization"]; got != "Bearer "+keyVar {
		t.Errorf("Authorization shown as %q; want Bearer %s", got, keyVar)
	}
	if !strings.Contains(rec.Response.Body, "the key is unknown") || rn.scrub("came back identity") != "came back identity" {
		t.Errorf("a short key garbled the text: %q", rec.Response.Body)
	}
}

func TestReportSummary(t *testing.T) {
	rep := &Report{Results: []Result{{Outcome: Pass}, {Outcome: Pass}, {Outcome: Fail}, {Outcome: Skip}}}
	if got := rep.Summary(); got != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("Summary() = %q", got)
	}
	if !rep.Failed() {
		t.Error("Failed() = false")
	}
}
