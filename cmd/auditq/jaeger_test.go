package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// auditq trace --jaeger-url prints a link the Jaeger serves the trace at:
// against the local stack's Jaeger (built from its Go module, no UI) the
// query API's JSON, which answers 200 with the trace; --jaeger-link forces
// the kind; and it says on stderr when Jaeger is away or lacks the trace.
func TestTraceJaegerLink(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	j := testenv.StartJaeger(t)
	id := audittest.TraceOps
	sendTrace(t, j, id)

	tests := []struct {
		name, trace, url, kind string
		wantLink, wantNote     string
		served                 bool // the link answers 200 with the trace
	}{
		{name: "auto finds the API of a Jaeger without UI", trace: id, url: j.QueryURL, kind: "auto", wantLink: j.QueryURL + "/api/traces/" + id, served: true},
		{name: "auto is the default", trace: id, url: j.QueryURL + "/", wantLink: j.QueryURL + "/api/traces/" + id, served: true},
		{name: "api", trace: id, url: j.QueryURL, kind: "api", wantLink: j.QueryURL + "/api/traces/" + id, served: true},
		{name: "ui when asked", trace: id, url: j.QueryURL, kind: "ui", wantLink: j.QueryURL + "/trace/" + id},
		{name: "a trace Jaeger does not hold", trace: audittest.TraceCoder, url: j.QueryURL, kind: "auto",
			wantLink: j.QueryURL + "/api/traces/" + audittest.TraceCoder, wantNote: "does not hold trace " + audittest.TraceCoder},
		{name: "Jaeger away", trace: id, url: "http://127.0.0.1:1", kind: "auto",
			wantLink: "http://127.0.0.1:1/trace/" + id, wantNote: "Jaeger at http://127.0.0.1:1 did not answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"trace", tc.trace, "--dsn", env.ReaderDSN, "--jaeger-url", tc.url, "-o", "json"}
			if tc.kind != "" {
				args = append(args, "--jaeger-link", tc.kind)
			}
			var out bytes.Buffer
			code, stderr := execAuditq(t, ctx, &out, args...)
			require.Equal(t, 0, code, stderr)
			var got struct {
				JaegerURL string `json:"jaeger_url"`
			}
			require.NoError(t, json.Unmarshal(out.Bytes(), &got))
			assert.Equal(t, tc.wantLink, got.JaegerURL)
			if tc.wantNote == "" {
				assert.Empty(t, stderr)
			} else {
				assert.Contains(t, stderr, tc.wantNote)
			}
			if tc.served {
				resp, err := http.Get(got.JaegerURL)
				require.NoError(t, err)
				defer resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				var body struct {
					Data []testenv.JaegerTrace `json:"data"`
				}
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
				require.Len(t, body.Data, 1)
				assert.Equal(t, id, body.Data[0].TraceID)
			}
		})
	}

	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, "trace", id, "--dsn", env.ReaderDSN, "--jaeger-url", j.QueryURL, "--jaeger-link", "web")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--jaeger-link "web": want auto, ui or api`)
}

// auditq trace takes its Jaeger URL from $AUDITQ_JAEGER_URL (what
// .demo/env exports) when --jaeger-url is not given; the flag wins, and
// none prints no link.
func TestTraceJaegerURLFromEnv(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, audittest.Fixture()))
	j := testenv.StartJaeger(t)
	id := audittest.TraceOps
	sendTrace(t, j, id)

	tests := []struct {
		name, env string
		args      []string
		wantLink  string
	}{
		{name: "from the environment", env: j.QueryURL, wantLink: j.QueryURL + "/api/traces/" + id},
		{name: "the flag wins", env: "http://127.0.0.1:1", args: []string{"--jaeger-url", j.QueryURL}, wantLink: j.QueryURL + "/api/traces/" + id},
		{name: "none in the environment", env: "none"},
		{name: "none as the flag", env: j.QueryURL, args: []string{"--jaeger-url", "none"}},
		{name: "unset", env: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(jaegerURLEnv, tc.env)
			var out bytes.Buffer
			code, stderr := execAuditq(t, ctx, &out, append([]string{"trace", id, "--dsn", env.ReaderDSN, "-o", "json"}, tc.args...)...)
			require.Equal(t, 0, code, stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal(out.Bytes(), &got))
			if tc.wantLink == "" {
				assert.NotContains(t, got, "jaeger_url")
				return
			}
			assert.Equal(t, tc.wantLink, got["jaeger_url"])
			assert.Empty(t, stderr)
		})
	}
}

// sendTrace exports one span of trace id to Jaeger's OTLP/HTTP receiver
// (JSON encoding) and waits until the query API returns it.
func sendTrace(t *testing.T, j *testenv.Jaeger, id string) {
	t.Helper()
	now := time.Now()
	body := fmt.Sprintf(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"toolgate-demo"}}]},
"scopeSpans":[{"scope":{"name":"auditq-test"},"spans":[{"traceId":%q,"spanId":"c3c3c3c3c3c3c3c3","name":"invoke_agent ops","kind":1,
"startTimeUnixNano":"%d","endTimeUnixNano":"%d"}]}]}]}`, id, now.Add(-time.Second).UnixNano(), now.UnixNano())
	resp, err := http.Post("http://"+j.OTLPHTTP+"/v1/traces", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool {
		_, err := j.Trace(context.Background(), id)
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "Jaeger never returned trace %s", id)
}
