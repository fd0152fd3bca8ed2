package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	otelcollector "github.com/toolgate/toolgate/deploy/otel-collector"
)

// Jaeger is a Jaeger v2 process (in-memory storage) started by StartJaeger
// with deploy/otel-collector/jaeger.yaml on free loopback ports.
type Jaeger struct {
	// OTLPGRPC and OTLPHTTP are Jaeger's own OTLP receiver (host:port); the
	// collector's traces pipeline sends to OTLPGRPC.
	OTLPGRPC, OTLPHTTP string
	// QueryURL is the base URL of the HTTP query API (http://host:port).
	QueryURL string
	// LogPath is Jaeger's combined stdout/stderr.
	LogPath string

	proc *managedProcess
}

// StartJaeger starts the Jaeger binary (TOOLGATE_JAEGER, default bin/jaeger;
// missing: skip, or fail under TOOLGATE_INTEGRATION=1) and waits until its
// query API answers. The process is stopped when the test ends.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	bin := lookupComponent(t, "TOOLGATE_JAEGER", "bin/jaeger", "scripts/build-jaeger.sh")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfgPath, otelcollector.JaegerConfig(), 0o600); err != nil {
		t.Fatalf("testenv: jaeger config: %v", err)
	}
	var j *Jaeger
	for attempt := 1; ; attempt++ {
		j = &Jaeger{
			OTLPGRPC: pickLoopbackAddr(t),
			OTLPHTTP: pickLoopbackAddr(t),
			LogPath:  filepath.Join(dir, "jaeger.log"),
		}
		query, health := pickLoopbackAddr(t), pickLoopbackAddr(t)
		j.QueryURL = "http://" + query
		env := []string{
			"TOOLGATE_JAEGER_OTLP_GRPC=" + j.OTLPGRPC,
			"TOOLGATE_JAEGER_OTLP_HTTP=" + j.OTLPHTTP,
			"TOOLGATE_JAEGER_QUERY_HTTP=" + query,
			"TOOLGATE_JAEGER_QUERY_GRPC=" + pickLoopbackAddr(t),
			"TOOLGATE_JAEGER_HEALTH=" + health,
		}
		if err := CheckLocalStackPorts([][]byte{otelcollector.JaegerConfig()}, append(os.Environ(), env...)); err != nil {
			t.Fatal(err)
		}
		j.proc = &managedProcess{name: "jaeger", bin: bin, args: []string{"--config", cfgPath}, env: env, logPath: j.LogPath}
		err := j.proc.start()
		if err == nil {
			err = j.proc.waitReady(context.Background(), j.QueryURL+"/api/services", 60*time.Second)
		}
		// The query API can answer before the OTLP receivers listen (seen
		// under load: a span posted at once was refused).
		for _, addr := range []string{j.OTLPGRPC, j.OTLPHTTP} {
			if err == nil {
				err = waitListening(addr, 30*time.Second)
			}
		}
		if err == nil {
			break
		}
		inUse := j.proc.addrInUse()
		_ = j.proc.stop(syscall.SIGKILL, 5*time.Second)
		if !inUse || attempt == 3 {
			t.Fatal(err)
		}
		_ = os.Remove(j.LogPath)
	}
	t.Cleanup(func() {
		if err := j.proc.stop(syscall.SIGTERM, 20*time.Second); err != nil {
			t.Errorf("%v", err)
		}
	})
	return j
}

// JaegerTrace is one trace of the v1 query API (GET /api/traces).
type JaegerTrace struct {
	TraceID string       `json:"traceID"`
	Spans   []JaegerSpan `json:"spans"`
}

// JaegerSpan is one span of a JaegerTrace. StartTime is in microseconds
// since the epoch, Duration in microseconds.
type JaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []JaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []JaegerTag `json:"tags"`
}

// JaegerRef is a span reference (CHILD_OF the parent span).
type JaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// JaegerTag is a span attribute as the v1 API renders it; Value keeps the
// attribute's type (string, bool, float64 for numbers).
type JaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Tag returns the value of the tag key and whether the span has it.
func (s JaegerSpan) Tag(key string) (any, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

// ParentSpanID is the span's CHILD_OF reference, or "" for a root span.
func (s JaegerSpan) ParentSpanID() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Traces queries GET /api/traces for service within the last lookback, with
// tag filters (key → value, ANDed; nil for none), returning at most limit
// traces.
func (j *Jaeger) Traces(ctx context.Context, service string, tags map[string]string, lookback time.Duration, limit int) ([]JaegerTrace, error) {
	q := url.Values{}
	q.Set("service", service)
	q.Set("limit", fmt.Sprint(limit))
	now := time.Now()
	q.Set("start", fmt.Sprint(now.Add(-lookback).UnixMicro()))
	q.Set("end", fmt.Sprint(now.Add(time.Minute).UnixMicro()))
	if len(tags) > 0 {
		b, err := json.Marshal(tags)
		if err != nil {
			return nil, err
		}
		q.Set("tags", string(b))
	}
	var out struct {
		Data   []JaegerTrace `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := j.get(ctx, "/api/traces?"+q.Encode(), &out); err != nil {
		return nil, err
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("testenv: jaeger /api/traces: %s", out.Errors[0].Msg)
	}
	return out.Data, nil
}

// Trace fetches one trace by its hex ID (GET /api/traces/{id}).
func (j *Jaeger) Trace(ctx context.Context, traceID string) (JaegerTrace, error) {
	var out struct {
		Data []JaegerTrace `json:"data"`
	}
	if err := j.get(ctx, "/api/traces/"+url.PathEscape(traceID), &out); err != nil {
		return JaegerTrace{}, err
	}
	if len(out.Data) != 1 {
		return JaegerTrace{}, fmt.Errorf("testenv: jaeger trace %s: %d results", traceID, len(out.Data))
	}
	return out.Data[0], nil
}

// Services lists the service names Jaeger has seen (GET /api/services).
func (j *Jaeger) Services(ctx context.Context) ([]string, error) {
	var out struct {
		Data []string `json:"data"`
	}
	err := j.get(ctx, "/api/services", &out)
	return out.Data, err
}

func (j *Jaeger) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.QueryURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testenv: jaeger %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("testenv: jaeger %s: %w", path, ErrJaegerNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testenv: jaeger %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("testenv: jaeger %s: decode: %w", path, err)
	}
	return nil
}

// ErrJaegerNotFound is wrapped when the query API answers 404 (an unknown
// trace ID).
var ErrJaegerNotFound = errors.New("not found")

// waitListening waits until addr accepts a TCP connection, for at most d.
func waitListening(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jaeger: %s not listening after %v: %w", addr, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
