package otelbridge

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/otelbridge/sampling"
)

// TestRealCollectorRequiresToken runs our collector with its bearer-token
// authenticator (deploy/otel-collector/config.yaml) and configures the
// exporter with no token, a wrong token and the right one, through
// Config.Headers and through OTEL_EXPORTER_OTLP_HEADERS. A missing or
// wrong token makes Check and Setup fail at once with ErrUnauthenticated,
// naming the collector and the fix; without the check the exporter's
// error and Shutdown's name the same fix and nothing arrives; the right
// token passes the check and its span goes through the collector (so the
// check never refuses a configuration that delivers).
func TestRealCollectorRequiresToken(t *testing.T) {
	r := startReceiver(t)
	col := testenv.StartCollector(t, testenv.WithJaegerOTLP(r.addr), testenv.WithDecisionWait(200*time.Millisecond))
	bearer := "authorization=Bearer "
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		wantMsg []string // nil: delivers
	}{
		{"no token", Config{Endpoint: col.GRPCEndpoint, Insecure: true}, nil,
			[]string{"the exporter sends none", "missing or empty authorization header"}},
		{"no token, endpoint from the variable", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + col.GRPCEndpoint}, []string{"the exporter sends none"}},
		{"wrong token in Config.Headers", Config{Endpoint: col.GRPCEndpoint, Insecure: true,
			Headers: map[string]string{"authorization": "Bearer not-" + col.Token}}, nil,
			[]string{"refused the exporter's", "TOOLGATE_OTLP_TOKEN"}},
		{"wrong token in OTEL_EXPORTER_OTLP_HEADERS", Config{Endpoint: col.GRPCEndpoint, Insecure: true},
			map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": bearer + "not-" + col.Token}, []string{"refused the exporter's"}},
		{"token in Config.Headers", Config{Endpoint: col.GRPCEndpoint, Insecure: true, Headers: col.Headers()}, nil, nil},
		{"token in OTEL_EXPORTER_OTLP_HEADERS", Config{},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + col.GRPCEndpoint, "OTEL_EXPORTER_OTLP_HEADERS": bearer + col.Token}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTLPEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx := context.Background()
			cfg := tt.cfg
			cfg.ServiceName, cfg.Sampling, cfg.Timeout = tt.name, sampling.Config{Setting: sampling.MustParse("all")}, 2*time.Second
			want := append([]string{"otelbridge: " + ErrUnauthenticated.Error(), "the collector at " + col.GRPCEndpoint,
				"requires a token", "set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer <token>' or Config.Headers",
				"source .demo/env"}, tt.wantMsg...)

			checkErr := Check(ctx, cfg)
			p, err := Setup(ctx, cfg)
			if tt.wantMsg == nil {
				require.NoError(t, checkErr)
				require.NoError(t, err)
				leaf(ctx, p.Tracer("test"), "execute_tool x")
				require.NoError(t, p.Shutdown(ctx))
				deadline := time.Now().Add(20 * time.Second)
				for time.Now().Before(deadline) && countService(r, tt.name) == 0 {
					time.Sleep(50 * time.Millisecond)
				}
				assert.Equal(t, 1, countService(r, tt.name), "the span went through the collector")
				return
			}
			t.Logf("Setup refused: %v", err)
			require.ErrorIs(t, checkErr, ErrUnauthenticated)
			require.ErrorIs(t, err, ErrUnauthenticated)
			assert.Nil(t, p)
			for _, w := range want {
				assert.Contains(t, err.Error(), w)
			}

			// Without the check, the export fails, and both the handler's
			// error and Shutdown's name the fix.
			var handled []error
			cfg.SkipCheck, cfg.Batch.ErrorHandler = true, func(err error) { handled = append(handled, err) }
			p, err = Setup(ctx, cfg)
			require.NoError(t, err)
			for i := 0; i < 3; i++ {
				leaf(ctx, p.Tracer("test"), "execute_tool x")
			}
			err = p.Shutdown(ctx)
			t.Logf("Shutdown: %v", err)
			require.ErrorIs(t, err, ErrUnauthenticated)
			assert.Contains(t, err.Error(), "3 spans failed to export during shutdown")
			require.Len(t, handled, 1)
			assert.ErrorIs(t, handled[0], ErrUnauthenticated)
			for _, w := range want[2:4] {
				assert.Contains(t, err.Error(), w)
				assert.Contains(t, handled[0].Error(), w)
			}
			assert.Zero(t, countService(r, tt.name), "the collector refused the spans")
		})
	}
}

// TestReadmeEmbedProgramWithoutToken is the new user's report: the
// README's program, run against our collector (which requires its token)
// without OTEL_EXPORTER_OTLP_HEADERS, used to run every call and say only
// at Shutdown that the spans were lost. Now it stops before the first
// call, naming the fix; with the token from the variable, its spans arrive.
func TestReadmeEmbedProgramWithoutToken(t *testing.T) {
	r := startReceiver(t)
	col := testenv.StartCollector(t, testenv.WithJaegerOTLP(r.addr), testenv.WithDecisionWait(200*time.Millisecond))
	bin := readmeEmbed(t, col.GRPCEndpoint)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "OTEL_SERVICE_NAME=readme-no-token", "TOOLGATE_SAMPLING=", "OTEL_EXPORTER_OTLP_HEADERS=")
	out, err := cmd.CombinedOutput()
	t.Logf("without the token:\n%s", out)
	require.Error(t, err, "the program stops")
	for _, want := range []string{"the collector at " + col.GRPCEndpoint + " requires a token",
		"set OTEL_EXPORTER_OTLP_HEADERS='authorization=Bearer <token>' or Config.Headers (after make demo: source .demo/env)"} {
		assert.Contains(t, string(out), want)
	}
	assert.NotContains(t, string(out), "was denied", "no call ran")

	cmd = exec.Command(bin)
	cmd.Env = append(os.Environ(), "OTEL_SERVICE_NAME=readme-token", "TOOLGATE_SAMPLING=", col.HeadersEnv())
	out, err = cmd.CombinedOutput()
	t.Logf("with the token:\n%s", out)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "spans lost")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && countService(r, "readme-token") < 2 {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, 2, countService(r, "readme-token"), "the call's and the run's spans arrived")
}
