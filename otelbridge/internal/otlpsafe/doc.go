// Package otlpsafe makes OTLP trace data encodable: protobuf string fields
// must be valid UTF-8, and one invalid byte anywhere in a request — a span
// name, an attribute key or value, an event, a link's trace state, a
// status description, a resource or scope attribute — fails the
// marshalling of the whole request, taking every span in it down with it.
// Spans the executor makes are valid already (gate.SafeText); this is for
// every other span on the same provider (an HTTP client instrumentation
// recording the error a hostile server sent, a bridged library's span).
//
// Invalid bytes are written as the four characters \xNN, as gate.SafeText
// does, so that what was sent stays visible; nothing is cut.
package otlpsafe
