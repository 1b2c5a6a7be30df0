package oom

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// line is one normalised line of a paste. Rank is the torchrun "[rankN]:"
// prefix (-1 when absent), so that a traceback can be matched to the rank
// that printed the OOM. Fresh marks a line that carried a log prefix: it
// starts a new record and is never a hard-wrap continuation.
type line struct {
	text  string
	rank  int
	fresh bool
	// space marks a line that ended in blanks before they were trimmed:
	// a wrap after it fell between two words.
	space bool
	// full marks a row as wide as the console that hard-wrapped the paste:
	// the next row goes on with the same line.
	full bool
	// proc is the process a stripped worker prefix named ("VllmWorkerProcess"
	// of "(VllmWorkerProcess pid=195295) ERROR ..."): the prefix is gone
	// from text, but it is what names the stack when no path does.
	proc string
}

// normalize undoes what Slack, Markdown, terminals and log collectors do to
// a paste: Slack links and entity escaping, HTML-rendered ANSI colours, ANSI
// escapes, CR/CRLF and tqdm carriage returns, code fences, quote markers,
// log prefixes (torchrun ranks, vLLM, docker compose, ISO timestamps, TF
// glog, loguru, pytest), then re-joins lines that a terminal hard-wrapped
// inside a word. Every step is one pass over its input.
func normalize(s string) []line {
	if jsonEscaped(s) {
		s = unescapeJSON(s)
	}
	s = unSlackLinks(s)
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	if t, stripped := stripHTMLTags(s); stripped {
		s = html.UnescapeString(t)
	}
	s = stripANSI(s)

	raw := splitLines(s)
	width := consoleWidth(raw)
	out := make([]line, 0, len(raw))
	for _, r := range raw {
		l, keep := cleanLine(r)
		if keep {
			l.full = width > 0 && utf8.RuneCountInString(r) == width && !tableRow(r)
			out = append(out, l)
		}
	}
	return joinWraps(out)
}

// consoleWidth returns the width a console hard-wrapped the paste at, or 0.
// Such a console cuts every longer line into rows of exactly its width, so
// the widest rows are all that wide: at least two different ones, and none
// wider. An unwrapped paste's widest line is almost always unique; table
// rows (nvidia-smi, memory_summary, rich tracebacks) share one width by
// design and do not count.
func consoleWidth(raw []string) int {
	width, first, distinct := 0, "", 0
	for _, r := range raw {
		if len(r) < minWrapWidth || tableRow(r) {
			continue
		}
		switch n := utf8.RuneCountInString(r); {
		case n > width:
			width, first, distinct = n, r, 1
		case n == width && distinct == 1 && r != first:
			distinct = 2
		}
	}
	if width < minWrapWidth || distinct < 2 {
		return 0
	}
	return width
}

// tableRow reports a row of a drawn table or box.
func tableRow(r string) bool {
	t := strings.TrimLeft(r, " \t")
	for _, p := range []string{"|", "+", "│", "╭", "╰", "┃", "║", "="} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// splitLines splits on \n, \r\n and lone \r (tqdm redraws).
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, s[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// maxTagLen bounds how far a tag or a Slack link may reach, keeping every
// scan linear.
const maxTagLen = 2048

// unSlackLinks rewrites Slack's <https://x|label> to label and <https://x>
// to the URL. Other <...> text is left alone.
func unSlackLinks(s string) string {
	if !strings.Contains(s, "<http") && !strings.Contains(s, "<mailto:") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == '<' && (strings.HasPrefix(s[i+1:], "http") || strings.HasPrefix(s[i+1:], "mailto:")) {
			rest := s[i+1 : min(len(s), i+1+maxTagLen)]
			if end := strings.IndexAny(rest, ">\n"); end >= 0 && rest[end] == '>' {
				link := rest[:end]
				if _, label, ok := strings.Cut(link, "|"); ok {
					b.WriteString(label)
				} else {
					b.WriteString(link)
				}
				i += end + 2
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// htmlTags are the tag names a rendered-HTML paste (Jupyter's ANSI output,
// GitHub's rendering) carries. Only these are stripped, so Python's
// <module>, <lambda> and <stdin> survive.
var htmlTags = map[string]bool{
	"span": true, "pre": true, "div": true, "br": true, "code": true, "b": true, "i": true,
	"p": true, "font": true, "strong": true, "em": true, "a": true, "kbd": true, "samp": true,
	"details": true, "summary": true, "u": true, "tt": true,
}

// stripHTMLTags removes tags named in htmlTags; it reports whether any was.
func stripHTMLTags(s string) (string, bool) {
	if !strings.Contains(s, "<span") && !strings.Contains(s, "<pre") && !strings.Contains(s, "</") && !strings.Contains(s, "<br") {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	stripped := false
	for i := 0; i < len(s); {
		if s[i] == '<' {
			if n := tagLen(s[i:]); n > 0 {
				stripped = true
				i += n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), stripped
}

// tagLen returns the length of the HTML tag at the start of s, or 0.
func tagLen(s string) int {
	j := 1
	if j < len(s) && s[j] == '/' {
		j++
	}
	k := j
	for k < len(s) && k-j < 10 && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
		k++
	}
	if !htmlTags[strings.ToLower(s[j:k])] || k >= len(s) || (s[k] != '>' && s[k] != ' ' && s[k] != '/') {
		return 0
	}
	end := strings.IndexByte(s[k:min(len(s), k+maxTagLen)], '>')
	if end < 0 {
		return 0
	}
	return k + end + 1
}

// reLiteralANSI matches colour codes that lost their ESC byte or were
// written out by a JSON dump ("\u001b[0;31m", "[0;31m").
var reLiteralANSI = regexp.MustCompile(`(?:\\u001[bB]|\\x1[bB]|\\033)?\[[0-9;]{1,12}m`)

// stripANSI removes ESC [ ... final-byte sequences (colours, cursor moves)
// and colour codes written out as text.
func stripANSI(s string) string {
	if strings.Contains(s, "[0m") || strings.Contains(s, "u001b[") {
		s = reLiteralANSI.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			if i+1 < len(s) && s[i+1] == '[' {
				j := i + 2
				for j < len(s) && j-i < 32 && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
					j++
				}
				if j < len(s) {
					i = j
				}
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Log prefixes, each anchored at the start of a line. They are tried only
// when the line's first byte can start them, so most lines cost nothing.
var (
	rankPrefix    = regexp.MustCompile(`^\[rank(\d+)\]:\s?`)
	composePrefix = regexp.MustCompile(`^[A-Za-z0-9][\w.-]{0,80}\s+\| ?`)
	// isoPrefix also takes the bracketed form CI runners print
	// ("[2026-02-24T20:21:58Z] "). It and procPrefix take one blank only,
	// so that an indented traceback line keeps its indent.
	isoPrefix  = regexp.MustCompile(`^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?[ \t]`)
	glogPrefix = regexp.MustCompile(`^:?\s?[IWEF]\s?(?:\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+)?(?:0x[0-9a-f]+ )?[\w/.-]+\.(?:cc|h|cpp|c):\d+\]\s?`)
	vllmPrefix = regexp.MustCompile(`^(?:\([^()\n]{0,60}pid=\d+(?:, ip=[\w.:-]+)?\)\s+)?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \[?[\w./-]+:\d+\]\s?`)
	// procPrefix is a worker's "(EngineCore_DP0 pid=8884) "; Ray adds the
	// node address: "(RayWorkerWrapper pid=1054, ip=10.96.62.52) ".
	procPrefix = regexp.MustCompile(`^\([^()\n]{0,60}pid=\d+(?:, ip=[\w.:-]+)?\)[ \t]`)
	// procName is the process a worker prefix names.
	procName     = regexp.MustCompile(`^\(([\w.-]{1,60}) pid=\d+`)
	loguruPrefix = regexp.MustCompile(`^[^|\n]{1,40}\|[^|\n]{1,40}\|\s*[\w.<>-]+:[\w.<>-]+:\d+\s+-\s+`)
	// pyLoggingPrefix is what logging's "%(asctime)s - %(name)s -
	// %(levelname)s - " leaves once isoPrefix took the time (ComfyUI).
	pyLoggingPrefix = regexp.MustCompile(`^- [\w.]{1,40} - (?:ERROR|WARNING|INFO|DEBUG|CRITICAL) - `)
	// ggmlPrefix is llama.cpp's own log line: "1.06.520.077 E ".
	ggmlPrefix = regexp.MustCompile(`^\d{1,3}\.\d{2}\.\d{3}\.\d{3} [IWEDT] `)
	// syslogPrefix is journald/syslog ("Apr 17 23:09:42 host ollama[2840]: ",
	// "May 15 23:09:30 host kernel: "); dmesgPrefix the kernel's own clock,
	// raw ("[ 4018.450000] ") or from dmesg -T ("[Sun Mar 30 08:24:00 2025] ").
	syslogPrefix = regexp.MustCompile(`^(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec) [ \d]?\d \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w.@/()-]{1,64}(?:\[\d+\])?: `)
	dmesgPrefix  = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?|^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4}\]\s?`)
	pytestPrefix = regexp.MustCompile(`^FAILED (?:\[[^\]]{0,20}\] )?\S+ - `)
	// log4jPrefix is Spark's and Hadoop's "yy/MM/dd HH:mm:ss " clock; the
	// level after it stays, as the fallback reads ERROR.
	log4jPrefix = regexp.MustCompile(`^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)? `)
)

// cleanLine strips fences, quote markers and log prefixes from one line. It
// returns keep=false for lines that are only a fence marker.
func cleanLine(s string) (line, bool) {
	l := line{rank: -1}
	for range 8 {
		t := strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(t, "```"):
			t = strings.TrimLeft(t, "`")
			if isFenceLang(t) {
				return l, false
			}
			s = t
			continue
		case strings.HasPrefix(t, ">") && !strings.HasPrefix(t, ">>>"):
			s = strings.TrimPrefix(strings.TrimLeft(t, ">"), " ")
			continue
		}
		if glogPrefix.MatchString(t) {
			// Keep TF/XLA glog prefixes: the source path tells TF from
			// JAX (external/org_tensorflow). They still start a record.
			l.fresh = true
			break
		}
		if m := stripPrefix(t); m >= 0 {
			if r := rankPrefix.FindStringSubmatch(t); r != nil {
				l.rank, _ = strconv.Atoi(r[1])
			}
			if p := procName.FindStringSubmatch(t[:m]); p != nil {
				l.proc = p[1]
			}
			l.fresh = true
			s = t[m:]
			continue
		}
		break
	}
	t := strings.TrimRight(s, " \t")
	l.space = len(t) < len(s)
	l.text = strings.TrimSuffix(t, "```")
	return l, true
}

// isFenceLang reports whether what follows ``` makes the line a fence
// marker: nothing, or a language tag such as "python" or "text".
func isFenceLang(t string) bool {
	t = strings.TrimSpace(t)
	if len(t) > 24 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '+') {
			return false
		}
	}
	return true
}

// stripPrefix returns the length of a log prefix at the start of t, or -1.
func stripPrefix(t string) int {
	if t == "" {
		return -1
	}
	var res []*regexp.Regexp
	switch c := t[0]; {
	case c == '[':
		res = []*regexp.Regexp{rankPrefix, isoPrefix, dmesgPrefix}
	case c >= '0' && c <= '9':
		res = []*regexp.Regexp{isoPrefix, log4jPrefix, ggmlPrefix, loguruPrefix, composePrefix}
	case c == 'I' || c == 'W' || c == 'E' || c == 'F' || c == 'D' || c == 'C':
		res = []*regexp.Regexp{vllmPrefix, pytestPrefix, syslogPrefix, loguruPrefix, composePrefix}
	case c == '(':
		res = []*regexp.Regexp{vllmPrefix, procPrefix}
	case c == '-':
		res = []*regexp.Regexp{pyLoggingPrefix}
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		res = []*regexp.Regexp{syslogPrefix, composePrefix, loguruPrefix}
	default:
		return -1
	}
	for _, re := range res {
		if loc := re.FindStringIndex(t); loc != nil && loc[1] > 0 {
			if re == composePrefix && !plausibleCompose(t[:loc[1]]) {
				continue
			}
			return loc[1]
		}
	}
	return -1
}

// plausibleCompose accepts "svc-1  | " (a service name, two or more spaces
// or a replica suffix, then a bar) but not prose such as "a | b".
func plausibleCompose(p string) bool {
	name := strings.TrimRight(p, " |")
	return strings.Contains(p, "  |") || strings.ContainsAny(name, "-_") && !strings.Contains(name, " ")
}

// minWrapWidth is the shortest line taken to be a terminal hard wrap: real
// consoles wrap at 80 columns or more, and a shorter line ending mid-word is
// more likely a clipped paste than a wrap.
const minWrapWidth = 60

// joinWraps re-joins a line with the next when a terminal broke a word in
// two ("Includ|ing", "expandable_segments:T|rue", "grad|io\queueing.py"):
// the first is long and ends in a word character, the second starts with
// one and is not the start of a new record.
func joinWraps(lines []line) []line {
	out := lines[:0]
	for _, l := range lines {
		// A wrapped tail has no prefix of its own, whatever its head had.
		if n := len(out); n > 0 && !l.fresh && l.rank < 0 {
			prev := &out[n-1]
			switch {
			case prev.full && l.text != "" && !startsRecord(l.text):
				// A console wrap cuts at a column: the rows join as they are,
				// with the blank the row ended in.
				if prev.space {
					prev.text += " "
				}
				prev.text += l.text
				prev.space, prev.full = l.space, l.full
				continue
			case prev.space && wrapsAtSpace(prev.text, l.text):
				prev.text += " " + l.text
				prev.space, prev.full = l.space, l.full
				continue
			case !prev.space && len(prev.text) >= minWrapWidth && closesLine(l.text):
				// A wrap that left only the closing bracket or stop of the
				// line above ("...(13.4 GiB" | ")").
				prev.text += l.text
				prev.space, prev.full = l.space, l.full
				continue
			case !prev.space && wrapsInto(prev.text, l.text):
				prev.text += l.text
				prev.space, prev.full = l.space, l.full
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

// wrapsAtSpace reports a wrap that fell on a blank ("Resource exhausted:
// Out |of memory while trying"): a long unindented line that ended in
// blanks, then a line going on in lower case. Indented lines are
// traceback source, which does not wrap into the next line.
func wrapsAtSpace(prev, next string) bool {
	if len(prev) < minWrapWidth || next == "" || prev[0] == ' ' || prev[0] == '\t' {
		return false
	}
	return (next[0] >= 'a' && next[0] <= 'z' || isDigit(next[0])) && !startsRecord(next) && !logFunction.MatchString(next)
}

func wrapsInto(prev, next string) bool {
	if len(prev) < minWrapWidth || next == "" || !isWordByte(next[0]) {
		return false
	}
	if last := prev[len(prev)-1]; last == '/' || last == '\\' {
		// A path cut after a separator ("torch/lib/|THC/generic/...")
		// goes on with the next component, whatever its case.
		return !startsRecord(next) && !strings.HasPrefix(next, "File ")
	}
	if !isWordByte(prev[len(prev)-1]) {
		return false
	}
	// A word broken in two continues in the same case: "Includ|ing",
	// "segments:T|rue", "ALLOC_CO|NF"; "GPU_0_bfc|Resource Error" is two lines.
	if isUpper(next[0]) && !isUpper(prev[len(prev)-1]) && !isDigit(prev[len(prev)-1]) && prev[len(prev)-1] != '_' {
		return false
	}
	return !startsRecord(next) && !logFunction.MatchString(next)
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// closesLine reports a row that is only the end of the line before it:
// closing brackets, quotes and stops.
func closesLine(s string) bool {
	return s != "" && len(s) <= 4 && strings.Trim(s, ")]}\"'.,;") == ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// startsRecord reports lines that begin something new: a traceback, an
// exception line ("ValueError: ..."), a chained-exception note.
func startsRecord(s string) bool {
	if strings.HasPrefix(s, "Traceback") || strings.HasPrefix(s, "During handling") || strings.HasPrefix(s, "The above exception") {
		return true
	}
	return exceptionLine.MatchString(s)
}

// logFunction is a line of a C/C++ program's log that starts with the
// function that prints it ("llama_init_from_model: ...", "print_info: ..."):
// a record of its own, not the tail of a word, unless a console's width
// says the row above was cut.
var logFunction = regexp.MustCompile(`^[a-z][a-z0-9]*_[a-z0-9_]{2,60}: `)

// exceptionLine matches "torch.OutOfMemoryError: ...", "RuntimeError: ...".
var exceptionLine = regexp.MustCompile(`^[A-Za-z_][\w.]{0,80}(?:Error|Exception|Exit|Interrupt|Warning)\b:?`)

// jsonEscaped reports a paste that is (mostly) one JSON string: an error
// response of a serving API, a log shipped as JSON. Its newlines are
// written \n, so the lines of the error are all on one.
func jsonEscaped(s string) bool {
	escapes := strings.Count(s, `\n`)
	return escapes >= 3 && strings.IndexByte(s, '"') >= 0 && strings.Count(s, "\n") < escapes/2
}

// unescapeJSON undoes JSON string escapes (\n, \t, \", \\, \uXXXX) in one
// pass; other backslashes stay as they are.
func unescapeJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'u':
			if i+6 <= len(s) {
				if r, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 5
					continue
				}
			}
			b.WriteByte(s[i])
			continue
		default:
			b.WriteByte(s[i])
			continue
		}
		i++
	}
	return b.String()
}
