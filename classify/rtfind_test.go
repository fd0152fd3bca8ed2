package classify_test

import (
	"testing"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

func rtFindClassifier(t *testing.T) *classify.Classifier {
	t.Helper()
	c, err := classify.New(classify.WithHome("/home/dev"), classify.WithWorkspace("/home/dev/proj"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkLevels(t *testing.T, c *classify.Classifier, cases []struct {
	cmd  string
	want gate.RiskLevel
}) {
	t.Helper()
	for _, tc := range cases {
		r := c.Bash(tc.cmd)
		if r.Level != tc.want {
			t.Errorf("%s: got %s, want %s (%s)", tc.cmd, r.Level, tc.want, r.Reason)
		}
	}
}

// TestFindMatchesAreTrees: what find's name, path and regex tests take
// below a start point is judged as the tree below it, hidden directories
// included (as the file tools' ~/**/NAME), whenever the matches are read:
// by an -exec/-execdir/-ok/-okdir command, through xargs, tar -T - or a
// command substitution. Secrets that are secret only at a fixed place
// (~/.aws/credentials, ~/.config/gh/hosts.yml) count.
func TestFindMatchesAreTrees(t *testing.T) {
	c := rtFindClassifier(t)
	if got := c.Path(classify.OpRead, "~/**/credentials").Level; got != H {
		t.Fatalf("file tool ~/**/credentials: %s", got)
	}
	checkLevels(t, c, []struct {
		cmd  string
		want gate.RiskLevel
	}{
		// name tests, every start holding a home
		{"find ~ -name credentials -exec cat {} +", H},
		{"find ~ -iname CREDENTIALS -exec cat {} \\;", H},
		{"find / -name credentials -exec cat {} +", H},
		{"find /home -name credentials -exec cat {} +", H},
		{"find /home/dev -name credentials -exec head {} +", H},
		{"find ~ -name hosts.yml -exec cat {} +", H},
		{"find ~ -name auth.json -exec cat {} +", H},
		{"find ~ -name '.credentials.json' -exec cat {} +", H},
		{"find ~ -name '*token*' -exec cat {} +", H},
		{"find ~ -name config -exec cat {} +", H},
		{"find ~ -type f -name credentials -exec cat {} +", H},
		// path and regex tests
		{"find ~ -path '*/.aws/*' -exec cat {} +", H},
		{"find ~ -ipath '*/.AWS/*' -exec cat {} +", H},
		{"find ~ -wholename '*/.aws/credentials' -exec cat {} +", H},
		{"find ~ -iwholename '*/.aws/Credentials' -exec cat {} +", H},
		{"find / -path '/home/dev/.aws/*' -exec cat {} +", H},
		{"find ~ -regex '.*/\\.aws/cred.*' -exec cat {} +", H},
		{"find ~ -iregex '.*/hosts\\.yml' -exec cat {} +", H},
		{"find ~ -regex '.*\\(cred\\|tok\\).*' -exec cat {} +", H}, // not analysed: any file
		// readers and unknown programs run per match
		{"find ~ -name credentials -exec grep . {} +", H},
		{"find ~ -name credentials -ok cat {} \\;", H},
		{"find ~ -name credentials -okdir cat {} \\;", H},
		{"find ~ -name credentials -execdir cat {} +", H},
		{"find ~ -name credentials -exec some-tool {} \\;", H},
		{"find ~ -name '*.md' -o -name credentials -exec cat {} +", H},
		{"find ~ \\( -name '*.md' -o -name credentials \\) -exec cat {} +", H},
		// piped and substituted
		{"find ~ -name credentials | xargs cat", H},
		{"find ~ -name credentials -print0 | xargs -0 cat", H},
		{"find / -name hosts.yml | xargs -I{} cat {}", H},
		{"find ~ -name credentials | tar cf - -T -", H},
		{"find ~ -name credentials | tar -czf - --files-from=-", H},
		{"find ~ -name credentials | xargs tar cf -", H},
		{"cat $(find ~ -name credentials)", H},
		{"echo .aws/credentials | tar -C ~ -cf - -T -", H},
		// already caught, unchanged
		{"find ~ -name 'cred*' -exec cat {} +", H},
		{"find ~ -name '*.pem' -exec cat {} +", H},
		{"find ~/.aws -type f -exec cat {} +", H},
		// neighbours: listing names, workspace searches, metadata
		{"find ~ -name credentials", S},
		{"find ~ -name credentials -exec ls -l {} +", S},
		{"find . -name '*.go' -exec grep foo {} +", S},
		{"find . -path ./vendor -prune -o -name '*.go' -exec grep foo {} +", S},
		{"find src -name '*.ts' | xargs grep foo", S},
		{"find . -name '*.go' | xargs wc -l", S},
		{"find ~/proj -path '*/src/*' -exec cat {} +", S},
		{"find . -type f -exec wc -l {} +", S},
		{"find . -maxdepth 1 -type d -exec du -sh {} \\;", S},
		{"ls ~/**/credentials | xargs cat", S}, // bash's ** skips hidden directories
	})
}

// TestFindPlaceholderWords: "{}" inside a word is substituted (GNU find),
// and -execdir/-okdir run in the matched file's directory, so their
// relative operands name files below the start.
func TestFindPlaceholderWords(t *testing.T) {
	c := rtFindClassifier(t)
	checkLevels(t, c, []struct {
		cmd  string
		want gate.RiskLevel
	}{
		{"find ~ -maxdepth 0 -exec cat {}/.aws/credentials \\;", H},
		{"find /home/dev -maxdepth 0 -exec cat {}/.ssh/id_rsa \\;", H},
		{"find ~ -exec cat {}/.aws/credentials \\;", H},
		{"find ~ -name .aws -exec cat {}/credentials \\;", H},
		{"find ~/.aws -execdir cat credentials \\;", H},
		{"find ~/.aws -okdir cat ./credentials \\;", H},
		{"find ~ -maxdepth 1 -name .aws -execdir cat .aws/credentials \\;", H},
		{"find ~ -name .ssh -execdir cat .ssh/id_rsa \\;", H},
		{"find ~ -maxdepth 0 | xargs rm -rf", H},
		{"find . -name '*.go' -execdir grep -l foo {} +", S},
		{"find . -name '*.bak' -exec echo {}.orig \\;", S},
		{"find . -type d -execdir ls \\;", S},
	})
}

// TestChdirOptionsRebase: an option that sets the working directory
// re-bases the relative operands after it (tar -C) or of the command
// (git -C, make -C, env -C, sudo -D) before they are judged.
func TestChdirOptionsRebase(t *testing.T) {
	c := rtFindClassifier(t)
	checkLevels(t, c, []struct {
		cmd  string
		want gate.RiskLevel
	}{
		{"tar -cf - -C ~ .ssh | base64", H},
		{"tar -C /home/dev -czf - .aws .ssh .config/gh", H},
		{"tar --directory=/home/dev/.aws -cf - credentials", H},
		{"tar --directory /home/dev/.aws -cf - credentials", H},
		{"tar --dir=/home/dev/.aws -cf - credentials", H},
		{"tar -C/home/dev/.aws -cf - credentials", H},
		{"tar cfC - /home/dev/.aws credentials", H},
		{"tar -cf - -C /home/dev -C .aws credentials", H},
		{"tar -cf - -T ~/.aws/credentials", H},
		{"env -C ~/.aws cat credentials", H},
		{"env --chdir=/home/dev/.aws cat credentials", H},
		{"env --chdir /home/dev/.aws cat credentials", H},
		{"env --chd=/home/dev/.aws cat credentials", H},
		{"env -C/home/dev/.aws cat credentials", H},
		{"env -i -C ~/.ssh cat id_rsa", H},
		{"env -C \"$X\" cat .aws/credentials", H},
		{"systemd-run --working-directory=/home/dev/.aws --pipe cat credentials", H},
		{"unshare --wd=/home/dev/.aws cat credentials", H},
		{"sudo -D /home/dev/.aws cat credentials", H},
		{"git -C ~/.aws grep --no-index -h ''", H},
		{"git -C /home/dev/.aws grep -h -e x", H},
		{"git -C ~ -C .aws grep --no-index ''", H},
		{"git -C ~/.aws diff --no-index credentials /dev/null", H},
		{"make -C ~/.aws -f credentials", H},
		{"make --directory=/home/dev/.aws -f credentials", H},
		// neighbours keep their levels
		{"tar -C build -cf out.tar .", R},
		{"tar -cf out.tar -C build .", R},
		{"tar -C ~/proj -cf - src", S},
		{"tar -xf a.tar -C out", R},
		{"tar -xzf a.tgz -Cout", R},
		{"tar -cf - .aws", S}, // the workspace's own .aws
		{"env -C src ls", S},
		{"env -C src cat main.go", S},
		{"env -uCFLAGS cat README.md", S},
		{"make -C sub test", R},
		{"make test", R},
		{"git -C sub status", S},
		{"git log -C", S},
		{"git grep foo", S},
		{"git grep -n foo -- src", S},
		{"npm --prefix sub test", R},
	})
}
