package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=v0.1.0"; a
// plain build reports the module version or the VCS revision.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel+" + rev + dirty
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

func newVersionCmd(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print auditq's version",
		Args:    cobra.NoArgs,
		Example: "  auditq version",
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(io.out, "auditq %s\n", versionString())
			return err
		},
	}
}
