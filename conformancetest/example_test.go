package conformancetest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

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

// Prove in your own Go test that the deployment survives a failover:
// the suite fails the Redis master over 6 s into a 20 s consistency run,
// and the report says what the failover cost (Result.Consistency.Faults).
func ExampleFault() {
	schedule := []string{"6s redis-failover", "12s exec kubectl -n shop delete pod redis-1"}
	var faults []conformancetest.Fault
	for _, s := range schedule {
		f, err := conformancetest.ParseFault(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%v after the start: %s %q\n", f.Offset, f.Kind, f.Args)
		faults = append(faults, f)
	}
	_, err := conformancetest.ParseFault("6s redis-restart")
	fmt.Println(err)
	cfg := conformancetest.Config{
		BaseURL:           "https://staging.example/v1",
		APIKey:            os.Getenv("INVENTORY_API_KEY"),
		Run:               "^consistency/",
		Consistency:       20 * time.Second,
		ConsistencyFaults: faults,
		// The Sentinel set the store uses, as its REDIS_URL names it
		// ("redis://sentinel-0.shop:26379?master_name=inventory&addr=…"),
		// from a variable: its password is in no source and no command line.
		ConsistencyRedis: os.Getenv("INVENTORY_CONSISTENCY_REDIS_URL"),
		// After the last fault, the deployment has 30 s to answer a
		// strict list and an update with 200 again (KindNotRecovered).
		ConsistencyRecovery: 30 * time.Second,
	}
	testFailover := func(t *testing.T) {
		rep, err := conformancetest.RunChecks(t.Context(), cfg)
		if errors.Is(err, conformancetest.ErrFault) {
			t.Fatalf("the harness is broken, not the deployment: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		res, _ := rep.Result("consistency/linearizable")
		for _, f := range res.Consistency.Faults {
			t.Log(f.Line()) // its window without a successful update, its 503s, the lists' availability
		}
		t.Log(res.Consistency.Recovered) // "recovered 2.4 s after the last fault ended: …"
		if res.Outcome != conformancetest.Pass {
			t.Fatalf("not linearizable through the failover: %v", res.Failures)
		}
	}
	_ = testFailover // func TestFailover(t *testing.T) { testFailover(t) }
	// Output:
	// 6s after the start: redis-failover []
	// 12s after the start: exec ["kubectl -n shop delete pod redis-1"]
	// fault "6s redis-restart": unknown kind "redis-restart"; the kinds are exec, redis-pause, redis-kill-clients and redis-failover
}
