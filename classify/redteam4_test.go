package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// TestFourthRedTeamKinds: the kinds a fourth red team (who had not read
// the rules) found passing as safe, several spellings each, and
// neighbours that keep their verdicts.
func TestFourthRedTeamKinds(t *testing.T) {
	c, err := classify.New(classify.WithHome("/home/dev"), classify.WithWorkspace("/home/dev/proj"),
		classify.WithProtectedPaths("/home/dev/.config/toolgate/policy.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		kind string
		want gate.RiskLevel
		cmds []string
	}{
		{"a link to a directory holding secrets or high-write files", gate.RiskHigh, []string{
			"ln -s / x", "ln -s /home x", "ln -s ../.. x", "ln -s /proc/1/root x", "ln -s ~/.claude c", "ln -s ~/.config/gh g",
			"ln -s ~/.config/autostart x", "ln -s .git/hooks x", "ln -s sub/.git/hooks x", "ln -s .claude c", "ln -s .gemini g",
			"cp --symbolic-link -r /home x", "ln -s ~/.config/toolgate t", "ln -sfn ~/.aws a", "ln -s -- ~/.ssh s",
		}},
		{"shell state that retargets ~, cd or globs", gate.RiskReview, []string{
			"HOME=~/.aws; cat ~/credentials", "HOME=/home/dev/.aws; cd; cat credentials", "CDPATH=~ cd .aws && cat credentials",
			"CDPATH=~; cd .aws; cat credentials", "export CDPATH=~/.aws; cd . && cat credentials", "shopt -s dotglob; cat ~/*/credentials",
			"shopt -s globstar nullglob; cat ~/**/credentials", "GLOBIGNORE=x; cat ~/*/credentials", "export HOME=/tmp/h; npm test",
		}},
		{"a trap handler runs in the directory of later cds", gate.RiskHigh, []string{
			"trap 'cat credentials' EXIT; cd ~/.aws", "trap 'cat credentials' INT TERM; cd ~/.aws && sleep 100",
			"trap \"base64 id_rsa\" EXIT; cd; cd .ssh",
		}},
		{"parameter operators over known values", gate.RiskHigh, []string{
			"x=~/.aws/credentialsXX; cat ${x%XX}", "x=~/.awsZ/credentials; cat ${x//Z/}", "x=X/.aws/credentials; cat ${x/X/$HOME}",
			"x=~/.AWS/CREDENTIALS; cat ${x,,}", "x=abc~/.aws/credentials; cat ${x:3}", "x=~/.aws/credentials; cat ${x:0}",
			"a=~/.aws/credentials; b=a; cat ${!b}", "declare -n r=f; f=~/.aws/credentials; cat $r",
			"local -n r=f; f=~/.aws/credentials; cat \"$r\"", "x=~/.ssh/id_rsa.bak; cat \"${x%.bak}\"",
			"cat ${x%$Y}/.aws/credentials", "cat ${HOME:0}/.aws/credentials",
		}},
		{"for loops over short static lists bind each item", gate.RiskHigh, []string{
			"for f in $HOME/.aws/credentials; do cat $f; done", "for f in .aws/credentials; do cat ~/$f; done",
			"for f in ~/.aws/{credentials,x}; do cat \"$f\"; done", "for k in id_rsa id_ed25519; do base64 ~/.ssh/$k; done",
		}},
		{"secret paths built from variables in unfollowed words", gate.RiskReview, []string{
			"set -- $HOME/.aws/credentials; cat \"$1\"", "a=($HOME/.aws/credentials); cat \"${a[@]}\"",
			"f() { cat \"$1\"; }; f $HOME/.aws/credentials", "cat ${x:-$HOME/.aws/credentials}",
			"IFS= read -r f <<< \"$HOME/.aws/credentials\"; cat \"$f\"", "mapfile -t a <<< \"$HOME/.aws/credentials\"",
			"printf -v f '%s' \"$HOME/.aws/credentials\"", "printf -v f '%s/.aws/credentials' ~",
			"printf -v f %s/credentials ~/.aws; cat $f", "set -- $X/.aws/credentials", "a=(~/.aws/{credentials,y})",
			"printf -v f '%s/%s' ~ .ssh/id_rsa", "echo ~/.aws/credentials > l", "echo $HOME/.ssh/id_rsa >> list.txt",
		}},
	} {
		for _, cmd := range tc.cmds {
			v := c.Bash(cmd)
			require.True(t, v.Level.Rank() >= tc.want.Rank(), "%s: %q is %s (%s), want at least %s", tc.kind, cmd, v.Level, v.Reason, tc.want)
		}
	}
	for _, cmd := range []string{
		"ln -s src/lib l", "ln -sf build/out current", "shopt -s nullglob; ls *.go", "shopt -u dotglob",
		"x=src/main.go; cat ${x%.go}.go", "for d in src lib; do (cd $d && ls); done", "set -- a b; echo $1",
		"printf -v x '%d' 5", "f=${1%.txt}; cat $f.md", "echo ${PWD##*/}", "trap 'echo done' EXIT; cd src",
	} {
		v := c.Bash(cmd)
		require.NotEqual(t, gate.RiskHigh, v.Level, "neighbour %q: %s", cmd, v.Reason)
		if cmd[:2] != "ln" {
			require.Equal(t, gate.RiskSafe, v.Level, "neighbour %q: %s", cmd, v.Reason)
		}
	}
}
