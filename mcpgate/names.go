package mcpgate

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
)

// MaxToolName is the longest tool name the gateway presents: clients such
// as Claude's and OpenAI's APIs enforce ^[a-zA-Z0-9_-]{1,64}$.
const MaxToolName = 64

// hashSuffix is "-" and 8 hex digits of SHA-256 (upstream NUL tool).
const hashSuffix = 9

// ToolNamePattern is the pattern every presented tool name matches.
var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ToolRef names one upstream tool: the upstream's configured name and the
// tool's own name as the upstream lists it (any bytes; untrusted).
type ToolRef struct {
	Upstream string
	Tool     string
}

// PresentedNames assigns every upstream tool the name the gateway shows the
// client: "<upstream>_<tool>", always (so that adding an upstream never
// renames another's tools), with every byte outside [a-zA-Z0-9_-] replaced
// by "_". A name that sanitizing changed, that another tool has verbatim,
// or that is longer than MaxToolName, keeps its first bytes and
// ends in "-" and 8 hex digits of SHA-256 over upstream, NUL, tool — so the
// result is deterministic (independent of the order of refs), every name
// matches ToolNamePattern, and distinct refs get distinct names.
// Duplicate refs (an upstream listing one name twice) get one name; a
// ref whose hashed name is already taken (a 32-bit SHA-256 prefix
// collision, or a name another tool has verbatim) is left out of the map:
// that tool is not presented (fail closed), and the order of refs does not
// change which one.
func PresentedNames(refs []ToolRef) map[ToolRef]string {
	uniq := slices.Clone(refs)
	slices.SortFunc(uniq, func(a, b ToolRef) int {
		if c := strings.Compare(a.Upstream, b.Upstream); c != 0 {
			return c
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	uniq = slices.Compact(uniq)
	base := make(map[ToolRef]string, len(uniq))
	count := make(map[string]int, len(uniq))
	for _, r := range uniq {
		b := sanitize(r.Upstream + "_" + r.Tool)
		base[r] = b
		if b == r.Upstream+"_"+r.Tool {
			count[b]++ // exact names only: a changed name never displaces one
		}
	}
	out := make(map[ToolRef]string, len(uniq))
	taken := make(map[string]ToolRef, len(uniq))
	// Exact names first: a name that needed no change, fits, and no other
	// tool has verbatim keeps it; the others are hashed ("a_b"+"c" and
	// "a"+"b_c" both are).
	var hashed []ToolRef
	for _, r := range uniq {
		b := base[r]
		if b == r.Upstream+"_"+r.Tool && count[b] == 1 && len(b) <= MaxToolName && b != "" {
			out[r] = b
			taken[b] = r
			continue
		}
		hashed = append(hashed, r)
	}
	for _, r := range hashed {
		b := base[r]
		if len(b) > MaxToolName-hashSuffix {
			b = b[:MaxToolName-hashSuffix]
		}
		sum := sha256.Sum256([]byte(r.Upstream + "\x00" + r.Tool))
		n := b + "-" + hex.EncodeToString(sum[:4])
		if _, dup := taken[n]; dup {
			continue // not presented: fail closed
		}
		out[r] = n
		taken[n] = r
	}
	return out
}

// sanitize replaces every byte outside [a-zA-Z0-9_-] with '_' (a multi-byte
// rune becomes one '_' per byte, so distinct inputs of one length stay
// distinct in length at least).
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
