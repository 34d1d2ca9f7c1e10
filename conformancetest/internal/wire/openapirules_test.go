package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestOpenAPIRules proves that the rules this package embeds agree with
// the module's testdata/openapi-rules.json, which the repository's internal/e2e module
// derives from inventory/openapi.yaml with kin-openapi and compares
// (TestOpenAPIRulesFile): the same statuses and required headers per
// operation, and the same verdict on every body of its corpus.
func TestOpenAPIRules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openapi-rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Operations []struct {
			OperationID     string              `json:"operationId"`
			Method          string              `json:"method"`
			Path            string              `json:"path"`
			Statuses        []int               `json:"statuses"`
			RequiredHeaders map[string][]string `json:"requiredHeaders"`
		} `json:"operations"`
		Bodies []struct {
			OperationID string `json:"operationId"`
			Status      int    `json:"status"`
			Body        string `json:"body"`
			Valid       bool   `json:"valid"`
		} `json:"bodies"`
	}
	if err := json.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, op := range rules.Operations {
		ops = append(ops, op.OperationID)
		if got, ok := OperationFor(op.Method, op.Path); !ok || got != op.OperationID {
			t.Errorf("%s %s maps to %q, the document's operation is %s", op.Method, op.Path, got, op.OperationID)
		}
		if got := DocumentedStatuses(op.OperationID); !slices.Equal(got, op.Statuses) {
			t.Errorf("%s: statuses %v, the document's are %v", op.OperationID, got, op.Statuses)
		}
		for st, want := range op.RequiredHeaders {
			n, _ := strconv.Atoi(st)
			if got := RequiredHeaders(op.OperationID, n); !slices.Equal(got, want) {
				t.Errorf("%s %s: required headers %v, the document's are %v", op.OperationID, st, got, want)
			}
		}
	}
	if want := []string{ListInventory, HeadInventory, UpdateInventory, OtherMethodOp}; !slices.Equal(ops, want) {
		t.Errorf("the file has operations %v, want %v", ops, want)
	}
	if len(rules.Bodies) < 1000 {
		t.Fatalf("the corpus has %d bodies", len(rules.Bodies))
	}
	for _, c := range rules.Bodies {
		err := ValidateResponseBody(c.OperationID, c.Status, []byte(c.Body))
		if (err == nil) != c.Valid {
			t.Errorf("%s %d %s: the document says valid=%t, ValidateResponseBody: %v", c.OperationID, c.Status, c.Body, c.Valid, err)
		}
	}
}
