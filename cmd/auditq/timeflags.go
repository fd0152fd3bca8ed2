package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseTimeFlag reads --since / --until: a duration before now ("24h",
// "90m", "7d", "2w") or an RFC 3339 time ("2026-11-28T10:00:00Z"). An
// empty value is the zero time (no bound).
func parseTimeFlag(name, v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return time.Time{}, usagef("--%s %q: want a duration like 24h, 90m, 7d or an RFC 3339 time like 2026-11-28T10:00:00Z", name, v)
	}
	if d < 0 {
		return time.Time{}, usagef("--%s %q: the duration must not be negative", name, v)
	}
	return now.Add(-d), nil
}

// parseDuration is time.ParseDuration plus whole days ("d") and weeks
// ("w"), e.g. "7d" or "1w".
func parseDuration(v string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(v, suffix); ok {
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 || i > 100*365 {
				return 0, fmt.Errorf("bad duration %q (whole days or weeks, at most 100 years)", v)
			}
			return time.Duration(i) * unit, nil
		}
	}
	return time.ParseDuration(v)
}
