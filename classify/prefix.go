package classify

// hasPrefixThen reports whether s starts with pre followed by the byte
// c: strings.HasPrefix(s, pre+string(c)) without building that string
// (a concatenation per test was a measurable part of every command's
// cost: flag spellings are tried against every argument).
func hasPrefixThen(s, pre string, c byte) bool {
	return len(s) > len(pre) && s[len(pre)] == c && s[:len(pre)] == pre
}
