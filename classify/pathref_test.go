package classify

// The path matcher as it was before the rule candidates became bit sets
// and the segment-count filters were added (paths.go at the commit
// before them), kept as the reference model for TestPathMatcherEqualsReference.
// Only the candidate selection was renamed; the per-rule tests it calls
// (matchSegs, segMatch, couldMatchSeg, globExempt) are shared.

import (
	"slices"
	"strings"
)

// refMatcher is the old matcher over a compiled rule set.
type refMatcher struct {
	cr    *compiled
	index refPathIndex
}

func newRefMatcher(cr *compiled) *refMatcher {
	return &refMatcher{cr: cr, index: newRefPathIndex(cr.paths)}
}

// refPathIndex finds the path rules a path can match without trying them
// all (the latency tail was glob matching against every rule). Rules are
// grouped by anchor: "/" and "~" rules only match paths starting there,
// the others ("**/…") any path. Within a group, rules whose last segment
// is a literal name are indexed by that name and by its first and last
// byte; the others (a glob or "**" last) are always tried. Candidates
// come back in rule order, which decides ties.
type refPathIndex struct {
	root, home, any refRuleGroup
}

type refRuleGroup struct {
	byName       map[string][]int
	byLastByte   [256][]int
	byFirstByte  [256][]int
	lits, nonLit []int
}

func (g *refRuleGroup) add(i int, last string) {
	if last == "" || last == "/" || last == "~" {
		g.nonLit = append(g.nonLit, i)
		return
	}
	if g.byName == nil {
		g.byName = map[string][]int{}
	}
	g.lits = append(g.lits, i)
	g.byName[last] = append(g.byName[last], i)
	g.byLastByte[last[len(last)-1]] = append(g.byLastByte[last[len(last)-1]], i)
	g.byFirstByte[last[0]] = append(g.byFirstByte[last[0]], i)
}

func newRefPathIndex(paths []compiledPath) refPathIndex {
	var ix refPathIndex
	for i := range paths {
		switch paths[i].first {
		case "/":
			ix.root.add(i, paths[i].last)
		case "~":
			ix.home.add(i, paths[i].last)
		default:
			ix.any.add(i, paths[i].last)
		}
	}
	return ix
}

// groups are the rule groups a path starting with the segment first can
// match.
func (ix *refPathIndex) groups(first string) (*refRuleGroup, *refRuleGroup) {
	switch first {
	case "/":
		return &ix.root, &ix.any
	case "~":
		return &ix.home, &ix.any
	}
	return &ix.any, nil
}

// merge returns the union of sorted index lists, sorted, in buf.
func refMerge(buf []int, lists ...[]int) []int {
	out := buf[:0]
	n := 0
	for _, l := range lists {
		if len(l) > 0 {
			n++
			out = append(out, l...)
		}
	}
	if n > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// refLiteralCandidates are the rules a path with first and last segments
// first and end (literal) can match.
func (ix *refPathIndex) refLiteralCandidates(first, end string, buf []int) []int {
	a, b := ix.groups(first)
	if b == nil {
		return refMerge(buf, a.byName[end], a.nonLit)
	}
	return refMerge(buf, a.byName[end], a.nonLit, b.byName[end], b.nonLit)
}

// refGlobCandidates are the rules a path with first and last segments
// first and last (a glob or a name) can match directly, plus those
// naming dirName, the literal directory the glob lies in ("" for none).
func (ix *refPathIndex) refGlobCandidates(first, last, dirName string, buf []int) []int {
	pick := func(g *refRuleGroup) []int {
		switch gp, gs := litPrefix(last), litSuffix(last); {
		case last == "**" || strings.Contains(last, "\\"):
			return g.lits
		case !hasGlob(last):
			return g.byName[last]
		case gs != "":
			return g.byLastByte[gs[len(gs)-1]]
		case gp != "":
			return g.byFirstByte[gp[0]]
		}
		return g.lits
	}
	if hasGlob(first) {
		// A relative glob in the first segment: only "**" rules.
		first = ""
	}
	a, b := ix.groups(first)
	var dirA, dirB []int
	if dirName != "" {
		dirA = a.byName[dirName]
		if b != nil {
			dirB = b.byName[dirName]
		}
	}
	if b == nil {
		return refMerge(buf, pick(a), dirA, a.nonLit)
	}
	return refMerge(buf, pick(a), dirA, a.nonLit, pick(b), dirB, b.nonLit)
}

func (ref *refMatcher) matchOne(p string, write bool) pathVerdict {
	if strings.Contains(p, "(") {
		p = extglobAsStar(p)
	}
	if hasGlob(p) {
		return ref.matchGlob(p, write)
	}
	segs := splitPath(p)
	var best pathVerdict
	var buf [512]int
	end := segs[len(segs)-1]
	second := ""
	if len(segs) > 1 {
		second = segs[1]
	}
	for _, i := range ref.index.refLiteralCandidates(segs[0], end, buf[:]) {
		cp := &ref.cr.paths[i]
		if cp.second != "" && second != "" && cp.second != second && cp.first == segs[0] {
			continue
		}
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= best.level.Rank() {
			continue
		}
		if cp.first != "" && cp.first != segs[0] || cp.last != "" && cp.last != end ||
			!strings.HasPrefix(end, cp.lastPre) || !strings.HasSuffix(end, cp.lastSuf) {
			continue
		}
		if !matchSegs(cp.segs, segs) {
			continue
		}
		exempt := false
		for _, ex := range cp.except {
			if matchSegs(ex, segs) {
				exempt = true
				break
			}
		}
		if exempt {
			continue
		}
		best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason, dir: cp.dir}
	}
	return best
}
func (ref *refMatcher) matchGlob(p string, write bool) pathVerdict {
	segs := splitPath(p)
	k := 0
	for k < len(segs) && !hasGlob(segs[k]) {
		k++
	}
	dir := segs[:k]
	dirSensitive := k > 0 && k < len(segs) && !(k == 1 && (segs[0] == "~" || segs[0] == "/"))
	var probe []string
	last := segs[len(segs)-1]
	gp, gs := litPrefix(last), litSuffix(last)
	exact := last != "**" && !strings.Contains(last, "\\")
	cheap := func(cp *compiledPath) bool {
		if !exact || cp.lastSeg == "**" || strings.Contains(cp.lastSeg, "\\") {
			return true
		}
		if strings.HasPrefix(cp.lastSeg, ".") && !strings.HasPrefix(last, ".") && hasGlob(last) {
			return false // a glob not starting with "." matches no hidden name
		}
		return (strings.HasPrefix(cp.segPre, gp) || strings.HasPrefix(gp, cp.segPre)) &&
			(strings.HasSuffix(cp.segSuf, gs) || strings.HasSuffix(gs, cp.segSuf))
	}
	var best pathVerdict
	dirName := ""
	if dirSensitive {
		dirName = dir[len(dir)-1]
	}
	var buf [512]int
	second := ""
	if len(segs) > 1 && !hasGlob(segs[1]) {
		second = segs[1]
	}
	for _, i := range ref.index.refGlobCandidates(segs[0], last, dirName, buf[:]) {
		cp := &ref.cr.paths[i]
		if cp.second != "" && second != "" && cp.second != second && cp.first == segs[0] {
			continue
		}
		l := cp.rule.Read
		if write {
			l = cp.rule.Write
		}
		if l == "" || l.Rank() <= best.level.Rank() {
			continue
		}
		// The last segments must agree before the whole path is tried:
		// first by their literal ends (cheap), then as patterns.
		hit := cheap(cp) && (cp.lastSeg == "**" || segMatch(cp.lastSeg, last) || couldMatchSeg(cp.lastSeg, last, cp.lastAnywhere)) && matchSegsGlob(cp.segs, segs)
		direct := hit
		if !hit && dirSensitive && (cp.last == "" || cp.last == dirName) {
			// A rule with a literal last name can only match the
			// directory itself (the probe is no name).
			if probe == nil {
				probe = append(slices.Clone(dir), "\x00")
			}
			hit = matchSegs(cp.segs, dir) || matchSegs(cp.segs, probe)
		}
		if !hit || ref.cr.globExempt(cp.except, segs) {
			continue
		}
		best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason + ", which the glob may match", dir: cp.dir && direct}
	}
	return best
}
func (ref *refMatcher) matchTree(p string, skipHidden bool) pathVerdict {
	p = foldCase(p)
	if alt, ok := procRootAlias(p); ok {
		p = alt
	}
	segs := splitPath(p)
	var best pathVerdict
	for i := range ref.cr.paths {
		cp := &ref.cr.paths[i]
		l := cp.rule.Read
		if l == "" || l.Rank() <= best.level.Rank() || cp.segs[0] == "**" {
			continue
		}
		for k := 1; k < len(cp.segs); k++ {
			if matchSegs(cp.segs[:k], segs) && !(skipHidden && hiddenSeg(cp.segs[k:])) {
				best = pathVerdict{level: l, id: cp.rule.ID, reason: cp.rule.Reason + ", which lies below it"}
				break
			}
		}
	}
	if alt, ok := treeAlias(p); ok {
		if v := ref.matchTree(alt, skipHidden); v.level.Rank() > best.level.Rank() {
			best = v
		}
	}
	return best
}
func (ref *refMatcher) matchPath(p string, write bool) pathVerdict {
	p = foldCase(p)
	if rest, ok := unknownRest(p); ok {
		return ref.cr.matchAnyBase(rest, write)
	}
	if alt, ok := procRootAlias(p); ok {
		// /proc/PID/root/… is that process's view of the file system.
		p = alt
	}
	v := ref.matchOne(p, write)
	if alt, ok := homeAlias(p); ok && alt != "~" {
		if va := ref.matchOne(alt, write); va.level.Rank() > v.level.Rank() {
			v = va
		}
	}
	if alt, ok := runAlias(p); ok {
		if va := ref.matchOne(alt, write); va.level.Rank() > v.level.Rank() {
			v = va
		}
	}
	return v
}
