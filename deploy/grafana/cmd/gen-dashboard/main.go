// Command gen-dashboard writes toolgate's gate-decisions Grafana dashboard
// (package deploy/grafana) as JSON.
//
//	go run ./deploy/grafana/cmd/gen-dashboard -o deploy/otel-collector/grafana/dashboards/gate-decisions.json
//
// Flags: -o FILE (default stdout), -database (default otel), -jaeger-url
// (default http://localhost:16686). Exit status 1 on an error, 2 on bad usage.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/deploy/grafana"
)

func main() {
	out := flag.String("o", "", "output file (default stdout)")
	db := flag.String("database", "otel", "ClickHouse database of gate_decisions")
	jaeger := flag.String("jaeger-url", "http://localhost:16686", "default base URL of the trace links")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "gen-dashboard: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	b, err := grafana.JSON(grafana.WithDatabase(*db), grafana.WithJaegerURL(*jaeger))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-dashboard:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-dashboard:", err)
		os.Exit(1)
	}
}
