package inbox

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultPath is where an inbox lives when nothing names one:
// $TOOLGATE_INBOX, else $XDG_STATE_HOME/toolgate/approvals.db, else
// ~/.local/state/toolgate/approvals.db (XDG Base Directory Specification
// 0.8, "state"). It is outside any workspace on purpose: an agent whose
// tools write the workspace must not be able to write its own approvals.
func DefaultPath() (string, error) {
	if p := os.Getenv("TOOLGATE_INBOX"); p != "" {
		return p, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "toolgate", "approvals.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("inbox: no inbox path: set TOOLGATE_INBOX (the home directory is unknown)")
	}
	return filepath.Join(home, ".local", "state", "toolgate", "approvals.db"), nil
}
