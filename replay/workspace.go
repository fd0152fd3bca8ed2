package replay

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// cdTarget matches an absolute `cd DIR` at the start of a command or after
// && ; or |.
var cdTarget = regexp.MustCompile(`(?:^|&&|;|\|\|)\s*cd\s+(/[^\s;&|'"]+)`)

// InferWorkspace guesses a run's working directory, the root its agent
// harness started in (/testbed, /workspace/<repo>, …): the absolute
// directory it cds into most often; failing that, the directory that most
// absolute file-tool paths (including those of OpenHands' file helpers in
// IPython cells) share at depth two. "" means unknown (relative
// paths are then taken as inside the workspace).
func InferWorkspace(r Run) string {
	counts := map[string]int{}
	best, bestN := "", 0
	bump := func(d string) {
		d = path.Clean(d)
		if d == "/" || d == "." {
			return
		}
		counts[d]++
		if n := counts[d]; n > bestN || n == bestN && d < best {
			best, bestN = d, n
		}
	}
	for _, c := range r.Calls {
		if c.Tool != ToolBash {
			continue
		}
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(c.Input, &in) != nil {
			continue
		}
		for _, m := range cdTarget.FindAllStringSubmatch(in.Command, -1) {
			bump(m[1])
		}
	}
	if best != "" {
		return best
	}
	for _, c := range r.Calls {
		var in struct {
			Path     string `json:"path"`
			FilePath string `json:"file_path"`
			Code     string `json:"code"`
		}
		if json.Unmarshal(c.Input, &in) != nil {
			continue
		}
		paths := []string{in.Path, in.FilePath}
		if c.Tool == ToolIPython {
			stripHelperCalls(in.Code, func(_, p string) { paths = append(paths, p) })
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") {
				continue
			}
			parts := strings.SplitN(strings.TrimPrefix(path.Clean(p), "/"), "/", 3)
			if len(parts) >= 3 {
				bump("/" + parts[0] + "/" + parts[1])
			}
		}
	}
	return best
}
