package testenv

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// localStackPort names the service of the local stack (make demo, and the
// defaults of deploy/otel-collector's configs) that listens on port by
// default, or "" for any other port. A test's collector or Jaeger that
// sends to one of these would write into a running demo: its ClickHouse
// or its Jaeger would list the test's services.
func localStackPort(port string) string {
	switch port {
	case "8123":
		return "ClickHouse HTTP (auditq serve)"
	case "9000":
		return "ClickHouse native"
	case "4317", "4318":
		return "the collector's OTLP receiver"
	case "13133":
		return "the collector's health check"
	case "8888":
		return "the collector's metrics"
	case "14317", "14318":
		return "Jaeger's OTLP receiver"
	case "14133":
		return "Jaeger's health check"
	case "16685", "16686":
		return "Jaeger's query API and UI"
	}
	return ""
}

var (
	// envRefRE matches ${env:NAME}, ${env:NAME:-default} and ${NAME}.
	envRefRE = regexp.MustCompile(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
	// hostPortRE matches host:port (names, IPv4, [IPv6]) after a
	// delimiter, and a YAML "port: N".
	hostPortRE = regexp.MustCompile(`(?:^|[\s"'\[,/=@])((?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:]*\]):(\d{2,5}))\b|\bport:\s*"?(\d{2,5})\b`)
)

// CheckLocalStackPorts resolves the ${env:NAME} and ${env:NAME:-default}
// references in a collector's (or Jaeger's) configuration files with env
// (the process's whole environment, KEY=VALUE, later entries winning as in
// exec) and returns an error naming every address, listener or exporter
// destination, that uses a default port of the local stack (8123, 4317,
// 4318, 13133, 8888, 14317, 16686, …; see localStackPort), with the
// variable that would have to be set. nil: the process binds and sends
// only to ports the test chose. A test that writes its own collector
// config and env calls it before starting the process; StartCollector
// and StartJaeger do.
func CheckLocalStackPorts(configs [][]byte, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	found := map[string]bool{}
	for _, cfg := range configs {
		for _, line := range strings.Split(string(cfg), "\n") {
			if i := strings.Index(line, "#"); i >= 0 && !strings.Contains(line[:i], "${") {
				line = line[:i] // a YAML comment
			}
			var from []string
			resolved := envRefRE.ReplaceAllStringFunc(line, func(ref string) string {
				m := envRefRE.FindStringSubmatch(ref)
				if v, ok := vars[m[1]]; ok && v != "" {
					return v
				}
				from = append(from, m[1])
				return m[2]
			})
			for _, m := range hostPortRE.FindAllStringSubmatch(resolved, -1) {
				addr, port := m[1], m[2]
				if port == "" {
					addr, port = "port "+m[3], m[3]
				}
				if what := localStackPort(port); what != "" {
					msg := fmt.Sprintf("%s (%s) in %q", addr, what, strings.TrimSpace(line))
					if len(from) > 0 {
						msg += " — set " + strings.Join(from, " or ") + " to a port of the test's own"
					}
					found[msg] = true
				}
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(found))
	for m := range found {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	return fmt.Errorf("testenv: the process would use default ports of the local stack (a running make demo would get the test's data): %s",
		strings.Join(msgs, "; "))
}
