package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPTools(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "") // print only: export nothing to a collector the shell names
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `agent assistant:
  1 get_forecast  ran
  2 read_note     ran
  3 read_note     error: Invalid input for tool "read_note": - at '/id': minimum: got 0, want 1
  4 create_issue  ran after approval by ui
  5 delete_note   denied by destructive (approval declined)
  6 wipe_cache    denied by local-override
agent archivist:
  1 get_forecast  denied by offline
  2 read_note     ran
  3 read_note     error: Invalid input for tool "read_note": - at '/id': minimum: got 0, want 1
  4 create_issue  denied by offline
  5 delete_note   denied by destructive (approval declined)
  6 wipe_cache    denied by local-override
server saw: create_issue, get_forecast, read_note, read_note
`, out.String())
}
