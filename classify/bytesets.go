package classify

// byteSet is a set of ASCII bytes, for scans in the hot paths where
// strings.ContainsAny would build its set (or search the set string)
// on every call. The sets below are built once and never written.
type byteSet [256]bool

func newByteSet(chars string) *byteSet {
	var s byteSet
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return &s
}

// index is the index of the first byte of x in the set, or -1.
func (s *byteSet) index(x string) int {
	for i := 0; i < len(x); i++ {
		if s[x[i]] {
			return i
		}
	}
	return -1
}

// lastIndex is the index of the last byte of x in the set, or -1.
func (s *byteSet) lastIndex(x string) int {
	for i := len(x) - 1; i >= 0; i-- {
		if s[x[i]] {
			return i
		}
	}
	return -1
}

// any reports whether x holds a byte of the set.
func (s *byteSet) any(x string) bool { return s.index(x) >= 0 }

var (
	globBytes        = newByteSet(globMeta)        // "*?["
	globEscBytes     = newByteSet(globMeta + "\\") // "*?[\\"
	globEndBytes     = newByteSet("*?]")           // a glob's last metacharacter
	plainWordSpecial = newByteSet("\\{*?[~")       // see appendWord
)
