package classify

import "strings"

// maxGlobAlts bounds the alternatives of one path glob (globAlternatives).
const maxGlobAlts = 64

// globAlternatives expands a file tool's glob the way the tools' glob
// libraries do before a name is matched: brace expansion ("{.env,x}",
// "*.{pem,key}", nested) and extended glob groups ("@(a|b)" is a or b;
// "?(a)" and "*(a)" also the empty string; "+(a)" and "*(a)" also
// repeats, and "!(a)" anything, which the "*" form extglobAsStar gives
// stands for). It returns nil when p has neither; truncated reports that
// more than maxGlobAlts alternatives existed (the first ones are kept,
// and the caller treats the rest as unknown).
func globAlternatives(p string) (alts []string, truncated bool) {
	if !strings.ContainsAny(p, "{(") {
		return nil, false
	}
	out := []string{p}
	changed := false
	for range len(p) { // each round expands one group of every string
		var next []string
		grew := false
		for _, s := range out {
			exp, ok := expandOneGroup(s)
			if !ok {
				next = append(next, s)
				continue
			}
			grew = true
			next = append(next, exp...)
			if len(next) > maxGlobAlts {
				return next[:maxGlobAlts], true
			}
		}
		out = next
		if !grew {
			break
		}
		changed = true
	}
	if !changed {
		return nil, false
	}
	return out, false
}

// expandOneGroup expands the first brace or extglob group in s (one
// level): its alternatives with the rest of s around them.
func expandOneGroup(s string) ([]string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++
			continue
		}
		ext := i+1 < len(s) && s[i+1] == '(' && strings.IndexByte("@!+?*", c) >= 0
		if c != '{' && !ext {
			continue
		}
		open, close, sep := byte('{'), byte('}'), byte(',')
		start := i + 1
		if ext {
			open, close, sep, start = '(', ')', '|', i+2
		}
		depth, end := 0, -1
		var parts []string
		last := start
		for j := start; j < len(s) && end < 0; j++ {
			switch s[j] {
			case '\\':
				j++
			case open, '{', '(':
				depth++
			case close, '}', ')':
				if depth == 0 {
					if s[j] == close {
						parts = append(parts, s[last:j])
						end = j
					}
				} else {
					depth--
				}
			case sep:
				if depth == 0 {
					parts = append(parts, s[last:j])
					last = j + 1
				}
			}
		}
		if end < 0 || strings.Contains(s[start:end], "/") && ext || !ext && len(parts) < 2 {
			continue
		}
		pre, post := s[:i], s[end+1:]
		var alts []string
		if ext {
			switch c {
			case '!':
				// Anything but the names: "*" stands for it.
				return []string{pre + "*" + post}, true
			case '?', '*':
				alts = append(alts, "")
			}
			if c == '+' || c == '*' {
				alts = append(alts, "*")
			}
		}
		alts = append(alts, parts...)
		out := make([]string, 0, len(alts))
		for _, a := range alts {
			out = append(out, pre+a+post)
		}
		return out, true
	}
	return nil, false
}
