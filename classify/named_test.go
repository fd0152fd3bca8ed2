package classify_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// Property: a secret's path written out in the command reaches a read
// through forms the walk does not follow to their use (a for list, set --,
// an array, an expansion's default, a here-string, printf -v, a function's
// argument): the command is never safe.
func TestNamedSecretIsNeverSafe(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/work/app"), classify.WithHome("/home/dev"))
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	all := secretPaths(t, c)
	for _, p := range all {
		dir := false // a directory rule (~/.ssh): naming it reads nothing
		for _, q := range all {
			dir = dir || strings.HasPrefix(q, p+"/")
		}
		if !dir {
			secrets = append(secrets, p)
		}
	}
	forms := []string{
		`for f in P; do cat "$f"; done`, `for f in a P b; do base64 $f; done`, `set -- P; cat "$1"`,
		`a=(P); cat "${a[@]}"`, `declare -a a=(x P); cat ${a[1]}`, `cat ${X:-P}`, `: ${x:=P}; cat $x`, `cat ${X:+P}`,
		`printf -v x %s P; cat $x`, `read x <<< P; cat $x`, `f() { cat "$1"; }; f P`, `g() { head -c 100 "$@"; }; g P`,
		`mapfile -t a <<< P; cat ${a[0]}`,
	}
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SampledFrom(secrets).Draw(t, "secret")
		if strings.ContainsAny(p, " '\"$`\\") {
			t.Skip("not a plain word")
		}
		cmd := strings.ReplaceAll(rapid.SampledFrom(forms).Draw(t, "form"), "P", p)
		if r := c.Bash(cmd); r.Level == gate.RiskSafe {
			t.Fatalf("%q is safe: %s", cmd, r.Reason)
		}
	})
}

func TestNamedSecretFriction(t *testing.T) {
	c, err := classify.New(classify.WithWorkspace("/work/app"), classify.WithHome("/home/dev"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		`for f in src/*.go; do cat "$f"; done`, `set -- a b; echo "$1"`, `a=(x y); echo ${a[@]}`, `cat ${X:-README.md}`,
		`read x <<< hello; echo $x`, `f() { cat "$1"; }; f README.md`, `grep -rn .env .`, `for d in ~/.ssh ~/.aws; do ls $d; done`,
	} {
		if r := c.Bash(cmd); r.Level != gate.RiskSafe {
			t.Errorf("%q: %s %s", cmd, r.Level, r.Reason)
		}
	}
}
