package spool

import (
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolgate/toolgate/otelbridge/internal/otlpsafe"
)

// MaxRecordBytes bounds the OTLP form of a span's record, so that any one
// record can be delivered: a collector's gRPC receiver refuses a request
// larger than 4 MiB (ResourceExhausted, on every retry), which would stall
// the drainer behind it. A larger span has its largest attribute values
// cut (see [AttrCutBytes]); the decision's own attributes (gate.*) and
// values up to 4 KiB are never cut.
const MaxRecordBytes = 1 << 20

// AttrCutBytes (int) on a spooled span: how many bytes of its attribute
// values were cut to keep its record within [MaxRecordBytes] (each cut
// value keeps its head and tail around "…[N bytes cut for export]…").
const AttrCutBytes = otlpsafe.AttrCutBytes

// fitRecord keeps td within MaxRecordBytes (otlpsafe.Fit).
func fitRecord(td *tracepb.TracesData) { otlpsafe.Fit(td, MaxRecordBytes) }
