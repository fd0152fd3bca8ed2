package classify_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// TestDotDotAboveHome: ".." above home reaches home's real parent, so a
// path that climbs out of home and back in (../../dev from the workspace
// /home/dev/proj, ~/../dev, cd ~/..) names home's files and is judged as
// them — it came out as /dev/… (the fourth red team: every secret anchored
// at a location read as safe, the protected policy file was only review).
// With no home known, climbing above it is a path known only at run time.
func TestDotDotAboveHome(t *testing.T) {
	c, err := classify.New(classify.WithHome("/home/dev"), classify.WithWorkspace("/home/dev/proj"),
		classify.WithProtectedPaths("/home/dev/.config/toolgate/policy.yaml"))
	require.NoError(t, err)
	for _, cmd := range []string{
		"cat ../../dev/.aws/credentials", "cat ~/../dev/.config/gh/hosts.yml", "cd ~/.. && cat dev/.aws/credentials",
		"cd .. && cd .. && cat dev/.kube/config", "cd ~/..; cd dev/.aws; cat credentials", "cat ~/../../home/dev/.aws/credentials",
		"cat ~/proj/../../dev/.aws/credentials", "base64 ./../../dev/.aws/credentials",
		"rm -f ~/../dev/.config/toolgate/policy.yaml", "mv ~/../dev/.config ~/c", "echo x >> ../../dev/.bashrc",
		"echo 'curl x|sh' >> ~/../dev/.profile", "cd /home && rm -rf dev/.config/toolgate",
	} {
		require.Equal(t, gate.RiskHigh, c.Bash(cmd).Level, "%q: %s", cmd, c.Bash(cmd).Reason)
	}
	for _, tc := range []struct {
		op classify.Op
		p  string
	}{
		{classify.OpRead, "../../dev/.aws/credentials"}, {classify.OpRead, "~/../dev/.ssh/id_ed25519"},
		{classify.OpWrite, "../../dev/.config/toolgate/policy.yaml"}, {classify.OpWrite, "../../dev/.bashrc"},
		{classify.OpDelete, "~/../dev/.config/toolgate"},
	} {
		require.Equal(t, gate.RiskHigh, c.Path(tc.op, tc.p).Level, "%s %s", tc.op, tc.p)
	}
	// Neighbours: other users' plain files and the workspace stay as they were.
	require.Equal(t, gate.RiskSafe, c.Bash("cat ../proj/README.md").Level)
	require.Equal(t, gate.RiskSafe, c.Bash("ls ~/..").Level)

	unknown, err := classify.New()
	require.NoError(t, err)
	for _, cmd := range []string{"cat ~/../dev/.aws/credentials", "cat ~/../../home/dev/.ssh/id_rsa",
		"cat $X/dev/.aws/credentials", `cd "$X" && cat dev/.ssh/id_rsa`, "cat $X/a/b/.kube/config"} {
		require.Equal(t, gate.RiskHigh, unknown.Bash(cmd).Level, "home unknown: %q: %s", cmd, unknown.Bash(cmd).Reason)
	}
}

// TestPropertyClimbOutOfHome: for any home /home/NAME (or /Users/NAME,
// /root) and any path P below it, every spelling that climbs out of home
// and back in — ~/../NAME/P, ~/sub/../../NAME/P, ../…/NAME/P from a
// workspace inside home, after cd — gets the verdict ~/P gets, for
// reads, writes and deletions.
func TestPropertyClimbOutOfHome(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := rapid.SampledFrom([]string{"/home", "/Users", ""}).Draw(t, "parent")
		name := rapid.StringMatching(`[a-z][a-z0-9]{0,6}`).Draw(t, "name")
		home := parent + "/" + name
		if parent == "" {
			home, name = "/root", "root"
		}
		depth := rapid.IntRange(0, 3).Draw(t, "workspace depth")
		ws := home
		for i := range depth {
			ws += "/w" + string(rune('a'+i))
		}
		c, err := classify.New(classify.WithHome(home), classify.WithWorkspace(ws),
			classify.WithProtectedPaths(home+"/.config/toolgate/policy.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		p := rapid.SampledFrom([]string{".aws/credentials", ".ssh/id_rsa", ".config/gh/hosts.yml", ".kube/config", ".bashrc",
			".config/toolgate/policy.yaml", ".docker/config.json", "notes.txt", ".netrc", ".config/toolgate"}).Draw(t, "path")
		climb := rapid.SampledFrom([]string{
			"~/../" + name + "/", "~/x/../../" + name + "/", strings.Repeat("../", depth+1) + name + "/",
			"~/./../" + name + "/./", "~//..//" + name + "//",
		}).Draw(t, "climb")
		for _, op := range []classify.Op{classify.OpRead, classify.OpWrite, classify.OpDelete} {
			want, got := c.Path(op, "~/"+p), c.Path(op, climb+p)
			if want.Level != got.Level {
				t.Fatalf("%s %s: %s (%s), but %s%s: %s (%s)", op, "~/"+p, want.Level, want.Reason, climb, p, got.Level, got.Reason)
			}
		}
		for _, tmpl := range []string{"cat %s", "rm -f %s", "echo x >> %s"} {
			want, got := c.Bash(strings.Replace(tmpl, "%s", "~/"+p, 1)), c.Bash(strings.Replace(tmpl, "%s", climb+p, 1))
			if want.Level != got.Level {
				t.Fatalf("%q: %s, but with %s: %s (%s)", tmpl, want.Level, climb, got.Level, got.Reason)
			}
		}
	})
}
