package wire

import (
	"net/http"
	"strings"
	"testing"
)

func TestValidateResponseBody(t *testing.T) {
	for _, tc := range []struct {
		op     string
		status int
		body   string
		ok     bool
	}{
		{ListInventory, 200, `[]`, true},
		{ListInventory, 200, `null`, false},
		{ListInventory, 200, `[{"petId":9223372036854775807,"quantity":0,"status":"sold"}]`, true},
		{ListInventory, 200, `[{"petId":9223372036854775808,"quantity":0,"status":"sold"}]`, false},
		{ListInventory, 200, `[{"petId":1,"quantity":1e999999999,"status":"sold"}]`, false},
		{ListInventory, 200, `[{"petId":1,"quantity":1e-999999999,"status":"sold"}]`, false},
		{ListInventory, 200, `[{"petId":1,"quantity":0e999999999,"status":"sold"}]`, true},
		{ListInventory, 200, `[{"petId":1,"quantity":5.0,"status":"sold"}]`, true},
		{ListInventory, 200, `[] []`, false},
		{ListInventory, 404, `{"code":"not_found","message":"m","status":404}`, false},
		{UpdateInventory, 404, `{"code":"not_found","message":"m","status":404}`, true},
		{UpdateInventory, 404, `{"code":"not_found","message":"m","status":404.0}`, true},
		{UpdateInventory, 404, `{"code":"invalid_json","message":"m","status":404}`, false},
		{UpdateInventory, 400, `{"code":"invalid_json","message":"","status":400}`, false},
		{UpdateInventory, 422, `{"code":"invalid_json","message":"m","status":422}`, false},
		{OtherMethodOp, 405, `{"code":"method_not_allowed","message":"m","status":405}`, true},
		{"nope", 200, `[]`, false},
	} {
		err := ValidateResponseBody(tc.op, tc.status, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s %d %s: %v", tc.op, tc.status, tc.body, err)
		}
	}
}

// TestShortKeyLeavesTextAlone: a key shorter than MinEchoKey ("k") is
// hidden where the suite sent it, and nowhere else, so that the report's
// words stay whole.
func TestShortKeyLeavesTextAlone(t *testing.T) {
	cl := &Client{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}
	ex := &Exchange{
		Req: Request{Method: http.MethodGet, Path: "/inventory", Auth: WithAuth("Bearer k")},
		URL: "http://127.0.0.1:1/v1/inventory",
		Resp: &Response{Status: 401, Header: http.Header{"Www-Authenticate": {`Bearer realm="inventory"`}},
			Body: []byte(`{"code":"unauthorized","message":"the key is unknown","status":401}`)},
	}
	rec := cl.Record(ex)
	if got := rec.Request.Header["Authorization"]; got != "Bearer "+KeyVar {
		t.Errorf("Authorization shown as %q; want Bearer %s", got, KeyVar)
	}
	if !strings.Contains(rec.Response.Body, "the key is unknown") || cl.Scrub("came back identity") != "came back identity" {
		t.Errorf("a short key garbled the text: %q", rec.Response.Body)
	}
}
