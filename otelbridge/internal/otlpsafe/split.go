package otlpsafe

import (
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// MaxRequestBytes bounds the requests Client sends: under the 4 MiB a
// gRPC receiver (the collector's OTLP receiver by default) takes, with
// room for the request's framing.
const MaxRequestBytes = 2 << 20

// Split divides rs into requests of at most max bytes each (a single span
// larger than max makes a request of its own), keeping each span with its
// resource and scope. rs itself is returned when it fits.
func Split(rs []*tracepb.ResourceSpans, max int) [][]*tracepb.ResourceSpans {
	if proto.Size(&tracepb.TracesData{ResourceSpans: rs}) <= max {
		return [][]*tracepb.ResourceSpans{rs}
	}
	var out [][]*tracepb.ResourceSpans
	var cur []*tracepb.ResourceSpans
	size := 0
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				n := proto.Size(s) + 16
				if len(cur) > 0 && size+n > max {
					out = append(out, cur)
					cur, size = nil, 0
				}
				if len(cur) == 0 || cur[len(cur)-1].Resource != r.Resource || cur[len(cur)-1].SchemaUrl != r.SchemaUrl {
					cur = append(cur, &tracepb.ResourceSpans{Resource: r.Resource, SchemaUrl: r.SchemaUrl})
					size += proto.Size(r.GetResource()) + len(r.GetSchemaUrl()) + 16
				}
				last := cur[len(cur)-1]
				if m := len(last.ScopeSpans); m == 0 || last.ScopeSpans[m-1].Scope != ss.Scope || last.ScopeSpans[m-1].SchemaUrl != ss.SchemaUrl {
					last.ScopeSpans = append(last.ScopeSpans, &tracepb.ScopeSpans{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl})
					size += proto.Size(ss.GetScope()) + len(ss.GetSchemaUrl()) + 16
				}
				sc := last.ScopeSpans[len(last.ScopeSpans)-1]
				sc.Spans = append(sc.Spans, s)
				size += n
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
