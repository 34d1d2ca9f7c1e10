// Command deploygen writes the generated files of deploy/ from their
// sources (see package deploygen): the PrometheusRule from
// deploy/prometheus/alerts.yaml and the Grafana ConfigMap from
// deploy/grafana/inventory-server.json. `go generate work` runs it, from
// the go:generate line of package deploygen:
//
//	go run ../cmd/deploygen -root ../../..
//
// It prints each file it rewrote, and nothing when all were up to date.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/petinventory/petinventory/internal/deploycheck/deploygen"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: deploygen [-root DIR]")
		os.Exit(2)
	}
	written, err := deploygen.Write(*root)
	for _, name := range written {
		fmt.Println("deploygen: wrote", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploygen:", err)
		os.Exit(1)
	}
}
