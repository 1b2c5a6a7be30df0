package oom

import "strings"

// needleSet finds many literal needles in one pass over a text. A pass per
// needle with strings.Index costs a vectorised scan each, which with fifty
// needles is most of the parse time of a big log; one pass that looks up
// every pair of bytes in a table costs about the same as one of them.
type needleSet struct {
	// group[p] indexes groups for the two bytes p = b0<<8|b1 a needle may
	// start with; 0 means none does.
	group  [1 << 16]uint8
	groups [][]string
}

func newNeedleSet(needles []string) *needleSet {
	ns := &needleSet{groups: [][]string{nil}}
	for _, n := range needles {
		if len(n) < 2 {
			panic("oom: a needle needs two bytes: " + n)
		}
		p := uint16(n[0])<<8 | uint16(n[1])
		g := ns.group[p]
		if g == 0 {
			if len(ns.groups) > 255 {
				panic("oom: too many needle prefixes")
			}
			g = uint8(len(ns.groups))
			ns.group[p] = g
			ns.groups = append(ns.groups, nil)
		}
		ns.groups[g] = append(ns.groups[g], n)
	}
	return ns
}

// lineHits returns the offset of the first needle on each line of text
// that holds one. A line longer than maxLine (a paste that lost its
// newlines) gets a hit per maxLine bytes.
func (ns *needleSet) lineHits(text string, maxLine int) []int {
	var hits []int
	for i := 0; i+1 < len(text); i++ {
		g := ns.group[uint16(text[i])<<8|uint16(text[i+1])]
		if g == 0 {
			continue
		}
		for _, n := range ns.groups[g] {
			if strings.HasPrefix(text[i:], n) {
				hits = append(hits, i)
				next := i + maxLine
				if le := strings.IndexByte(text[i:min(len(text), next)], '\n'); le >= 0 {
					next = i + le
				}
				i = next
				break
			}
		}
	}
	return hits
}
