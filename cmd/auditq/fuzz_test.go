package main

import (
	"errors"
	"testing"
	"time"
)

// FuzzParseTimeFlag: any --since value is either a usage error or a time
// not after now (durations count back from now; RFC 3339 is taken as is).
func FuzzParseTimeFlag(f *testing.F) {
	for _, s := range []string{"24h", "7d", "2w", "90m", "-1h", "2026-11-28T10:00:00Z", "1.5h", "d", "9999999999d", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := parseTimeFlag("since", v, now)
		if err != nil {
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("%q: error %v is not a usage error", v, err)
			}
			return
		}
		if _, perr := time.Parse(time.RFC3339Nano, v); perr != nil && got.After(now) {
			t.Fatalf("%q: duration gave %v, after now", v, got)
		}
	})
}
