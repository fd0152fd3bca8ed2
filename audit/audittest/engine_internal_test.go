package audittest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fatalTB records Fatalf and ends its goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	name  string
	fatal string
}

func (f *fatalTB) Name() string { return f.name }
func (f *fatalTB) Helper()      {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// acquire runs acquireEngine as tb in its own goroutine and returns the
// release function (nil when it failed) within d, or reports that it is
// still waiting.
func acquire(tb *fatalTB, d time.Duration) (release func(), waiting bool) {
	done := make(chan func(), 1)
	go func() {
		var r func()
		defer func() { done <- r }()
		r = acquireEngine(tb)
	}()
	select {
	case r := <-done:
		return r, false
	case <-time.After(d):
		return nil, true
	}
}

// TestAcquireEngine: one holder at a time; another test waits for the
// release; the holder itself and its subtests fail at once, naming it.
func TestAcquireEngine(t *testing.T) {
	holder := &fatalTB{TB: t, name: "TestHolder"}
	release, waiting := acquire(holder, 5*time.Second)
	require.False(t, waiting)
	require.NotNil(t, release)

	for _, name := range []string{"TestHolder", "TestHolder/sub", "TestHolder/sub/deeper"} {
		again := &fatalTB{TB: t, name: name}
		r, waiting := acquire(again, 5*time.Second)
		require.False(t, waiting, "%s must fail, not wait", name)
		assert.Nil(t, r)
		assert.Contains(t, again.fatal, "TestHolder already holds this process's Env")
		assert.Contains(t, again.fatal, "audit.WithDatabase")
	}

	other := &fatalTB{TB: t, name: "TestHolderish"} // not a subtest: waits
	done := make(chan func(), 1)
	go func() { done <- acquireEngine(other) }()
	select {
	case <-done:
		t.Fatal("a second test got the engine while the first held it")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release() // idempotent
	r := <-done
	require.NotNil(t, r)
	assert.Empty(t, other.fatal)
	r()
}

// TestFindLibchdb: the option wins over $TOOLGATE_LIBCHDB, which wins over
// .cache/chdb/libchdb.so in the working directory or a parent; a missing
// library is errNoLibchdb with the steps to install it.
func TestFindLibchdb(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.so")
	require.NoError(t, os.WriteFile(lib, nil, 0o600))
	repo := filepath.Join(dir, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".cache", "chdb"), 0o755))
	cached := filepath.Join(repo, ".cache", "chdb", "libchdb.so")
	require.NoError(t, os.WriteFile(cached, nil, 0o600))
	nested := filepath.Join(repo, "a", "b")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	missing := filepath.Join(dir, "missing.so")

	tests := []struct {
		name, option, env, wd string
		want                  string
		wantErr               []string
	}{
		{name: "option", option: lib, env: missing, wd: nested, want: lib},
		{name: "env", env: lib, wd: nested, want: lib},
		{name: "checkout cache from a subdirectory", wd: nested, want: cached},
		{name: "option missing", option: missing, env: lib, wantErr: []string{missing, "audittest.WithLibchdb"}},
		{name: "env missing", env: missing, wd: nested, wantErr: []string{missing, "$TOOLGATE_LIBCHDB"}},
		{name: "nothing", wd: dir, wantErr: []string{"TOOLGATE_LIBCHDB is not set", ".cache/chdb/libchdb.so"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TOOLGATE_LIBCHDB", tt.env)
			if tt.wd != "" {
				t.Chdir(tt.wd)
			}
			got, err := findLibchdb(tt.option)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, errNoLibchdb))
				for _, s := range append(tt.wantErr, "npm pack @chdb/lib-linux-x64-gnu@26.5.3", "TOOLGATE_LIBCHDB=", "scripts/install-libchdb.sh") {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
