package oom

import (
	"slices"
	"strings"
)

// Input bounds. An OOM kills the process, so the message is at the end of
// a log, and chained or multi-rank reports sit right beside it; the head of
// a log can hold a load-time OOM. Keeping the first headKeep and the last
// tailKeep bytes of anything over maxScan therefore keeps every OOM a
// person could mean while bounding time and memory.
const (
	maxScan  = 32 << 20
	headKeep = 4 << 20
	tailKeep = maxScan - headKeep

	// wholeText is the size up to which the whole paste is normalised at
	// once; above it only windows around candidate lines are.
	wholeText = 256 << 10
	// windowBefore/windowAfter are how much context a candidate line gets:
	// enough for a deep traceback before it and its message and node lines
	// after it.
	windowBefore = 64 << 10
	windowAfter  = 16 << 10
	// maxNormalized bounds the candidate regions read in full. A real log
	// has a few; only a paste made of thousands of OOM messages reaches
	// it, and then Occurrences counts those in the first maxNormalized
	// bytes of candidate regions.
	maxNormalized = 1 << 20
)

// windowNeedles are the needles a big paste is searched for.
var windowNeedles = func() *needleSet {
	seen := map[string]bool{}
	var needles []string
	for _, r := range anchorRules {
		if !seen[r.needle] && !nearHead[r.needle] {
			seen[r.needle] = true
			needles = append(needles, r.needle)
		}
	}
	return newNeedleSet(needles)
}()

// scan is one normalised region of the input.
type scan struct {
	lines   []line
	text    string // lines joined by \n
	starts  []int  // offset of each line in text
	anchors []anchor
	xpu     int // 0 unknown, 1 the text mentions an XPU, -1 it does not
	// vllmWorker marks a scan whose stripped log prefixes name a vLLM
	// process (its V0 "VllmWorkerProcess", its V1 "EngineCore_DP0").
	vllmWorker bool
}

func newScan(raw string) *scan {
	lines := normalize(raw)
	var b strings.Builder
	b.Grow(len(raw))
	starts := make([]int, len(lines))
	for i, l := range lines {
		starts[i] = b.Len()
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	sc := &scan{lines: lines, text: b.String(), starts: starts}
	for _, l := range lines {
		if strings.HasPrefix(l.proc, "VllmWorker") || strings.HasPrefix(l.proc, "EngineCore") {
			sc.vllmWorker = true
			break
		}
	}
	sc.anchors = findAnchors(sc.text)
	return sc
}

// lineOf returns the index of the line holding byte offset pos.
func (sc *scan) lineOf(pos int) int {
	i, found := slices.BinarySearch(sc.starts, pos)
	if found {
		return i
	}
	return i - 1
}

// Parse reads a paste and reports the first OOM in it (detected=false when
// there is none). It never fails: any bytes give a Report.
func Parse(text string) Report {
	if len(text) > maxScan {
		text = text[:headKeep] + "\n" + text[len(text)-tailKeep:]
	}
	rep := notDetected()
	rep.FragmentationHint = strings.Contains(text, "max_split_size_mb") || strings.Contains(text, "expandable_segments")

	var scans []*scan
	read := 0
	for _, w := range candidateWindows(text) {
		if read >= maxNormalized {
			break
		}
		end := min(w[1], w[0]+maxNormalized-read)
		read += end - w[0]
		if sc := newScan(text[w[0]:end]); len(sc.anchors) > 0 {
			scans = append(scans, sc)
		}
	}
	var best *scan
	var first anchor
	for _, sc := range scans {
		if a, ok := primary(sc.anchors); ok && (best == nil || a.kind.strength() > first.kind.strength()) {
			best, first = sc, a
		}
	}
	if best == nil {
		return rep
	}
	rep.Detected = true
	for _, sc := range scans {
		for _, a := range sc.anchors {
			if a.kind.strength() == first.kind.strength() {
				rep.Occurrences++
			}
		}
	}
	if !rep.FragmentationHint {
		rep.FragmentationHint = strings.Contains(best.text, "max_split_size_mb") || strings.Contains(best.text, "expandable_segments")
	}
	extract(best, first, &rep)
	rep.ErrorKind, _ = rep.Extra["kind"].(string)
	rep.Engine, _ = rep.Extra["stack"].(string)
	rep.NonFatal = rep.Extra["non_fatal"] == true
	return rep
}

// candidateWindows returns the byte ranges to normalise: the whole text
// when small, else merged windows around lines that hold a needle of some
// anchor rule, found in one pass (windowNeedles).
func candidateWindows(text string) [][2]int {
	if len(text) <= wholeText {
		return [][2]int{{0, len(text)}}
	}
	hits := windowNeedles.lineHits(text, windowAfter)
	slices.Sort(hits)
	var wins [][2]int
	for _, h := range hits {
		lo, hi := max(0, h-windowBefore), min(len(text), h+windowAfter)
		lo = snapLineStart(text, lo)
		hi = snapLineEnd(text, hi)
		if n := len(wins); n > 0 && lo <= wins[n-1][1] {
			wins[n-1][1] = max(wins[n-1][1], hi)
			continue
		}
		wins = append(wins, [2]int{lo, hi})
	}
	return wins
}

func snapLineStart(text string, i int) int {
	if i == 0 {
		return 0
	}
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 && j < 4096 {
		return i + j + 1
	}
	return i
}

func snapLineEnd(text string, i int) int {
	if i >= len(text) {
		return len(text)
	}
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 && j < 4096 {
		return i + j
	}
	return i
}
