//go:build !unix

package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockDir creates dir/LOCK exclusively. Without flock a crashed process
// leaves the file behind: remove it by hand once no process uses dir.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%w: %s exists: another process uses %s (remove the file if none does)", ErrLocked, path, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("spool: lock %s: %w", path, err)
	}
	return f, nil
}
