package audittest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// engine is the process's chDB engine, which the library keeps one of per
// process (one data path at a time): the one piece of package-level state
// here, mirroring the library's own (see the package documentation). An
// Env holds it from Start until its cleanup.
var engine = struct {
	sem    chan struct{} // one token: free when it holds nothing
	mu     sync.Mutex
	holder string // name of the test that holds the engine, "" when free
}{sem: make(chan struct{}, 1)}

// acquireEngine waits until no other Env of this process is open and
// returns the function that releases the engine. A test that already holds
// it (or whose parent test does) fails at once: waiting would deadlock.
func acquireEngine(t testing.TB) (release func()) {
	t.Helper()
	name := t.Name()
	engine.mu.Lock()
	holder := engine.holder
	engine.mu.Unlock()
	if holder != "" && (holder == name || strings.HasPrefix(name, holder+"/")) {
		t.Fatalf("audittest: %s already holds this process's Env: chDB runs one engine per process, so one Env is open at a time; "+
			"use several databases of the one Env instead (audit.WithDatabase)", holder)
	}
	engine.sem <- struct{}{}
	engine.mu.Lock()
	engine.holder = name
	engine.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			engine.mu.Lock()
			engine.holder = ""
			engine.mu.Unlock()
			<-engine.sem
		})
	}
}

// defaultLibchdb is where this repository's `make deps`
// (scripts/install-libchdb.sh) puts the library, relative to the checkout.
const defaultLibchdb = ".cache/chdb/libchdb.so"

// installSteps tells a user how to get libchdb.so.
const installSteps = "install it: `npm pack @chdb/lib-linux-x64-gnu@26.5.3 && tar -xzf chdb-lib-linux-x64-gnu-26.5.3.tgz package/libchdb.so` " +
	"and set TOOLGATE_LIBCHDB=$PWD/package/libchdb.so (in a toolgate checkout: make deps, or scripts/install-libchdb.sh)"

// errNoLibchdb is wrapped by findLibchdb's error for a missing library.
var errNoLibchdb = errors.New("libchdb.so not found")

// findLibchdb returns the library to load: option, then $TOOLGATE_LIBCHDB,
// then .cache/chdb/libchdb.so in the working directory or a parent.
func findLibchdb(option string) (string, error) {
	check := func(p, from string) (string, error) {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("%w at %s (%s); %s", errNoLibchdb, p, from, installSteps)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return p, nil
		}
		return abs, nil
	}
	if option != "" {
		return check(option, "audittest.WithLibchdb")
	}
	if env := os.Getenv("TOOLGATE_LIBCHDB"); env != "" {
		return check(env, "$TOOLGATE_LIBCHDB")
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if p := filepath.Join(dir, defaultLibchdb); fileExists(p) {
				return p, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", fmt.Errorf("%w: TOOLGATE_LIBCHDB is not set and no %s in the working directory or its parents; %s", errNoLibchdb, defaultLibchdb, installSteps)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// integration reports whether TOOLGATE_INTEGRATION=1 asks for the
// integration tests to run (fail, not skip, without their components).
func integration() bool { return os.Getenv("TOOLGATE_INTEGRATION") == "1" }
