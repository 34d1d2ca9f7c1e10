package suite

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

// TestRecordsHideTheKey: every place a record or a failure can show the
// key shows $INVENTORY_API_KEY.
func TestRecordsHideTheKey(t *testing.T) {
	const key = "secret-key-0123456789"
	rn := NewRunner(Settings{BaseURL: "http://127.0.0.1:1/v1", APIKey: key}, nil)
	ex := &wire.Exchange{
		Req: wire.Request{Method: http.MethodGet, Path: "/inventory", Auth: wire.WithAuth(key)},
		URL: "http://127.0.0.1:1/v1/inventory",
		Resp: &wire.Response{Status: 401, Header: http.Header{"X-Echo": {"Bearer " + key}},
			Body: []byte(`{"code":"unauthorized","message":"bad key ` + key + `","status":401}`)},
	}
	res := report.Result{Name: "x/y"}
	c := &Checker{rn: rn, res: &res}
	c.Failf(ex, "no "+key, "saw %s", key)
	rep := &report.Report{Results: []report.Result{{Name: "x/y", Outcome: report.Fail, Failures: res.Failures, Rule: "r"}}}
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
		if !strings.Contains(out, wire.KeyVar) {
			t.Errorf("the %s output does not show where the key was", name)
		}
	}
	if err := xml.Unmarshal(junit.Bytes(), new(struct{})); err != nil {
		t.Errorf("the JUnit output is not XML: %v", err)
	}
	if !wire.Echoes(ex.Resp, key) || wire.Echoes(ex.Resp, "other-key-0123456789") || wire.Echoes(ex.Resp, "short") {
		t.Errorf("echoes: wrong verdict")
	}
}
