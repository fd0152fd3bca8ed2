package inbox_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
)

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name, inbox, xdg, home, want string
	}{
		{"TOOLGATE_INBOX wins", "/srv/a.db", "/x", "/home/u", "/srv/a.db"},
		{"XDG state dir", "", "/x/state", "/home/u", "/x/state/toolgate/approvals.db"},
		{"a relative XDG_STATE_HOME is ignored", "", "rel", "/home/u", "/home/u/.local/state/toolgate/approvals.db"},
		{"home", "", "", "/home/u", "/home/u/.local/state/toolgate/approvals.db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TOOLGATE_INBOX", tc.inbox)
			t.Setenv("XDG_STATE_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			got, err := inbox.DefaultPath()
			require.NoError(t, err)
			assert.Equal(t, filepath.FromSlash(tc.want), got)
		})
	}
}
