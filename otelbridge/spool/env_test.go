package spool_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestConfigResolve: the TOOLGATE_SPOOL_* variables fill the zero fields,
// a bad value is refused naming the variable and the values wanted, set
// fields win, and an on spool gets the defaults of its other zero fields.
func TestConfigResolve(t *testing.T) {
	defaults := spool.Config{MaxBytes: spool.DefaultMaxBytes, SyncInterval: spool.DefaultSyncInterval,
		BatchSpans: spool.DefaultBatchSpans, UploadTimeout: spool.DefaultUploadTimeout, MaxBackoff: spool.DefaultMaxBackoff,
		ReportInterval: spool.DefaultReportInterval}
	with := func(f func(*spool.Config)) spool.Config { c := defaults; f(&c); return c }
	tests := []struct {
		env     map[string]string
		cfg     spool.Config
		want    spool.Config
		wantErr string
	}{
		{env: map[string]string{}, want: spool.Config{}}, // off: nothing filled in
		{env: map[string]string{spool.EnvDir: "/d", spool.EnvMaxBytes: "64MiB", spool.EnvSync: "always", spool.EnvFull: "refuse"},
			want: with(func(c *spool.Config) {
				c.Dir, c.MaxBytes, c.Sync, c.Full = "/d", 64<<20, spool.SyncAlways, spool.Refuse
			})},
		{env: map[string]string{spool.EnvDir: "/d", spool.EnvMaxBytes: "1000", spool.EnvSync: "250ms", spool.EnvFull: "drop-oldest"},
			want: with(func(c *spool.Config) { c.Dir, c.MaxBytes, c.SyncInterval = "/d", 1000, 250*time.Millisecond })},
		{env: map[string]string{spool.EnvDir: "/env", spool.EnvMaxBytes: "1000", spool.EnvSync: "always", spool.EnvFull: "refuse"},
			cfg: spool.Config{Dir: "/cfg", MaxBytes: 5000, SyncInterval: time.Second, BatchSpans: 3},
			want: with(func(c *spool.Config) {
				c.Dir, c.MaxBytes, c.SyncInterval, c.BatchSpans, c.Full = "/cfg", 5000, time.Second, 3, spool.Refuse
			})},
		{env: map[string]string{spool.EnvMaxBytes: "lots"}, wantErr: spool.EnvMaxBytes},
		{env: map[string]string{spool.EnvMaxBytes: "-1"}, wantErr: spool.EnvMaxBytes},
		{env: map[string]string{spool.EnvSync: "sometimes"}, wantErr: "always"},
		{env: map[string]string{spool.EnvSync: "-1s"}, wantErr: spool.EnvSync},
		{env: map[string]string{spool.EnvFull: "panic"}, wantErr: "refuse"},
		{env: map[string]string{spool.EnvDir: "/d"}, cfg: spool.Config{MaxBackoff: -time.Second}, wantErr: "MaxBackoff"},
		{env: map[string]string{spool.EnvDir: "/d"}, cfg: spool.Config{BatchSpans: -1}, wantErr: "BatchSpans"},
		{env: map[string]string{spool.EnvDir: "/d"}, cfg: spool.Config{ReportInterval: -time.Second}, wantErr: "ReportInterval"},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, k := range []string{spool.EnvDir, spool.EnvMaxBytes, spool.EnvSync, spool.EnvFull} {
				t.Setenv(k, tt.env[k])
			}
			got, err := tt.cfg.Resolve()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
