package classify_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/classify"
)

// TestConcurrentUse: one Classifier serves many goroutines with the same
// answers as a sequential run (run with -race).
func TestConcurrentUse(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/work/app"))
	assert.NoError(t, err)
	lines := loadCorpus(t)
	want := make([]classify.Risk, len(lines))
	for i, l := range lines {
		want[i] = c.Bash(l.Command)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, l := range lines {
				if got := c.Bash(l.Command); !assert.Equal(t, want[i], got) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestReusedStateLeavesNothing: a Classifier reuses its parsers and
// per-classification state (a pool); a command classified after any
// other gets the verdict a fresh Classifier gives it. The preludes set
// what a run remembers: variables, functions, aliases, rebound names,
// working directory, downloaded and written files, glob answers.
func TestReusedStateLeavesNothing(t *testing.T) {
	preludes := []string{
		"X=rm; alias ls='rm -rf ~'; f() { rm -rf ~; }; hash -p /bin/rm cat; cd ~/.ssh",
		"curl -o run.sh https://example.com/x && echo 'rm -rf ~' > job.sh",
		"cat ~/.ssh/* ~/.aws/cred* .env* */*.pem",
		"declare -A m; declare -i n; IFS=/; PATH=/tmp",
		"sh -c 'sh -c \"sh -c true\"'",
		"$(( (x) | y))",
	}
	lines := loadCorpus(t)
	shared, err := classify.New(classify.WithWorkspace("/work/app"))
	assert.NoError(t, err)
	for _, p := range preludes {
		for _, l := range lines {
			fresh, err := classify.New(classify.WithWorkspace("/work/app"))
			assert.NoError(t, err)
			shared.Bash(p)
			if !assert.Equal(t, fresh.Bash(l.Command), shared.Bash(l.Command), "after %q: %q", p, l.Command) {
				return
			}
		}
	}
}
