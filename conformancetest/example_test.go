package conformancetest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/petinventory/petinventory/conformancetest"
)

// yourInventoryHandler stands for your service's handler, with the
// inventory routes mounted under /v1.
var yourInventoryHandler http.Handler = http.NotFoundHandler()

// In a test of your service: serve it on a real socket and run every check
// as a subtest (go test -run 'TestConformance/auth/' selects a group).
func ExampleRun() {
	testConformance := func(t *testing.T) {
		srv := httptest.NewServer(yourInventoryHandler)
		defer srv.Close()
		conformancetest.Run(t, conformancetest.Config{
			BaseURL: srv.URL + "/v1",
			APIKey:  "the-key-your-service-accepts",
		})
	}
	_ = testConformance // func TestConformance(t *testing.T) { testConformance(t) }
}

// Judge a deployment by URL, as the inventory-conformance command does.
func ExampleRunChecks() {
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{
		BaseURL:  "https://staging.example/v1",
		APIKey:   os.Getenv("INVENTORY_API_KEY"),
		ReadOnly: true, // production: change nothing
	})
	if err != nil {
		fmt.Println(err) // invalid configuration, or ErrUnreachable
		return
	}
	_ = rep.WriteText(os.Stdout, false)
	if rep.Failed() {
		os.Exit(1)
	}
}

// Leave one HTML page for the person who opens the CI artifact after a red
// build: the verdict, then each failure with its request, answer and curl
// line.
func ExampleReport_WriteHTML() {
	rep, err := conformancetest.RunChecks(context.Background(), conformancetest.Config{
		BaseURL: "https://staging.example/v1",
		APIKey:  os.Getenv("INVENTORY_API_KEY"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.Create("report.html")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rep.WriteHTML(f); err != nil {
		fmt.Println(err)
	}
	if err := f.Close(); err != nil {
		fmt.Println(err)
	}
}

// The checks that judge an implementation by the seed specification alone.
func ExampleChecks() {
	for _, c := range conformancetest.Checks(conformancetest.LevelSpec) {
		fmt.Printf("%-26s %s\n", c.Name, c.Source)
	}
	// Output:
	// list/ok                    spec §4.1; CONTRACT.md §List inventory
	// auth/missing-header        spec §5; CONTRACT.md §Authentication
	// auth/other-scheme          spec §5; CONTRACT.md §Authentication
	// auth/no-scheme             spec §5; CONTRACT.md §Authentication
	// auth/wrong-key             spec §5; CONTRACT.md §Authentication
	// auth/unknown-pet           spec §5; CONTRACT.md §Check order
	// petid/unknown              spec §4.2 rule 3; CONTRACT.md §Update stock level › petId
	// body/missing-quantity      spec §4.2 rule 1; CONTRACT.md §Update stock level › Body
	// body/quantity-not-integer  spec §4.2 rule 2; CONTRACT.md §Update stock level › Body
	// update/ok                  spec §4.2 rule 4; CONTRACT.md §Update stock level › Success
	// update/replaces            spec §2 InventoryUpdate; CONTRACT.md §Update stock level › Success
	// errors/body-shape          spec §7; CONTRACT.md §Every response; CONTRACT.md §Error codes
}
