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
