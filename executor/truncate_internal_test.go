package executor

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncate(t *testing.T) {
	long := "HEAD" + strings.Repeat("-", 992) + "TAIL" // 1,000 bytes
	tests := []struct {
		name    string
		in      string
		max     int
		want    string // exact result, when set
		cut     int
		hasHead bool
	}{
		{name: "fits", in: "short", max: 10, want: "short"},
		{name: "exact fit", in: "12345", max: 5, want: "12345"},
		{name: "no cap", in: long, max: 0, want: long},
		{name: "negative is no cap", in: long, max: -1, want: long},
		{name: "cut keeps head and tail", in: long, max: 100, hasHead: true},
		{name: "budget smaller than the marker", in: long, max: 10, want: "HEAD------", cut: 990},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := truncate(tc.in, tc.max)
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.cut, cut)
				return
			}
			assert.LessOrEqual(t, len(got), tc.max)
			assert.True(t, strings.HasPrefix(got, "HEAD"))
			assert.True(t, strings.HasSuffix(got, "TAIL"))
			assert.Contains(t, got, "[... truncated "+strconv.Itoa(cut)+" bytes ...]")
			marker := "\n[... truncated " + strconv.Itoa(cut) + " bytes ...]\n"
			assert.Equal(t, len(tc.in)-cut, len(got)-len(marker), "cut counts exactly the bytes removed")
		})
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("hello world", 5)
	f.Add(strings.Repeat("é", 300), 100)
	f.Add(strings.Repeat("日本語", 1000), 57)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<20 {
			max = 1 << 20
		}
		got, cut := truncate(s, max)
		if max <= 0 || len(s) <= max {
			if got != s || cut != 0 {
				t.Fatalf("changed a string that fits")
			}
			return
		}
		if len(got) > max {
			t.Fatalf("len %d > max %d", len(got), max)
		}
		if cut <= 0 || cut > len(s) {
			t.Fatalf("cut %d out of range", cut)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cut inside a rune: %q", got)
		}
	})
}
