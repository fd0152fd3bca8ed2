package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// zoneName returns an IANA time zone name ClickHouse can load for loc.
// time.Local is named "Local", which ClickHouse does not know, so it is
// resolved from $TZ or the /etc/localtime link; failing that, a whole-hour
// offset becomes Etc/GMT±N (note the POSIX sign inversion) and anything
// else UTC. Zones without a loadable name (time.FixedZone) are treated
// the same way.
func zoneName(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	if name := loc.String(); name != "Local" {
		if _, err := time.LoadLocation(name); err == nil && name != "" {
			return name
		}
		return offsetZone(loc)
	}
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil && tz != "Local" {
			return tz
		}
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			if _, err := time.LoadLocation(name); err == nil {
				return name
			}
		}
	}
	return offsetZone(loc)
}

// offsetZone names loc's current whole-hour offset as Etc/GMT±N, else UTC.
func offsetZone(loc *time.Location) string {
	_, off := time.Now().In(loc).Zone()
	switch {
	case off == 0:
		return "UTC"
	case off%3600 == 0:
		return fmt.Sprintf("Etc/GMT%+d", -off/3600)
	}
	return "UTC"
}
