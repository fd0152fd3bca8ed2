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

// TestFifthRedTeamKinds: the kinds a fifth red team found in the fourth's
// fixes and around them, several spellings each.
func TestFifthRedTeamKinds(t *testing.T) {
	c, err := classify.New(classify.WithHome("/home/dev"), classify.WithWorkspace("/home/dev/proj"))
	require.NoError(t, err)
	for _, tc := range []struct {
		kind string
		want gate.RiskLevel
		cmds []string
	}{
		{"a value kept by code the walk takes as run (branches, subshells, stages, functions, readonly, prefixes, loops past the budget)", gate.RiskReview, []string{
			"x=~/.ssh/id_rsa; (x=README.md); cat $x", "x=~/.ssh/id_rsa; false && x=README.md; cat $x",
			"x=~/.ssh/id_rsa; if false; then x=README.md; fi; cat $x", "x=~/.ssh/id_rsa; case a in b) x=README.md;; esac; cat $x",
			"x=~/.ssh/id_rsa; while false; do x=README.md; done; cat $x", "x=~/.ssh/id_rsa; f() { local x=README.md; }; f; cat $x",
			"x=~/.ssh/id_rsa; x=README.md | true; cat $x", "x=~/.ssh/id_rsa; echo $(x=README.md); cat $x",
			"x=~/.ssh/id_rsa; x=README.md & cat $x", "readonly x=~/.ssh/id_rsa; x=README.md; cat $x",
			"x=README.md; x=~/.ssh/id_rsa eval 'cat $x'",
			"for i in f0 f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12 f13 f14 f15; do :; done; for f in .kube/config; do cat ~/$f; done",
			"while read f; do cat ~/$f; done <<< .kube/config", "read -r f <<< .kube/config; cat ~/$f",
		}},
		{"values the walk now keeps or sets where the shell does", gate.RiskHigh, []string{
			"x=~/.ssh/id_rsa; f() { x=README.md; }; cat $x", "f() { x=~/.ssh/id_rsa; }; x=README.md; f; cat $x",
			"x=~/.ssh/id_rsa; export x; cat $x", "x=~/.ssh/id_rsa; declare x; cat $x", "x=~/.ssh/id_rsa; x[1]=README.md; cat $x",
		}},
		{"functions and traps judged where they run", gate.RiskHigh, []string{
			"f() { cat config; }; cd ~/.kube; f", "g() { cat config; }; trap g EXIT; cd ~/.kube",
			"trap 'cat $f' EXIT; f=~/.kube/config", "trap \"cat \\$f\" EXIT; f=~/.kube/config",
		}},
		{"replacement operators as bash 5.2 evaluates them (anchors, & is the match)", gate.RiskHigh, []string{
			"x=/home/dev/.ssh/id_rsa.pub; cat ${x/%.pub}", "x=X/.ssh/id_rsa; cat ${x/#X/$HOME}", "x=~/.n; cat ${x/n/&etrc}",
		}},
		{"listings through line filters, and find with no expression", gate.RiskHigh, []string{
			"find ~ -name config | sort | xargs cat", "find ~ -name config | grep kube | xargs cat",
			"find ~ -name config | head -5 | xargs cat", "find ~ | xargs cat", "find ~ -name config | sort | uniq | tail -3 | xargs cat",
			"find ~ -name config | awk '{print}' | xargs cat", "du -a ~ | cut -f2 | xargs cat",
		}},
		{"commands that print the names of their operands or of what lies below them", gate.RiskHigh, []string{
			"realpath ~/.kube/config | xargs cat", "readlink -f ~/.kube/config | xargs cat", "stat -c %n ~/.kube/* | xargs cat",
			"du -a ~ | xargs cat", "tree -afi ~ | xargs cat", "tree -f -a /home | xargs cat",
		}},
		{"options around a working-directory option", gate.RiskHigh, []string{
			"env -u X -C ~/.kube cat config", "env -uX -C ~/.kube cat config", "env -i -u A -u B --chdir=/home/dev/.kube cat config",
		}},
		{"container mounts of directories holding secrets", gate.RiskHigh, []string{
			"docker run -v ~/.aws:/x -w /x alpine cat credentials", "docker run -v /home/dev:/h alpine ls", "docker run -v ~/:/h alpine ls",
			"docker run -v $HOME/.aws:/x alpine ls", "docker run --mount type=bind,source=/home/dev/.ssh,target=/s alpine ls",
			// sixth red team: the spellings docker's flag parser accepts
			"docker run -v=/home/dev/.ssh:/x alpine", "docker run -v/home/dev/.ssh:/x alpine", "docker run -itv /home/dev/.ssh:/x alpine",
			"docker run --mount 'type=bind,\"source=/home/dev/.ssh\",target=/x' alpine", "docker run --mount type=bind,Source=/home/dev/.ssh,target=/x alpine",
			"docker run --mount src=/tmp,dst=/x,type=bind,src=/home/dev/.ssh alpine", "docker run -v /var/run/docker.sock/:/x alpine",
		}},
		{"a secret value past a full history (sixth red team)", gate.RiskReview, []string{
			"x=1;x=2;x=3;x=4;x=5;x=6;x=7;x=8; x=~/.ssh/id_rsa; (x=README.md); cat $x",
			"find ~ -name credentials | nl -ba | cut -f2 | xargs cat", "find ~ -name credentials | column | xargs cat",
		}},
		{"more trap handlers than are re-judged", gate.RiskReview, []string{
			"trap true 1; trap true 2; trap true 3; trap true 4; trap true 5; trap true 6; trap true 7; trap true 8; trap 'cat config' EXIT; cd ~/.kube",
		}},
		{"shell options that change what patterns match", gate.RiskReview, []string{
			"shopt -s nocasematch; y=~/.netrcX; cat ${y/x/}", "shopt -s extglob; ls",
		}},
	} {
		for _, cmd := range tc.cmds {
			v := c.Bash(cmd)
			require.True(t, v.Level.Rank() >= tc.want.Rank(), "%s: %q is %s (%s), want at least %s", tc.kind, cmd, v.Level, v.Reason, tc.want)
		}
	}
	for _, cmd := range []string{
		"trap 'cd ..' EXIT; cd build && ls", "trap 'cd /; cd /' EXIT; cd ~", "x=a.txt; x=b.txt; cat $x", "f() { echo hi; }; f; f",
		"while read l; do echo $l; done <<< hello", "x=a.txt; cat ${x/#a/b}", "find . -name '*.py' | grep -v test | xargs wc -l",
		"find ~ | wc -l", "env -u X ls", "docker run -v myvol:/data alpine ls", "du -sh .", "tree -L 2", "stat README.md",
		"du -a . | sort -n | tail", "tree -fi ~ | xargs cat",
	} {
		v := c.Bash(cmd)
		require.NotEqual(t, gate.RiskHigh, v.Level, "neighbour %q: %s", cmd, v.Reason)
		if cmd[:6] != "docker" {
			require.Equal(t, gate.RiskSafe, v.Level, "neighbour %q: %s", cmd, v.Reason)
		}
	}
}
