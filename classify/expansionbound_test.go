package classify_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// TestExpansionIsBounded: a command cannot make the walk build huge
// values — doubling a variable (a=$a$a), growing it with replacement
// operators (${a//x/$a$a}, which the walk evaluates), or expanding a
// large value many times in one word. Each classification allocates a
// bounded amount (measured in bytes, not time), and a secret read after
// the growth is still judged. Before the bounds, four rounds of
// ${a//x/$a$a} took 83 s and 40 rounds of a=$a$a would need 2 GiB.
func TestExpansionIsBounded(t *testing.T) {
	c, err := classify.New(classify.WithHome("/home/dev"))
	require.NoError(t, err)
	for _, cmd := range []string{
		"a=xx; " + strings.Repeat("a=$a$a; ", 40) + "cat $a",
		"a=xx; " + strings.Repeat("a=${a//x/$a$a}; ", 12) + "cat $a",
		"a=xx; " + strings.Repeat("a=${a//x/$a$a$a$a}; ", 12) + "cat ${a:0:3}",
		"a=xx; " + strings.Repeat("a=$a$a; ", 13) + "cat " + strings.Repeat("$a", 20000),
		"a=xx; " + strings.Repeat("a=${a^^}$a; ", 40) + "cat ${a,,}",
		// sixth red team: brace words checked for secret names (2^30
		// words if expanded whole)
		"x=~/.aws/credentials; (x=b); cat " + strings.Repeat("{a,b}", 30) + "$x",
		"for f in " + strings.Repeat("{a,b}", 30) + "; do :; done",
		"a=(" + strings.Repeat("{a,b}", 30) + ")",
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := c.Bash(cmd + "; cat ~/.ssh/id_rsa")
		runtime.ReadMemStats(&after)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "%.60s… allocated %d MiB", cmd, (after.TotalAlloc-before.TotalAlloc)>>20)
		require.Equal(t, gate.RiskHigh, v.Level, "%.60s…: %s", cmd, v.Reason)
	}
}
