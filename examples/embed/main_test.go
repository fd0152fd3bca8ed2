package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbed runs the example: each tool's calls are judged by the gate
// whose scope holds it — bash by classify.bash, read_file by
// classify.path, http_get by the custom gate — so no read_file or
// http_get call is denied by the bash gate; the dangerous call of each
// tool is denied with a reason and a do-not-retry message.
func TestEmbed(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 18, out.String())
	want := []struct {
		call, verdict, content string
	}{
		{`bash {"command":"ls -la"}`, "isError=false gate=classify.bash risk=safe", `would run: {"command":"ls -la"}`},
		{`bash {"command":"rm -rf ~"}`, "isError=true gate=classify.bash risk=high", "deletes the home directory"},
		{`read_file {"path":"README.md"}`, "isError=false gate=classify.path risk=safe", `would read: {"path":"README.md"}`},
		{`read_file {"path":"~/.ssh/id_ed25519"}`, "isError=true gate=classify.path risk=high", "SSH private key"},
		{`http_get {"url":"https://example.com/"}`, "isError=false gate=no-internal-urls risk=safe", `would fetch: {"url":"https://example.com/"}`},
		{`http_get {"url":"http://169.254.169.254/latest/meta-data/"}`, "isError=true gate=no-internal-urls risk=high", "169.254.169.254 is an internal address"},
	}
	for i, w := range want {
		assert.Equal(t, w.call, lines[3*i])
		assert.Contains(t, lines[3*i+1], w.verdict, w.call)
		assert.Contains(t, lines[3*i+2], w.content, w.call)
		if strings.Contains(w.verdict, "isError=true") {
			assert.Contains(t, lines[3*i+2], "was denied by the tool gate", w.call)
			assert.Contains(t, lines[3*i+2], "Do not retry", w.call)
		}
	}
	assert.NotContains(t, out.String(), "no string field command", "the bash gate judges no other tool")
}
