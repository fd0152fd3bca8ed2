package spool

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables [Config.Resolve] reads for the Config fields left
// zero.
const (
	// EnvDir is the spool directory (Config.Dir); unset or empty: the
	// spool is off.
	EnvDir = "TOOLGATE_SPOOL_DIR"
	// EnvMaxBytes is the disk budget (Config.MaxBytes): bytes, or with a
	// KiB, MiB or GiB suffix ("512MiB").
	EnvMaxBytes = "TOOLGATE_SPOOL_MAX_BYTES"
	// EnvSync is "always" (Config.Sync = SyncAlways: fsync each decision)
	// or a positive Go duration, the fsync interval (Config.SyncInterval,
	// "100ms").
	EnvSync = "TOOLGATE_SPOOL_SYNC"
	// EnvFull is "drop-oldest" or "refuse" (Config.Full).
	EnvFull = "TOOLGATE_SPOOL_FULL"
)

// Resolve returns cfg with its zero fields filled in: Dir, MaxBytes, Sync
// / SyncInterval and Full from [EnvDir], [EnvMaxBytes], [EnvSync] and
// [EnvFull] when set there (a set field wins over the environment), then,
// when the spool is on (Dir not empty), the defaults of the remaining
// zero fields. A Config whose Dir stays empty is returned as is: the
// spool is off. Errors name the variable or field and the values wanted.
func (cfg Config) Resolve() (Config, error) {
	if cfg.Dir == "" {
		cfg.Dir = os.Getenv(EnvDir)
	}
	if v := strings.TrimSpace(os.Getenv(EnvMaxBytes)); v != "" && cfg.MaxBytes == 0 {
		n, err := parseBytes(v)
		if err != nil {
			return Config{}, fmt.Errorf("spool: %s=%q: %w (want bytes, e.g. 268435456 or 256MiB)", EnvMaxBytes, v, err)
		}
		cfg.MaxBytes = n
	}
	if v := strings.TrimSpace(os.Getenv(EnvSync)); v != "" && cfg.Sync == SyncInterval && cfg.SyncInterval == 0 {
		if strings.EqualFold(v, "always") {
			cfg.Sync = SyncAlways
		} else {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("spool: %s=%q: want \"always\" or a positive Go duration such as 100ms", EnvSync, v)
			}
			cfg.SyncInterval = d
		}
	}
	if v := strings.TrimSpace(os.Getenv(EnvFull)); v != "" && cfg.Full == DropOldest {
		switch strings.ToLower(v) {
		case "drop-oldest":
		case "refuse":
			cfg.Full = Refuse
		default:
			return Config{}, fmt.Errorf("spool: %s=%q: want drop-oldest or refuse", EnvFull, v)
		}
	}
	if cfg.Dir == "" {
		return cfg, nil
	}
	return cfg.withDefaults()
}

// parseBytes reads "123", "64KiB", "256MiB", "1GiB".
func parseBytes(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(s), u.n
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("out of range")
	}
	return n * mult, nil
}
