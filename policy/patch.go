package policy

import (
	"strings"

	"github.com/toolgate/toolgate/classify"
)

// PatchFile is one file a Codex apply_patch patch touches.
type PatchFile struct {
	// Path is the path as the patch names it.
	Path string
	// Op is classify.OpWrite (Add File, Update File, Move to) or
	// classify.OpDelete (Delete File).
	Op classify.Op
}

// patchHeaders are the patch format's file lines (Codex apply_patch) and
// the operation of each.
var patchHeaders = []struct {
	prefix string
	op     classify.Op
}{
	{"*** Add File:", classify.OpWrite},
	{"*** Update File:", classify.OpWrite},
	{"*** Move to:", classify.OpWrite},
	{"*** Delete File:", classify.OpDelete},
}

// PatchFiles returns the files a Codex apply_patch patch text names, in
// order: every line that, with surrounding white space trimmed, starts with
// "*** Add File:", "*** Update File:", "*** Move to:" (write) or
// "*** Delete File:" (delete). Lines are matched wherever they are — a
// context line of a hunk that looks like a header is judged too (a
// stricter reading than the patch tool's, never a looser one).
func PatchFiles(text string) []PatchFile {
	var out []PatchFile
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "***") {
			continue
		}
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(t, h.prefix); ok {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, PatchFile{Path: p, Op: h.op})
				}
				break
			}
		}
	}
	return out
}
