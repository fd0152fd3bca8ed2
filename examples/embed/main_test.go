package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestEmbed(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out.String())
	}
	if !strings.Contains(lines[0], "isError=false") || !strings.Contains(lines[0], "would run") {
		t.Errorf("ls -la should run: %s", lines[0])
	}
	if !strings.Contains(lines[1], "isError=true") || !strings.Contains(lines[1], "denied") || !strings.Contains(lines[1], "Do not retry") {
		t.Errorf("rm -rf ~ should be denied with a do-not-retry message: %s", lines[1])
	}
}
