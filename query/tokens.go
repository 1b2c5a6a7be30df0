package query

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/units"
)

// The tolerant tokenizer (issue 12): people type a query the way they
// would write it to a colleague, so before the grammar reads the tokens
// this file undoes what is only spelling: quotes and backticks around
// words, "seq 8192" and "seq: 8192" for seq=8192, "8,192", "24 GB",
// "4 x a100", "8k context", "16 users", vendor words ("nvidia a100") and
// filler words ("lora on 4090"). Every rewrite leaves a grammar token, so
// the grammar's own errors still name what was typed.

// fillerWords carry no setting in any query ("lora on a 4090", "7b with
// bs=4"). They are dropped after the joins below had their chance ("gc on").
var fillerWords = map[string]bool{
	"on": true, "with": true, "using": true, "a": true, "an": true, "the": true, "for": true,
	"at": true, "in": true, "of": true, "to": true, "via": true, "and": true, "&": true,
	"+": true, "-": true, "–": true, "—": true, "|": true, "w/": true, "per": true,
}

// vendorWords precede a GPU name and add nothing to it ("NVIDIA A100",
// "GeForce RTX 4090", "AMD Instinct MI300X").
var vendorWords = map[string]bool{
	"nvidia": true, "nvidia's": true, "geforce": true, "amd": true, "tesla": true, "intel": true,
	"apple": true, "instinct": true, "radeon": true,
}

// Job sizes are quoted in billions of tokens; a token count this large
// before "tokens" is the job (tokens=), a smaller one a context (seq=).
const minJobTokensWord = 100_000_000

// thousandsRE matches a number written with thousands separators: 8,192.
var thousandsRE = regexp.MustCompile(`^\d{1,3}(,\d{3})+$`)

// numberRE matches what may stand before a unit or a counted key: 24, 1.5,
// 8k, 1M, 2B.
var numberRE = regexp.MustCompile(`^\d+(\.\d+)?[kmbtKMBT]?$`)

// memoryUnits follow a number to make a memory budget ("24 GB").
var memoryUnits = map[string]bool{"gb": true, "gib": true, "g": true, "tb": true, "tib": true, "mb": true, "mib": true}

// quoteChars wrap tokens as people quote them in chat.
const quoteChars = "`'\"“”‘’«»()[]"

// queryWords splits q on white space and cleans each word: wrapping
// quotes and backticks, trailing punctuation, thousands separators.
func queryWords(q string) []string {
	var out []string
	for _, f := range strings.Fields(q) {
		for _, part := range splitCommas(f) {
			if w := cleanWord(part); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// splitCommas splits "llama-3-8b,qlora,4090" into words; a number with
// thousands separators (8,192) and a key=value (targets=q,v) stay whole.
func splitCommas(f string) []string {
	core := strings.Trim(f, quoteChars+"?!,;.")
	if !strings.Contains(core, ",") || strings.Contains(core, "=") || thousandsRE.MatchString(core) {
		return []string{f}
	}
	return strings.Split(f, ",")
}

func cleanWord(f string) string {
	for {
		before := f
		f = strings.Trim(f, quoteChars)
		f = strings.TrimRight(f, "?!,;")
		f = strings.TrimLeft(f, ",;")
		if strings.HasSuffix(f, ".") && !strings.HasSuffix(f, "..") && len(f) > 1 {
			f = f[:len(f)-1]
		}
		if f == before {
			break
		}
	}
	if k, v, ok := strings.Cut(f, "="); ok {
		v = strings.Trim(v, quoteChars)
		if thousandsRE.MatchString(v) {
			v = strings.ReplaceAll(v, ",", "")
		}
		return k + "=" + v
	}
	if thousandsRE.MatchString(f) {
		return strings.ReplaceAll(f, ",", "")
	}
	return f
}

// tokenizeQuery turns a query into grammar tokens: the cleaned words with
// the joins described at the top of this file, fillers and vendor words
// dropped, and a leading "vram" (as in "@vrambot vram 7b lora") removed.
func tokenizeQuery(q string) []string {
	t := newTokenizer(queryWords(q))
	for t.i = 0; t.i < len(t.words); t.i++ {
		if !slices.ContainsFunc(tokenRules, func(rule func(*tokenizer) bool) bool { return rule(t) }) {
			t.out = append(t.out, t.words[t.i])
		}
	}
	out := t.out
	if len(out) > 0 {
		if l := strings.ToLower(out[0]); l == "vram" || l == "/vram" {
			out = out[1:]
		}
	}
	return out
}

// tokenizer is a query's words being turned into tokens: words as typed,
// lower their lower case, i the word at hand, out the tokens so far.
type tokenizer struct {
	words, lower, out []string
	i                 int
}

func newTokenizer(words []string) *tokenizer {
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	return &tokenizer{words: words, lower: lower}
}

// at is the lower-case word k after the one at hand ("" past the end);
// raw the word as typed.
func (t *tokenizer) at(k int) string {
	if t.i+k < len(t.words) {
		return t.lower[t.i+k]
	}
	return ""
}

func (t *tokenizer) raw(k int) string {
	if t.i+k < len(t.words) {
		return t.words[t.i+k]
	}
	return ""
}

// emit adds a token for the word at hand and the n after it.
func (t *tokenizer) emit(tok string, n int) bool {
	t.out = append(t.out, tok)
	t.i += n
	return true
}

// tokenRules rewrite the word at hand, in order: the first that applies
// emits its token (or drops the word) and reports true; a word no rule
// takes is a token as it is.
var tokenRules = []func(*tokenizer) bool{
	(*tokenizer).engineFlag, (*tokenizer).detachedEquals, (*tokenizer).fineTune, (*tokenizer).methodCompound,
	(*tokenizer).colonSetting, (*tokenizer).spacedSetting, (*tokenizer).spacedMemory, (*tokenizer).spacedCount,
	(*tokenizer).countedNumber, (*tokenizer).kvCacheDtype, (*tokenizer).filler,
}

// engineFlag joins an engine flag as written on its command line:
// "--max-model-len 8192".
func (t *tokenizer) engineFlag() bool {
	w := t.words[t.i]
	if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && len(strings.TrimLeft(w, "-")) > 0 && t.i+1 < len(t.words) && isFlagValue(t.words[t.i+1]) {
		return t.emit(w+"="+t.raw(1), 1)
	}
	return false
}

// detachedEquals joins "seq = 8192", "seq= 8192" and "seq =8192".
func (t *tokenizer) detachedEquals() bool {
	w := t.words[t.i]
	switch {
	case w == "=" && len(t.out) > 0 && t.i+1 < len(t.words):
		t.out[len(t.out)-1] += "=" + t.raw(1)
		t.i++
		return true
	case strings.HasSuffix(w, "=") && t.i+1 < len(t.words):
		return t.emit(w+t.raw(1), 1)
	case strings.HasPrefix(w, "=") && len(t.out) > 0 && !strings.Contains(t.out[len(t.out)-1], "="):
		t.out[len(t.out)-1] += w
		return true
	}
	return false
}

// fineTune reads "fine tune" and "fine tuning" as one word.
func (t *tokenizer) fineTune() bool {
	if t.lower[t.i] == "fine" && strings.HasPrefix(t.at(1), "tun") {
		return t.emit("finetune", 1)
	}
	return false
}

// methodCompound reads "LoRA-tune" as LoRA.
func (t *tokenizer) methodCompound() bool {
	if m, rest, ok := strings.Cut(t.lower[t.i], "-"); ok && methodNames[m] != "" && looseMethodWords[rest] != "" {
		return t.emit(m, 0)
	}
	return false
}

// colonSetting reads "seq: 8192" and "seq:8192" (but not an Ollama tag
// such as qwen3:8b).
func (t *tokenizer) colonSetting() bool {
	k, v, ok := strings.Cut(t.words[t.i], ":")
	if !ok || !isSettingWord(k) {
		return false
	}
	n := 0
	if v == "" && t.i+1 < len(t.words) {
		v, n = t.raw(1), 1
	}
	if v == "" {
		return false
	}
	return t.emit(k+"="+v, n)
}

// spacedSetting reads "batch size 8", "lora rank 16", "seq 8192", "gc on".
func (t *tokenizer) spacedSetting() bool {
	key, n, ok := settingWordsAt(t.lower, t.i)
	if !ok || t.i+n >= len(t.words) || !plausibleValue(key, t.words[t.i+n]) || onBeforeHardware(t.lower, t.i+n) {
		return false
	}
	return t.emit(key+"="+t.words[t.i+n], n)
}

// spacedMemory reads "24 GB".
func (t *tokenizer) spacedMemory() bool {
	if l := t.lower[t.i]; numberRE.MatchString(l) && memoryUnits[t.at(1)] {
		return t.emit(l+t.at(1), 1)
	}
	return false
}

// spacedCount reads "4 x a100", "4 × a100".
func (t *tokenizer) spacedCount() bool {
	if l := t.lower[t.i]; allDigits(l) && (t.at(1) == "x" || t.at(1) == "×") && t.i+2 < len(t.words) {
		return t.emit(l+"x", 1)
	}
	return false
}

// countedNumber reads "8k context", "16 concurrent users", "8 gpus", "2B
// tokens".
func (t *tokenizer) countedNumber() bool {
	l := t.lower[t.i]
	if !numberRE.MatchString(l) {
		return false
	}
	key, n, ok := countedKeyAt(t.lower, t.i+1)
	if !ok {
		return false
	}
	v, ok := countedValue(key, l)
	if !ok {
		return false
	}
	return t.emit(v, n)
}

// kvCacheDtype reads "fp8 kv cache".
func (t *tokenizer) kvCacheDtype() bool {
	l := t.lower[t.i]
	if !kvEnum.has(l) || t.at(1) != "kv" {
		return false
	}
	n := 1
	if t.at(2) == "cache" {
		n = 2
	}
	return t.emit("kv="+l, n)
}

// filler drops a filler word, and a vendor word before a GPU name.
func (t *tokenizer) filler() bool {
	l := t.lower[t.i]
	return fillerWords[l] || vendorWords[l] && t.i+1 < len(t.words)
}

// isFlagValue reports whether a word can be the value of a preceding
// "--flag": a number, a fraction or a word, not another flag or a key=value.
func isFlagValue(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.Contains(s, "=")
}

// isSettingWord reports whether a bare word names a setting.
func isSettingWord(w string) bool { return canonicalKey(w) != "" }

// settingWordsAt reads a setting's name at words[i]: a wordKeys phrase or
// one key word. It returns the key and how many words it took.
func settingWordsAt(words []string, i int) (string, int, bool) {
	for _, wk := range wordKeys {
		if i+len(wk.words) <= len(words) && wordsAre(words[i:i+len(wk.words)], wk.words) {
			return wk.key, len(wk.words), true
		}
	}
	typed := strings.TrimSuffix(words[i], ":")
	key := canonicalKey(typed)
	if key == "" || !settingByKey[key].spaced(typed) {
		return "", 0, false
	}
	return key, 1, true
}

// wordsAre compares typed words with a phrase, a colon after the last
// word allowed ("batch size: 4").
func wordsAre(typed, phrase []string) bool {
	for i, w := range typed {
		if i == len(typed)-1 {
			w = strings.TrimSuffix(w, ":")
		}
		if w != phrase[i] {
			return false
		}
	}
	return true
}

// countedKeyAt reads the key a number is counting, at words[i]: a counted
// word or the start of a wordKeys phrase ("context length"). It returns the
// key and how many words the number and the key took.
func countedKeyAt(words []string, i int) (string, int, bool) {
	if i >= len(words) {
		return "", 0, false
	}
	for _, wk := range wordKeys {
		if i+len(wk.words) <= len(words) && slices.Equal(words[i:i+len(wk.words)], wk.words) && countedKeys[wk.words[0]] != "" {
			return wk.key, len(wk.words), true
		}
	}
	if key, ok := countedKeys[words[i]]; ok {
		// "16 concurrent users": the adjective and its noun together.
		if key == "users" && i+1 < len(words) && countedKeys[words[i+1]] == "users" && !isUsersNoun(words[i]) {
			return key, 2, true
		}
		if key == "users" && !isUsersNoun(words[i]) {
			return "", 0, false // "8 concurrent" alone is not a count of users
		}
		return key, 1, true
	}
	return "", 0, false
}

func isUsersNoun(w string) bool {
	switch w {
	case "users", "user", "requests", "sessions", "sequences":
		return true
	}
	return false
}

// countedValue is the token for a number before its key, when the number
// fits the key: "8k context" → seq=8k, "2B tokens" → tokens=2B (a job
// size), "4096 tokens" → seq=4096 (a context), "8 gpus" → gpus=8.
func countedValue(key, num string) (string, bool) {
	switch key {
	case "seq":
		if n, err := parseJobTokens(num); err == nil && n >= minJobTokensWord {
			return "tokens=" + num, true
		}
		if _, err := parseSeqLen(num); err == nil {
			return "seq=" + num, true
		}
	case "users", "gpus", "bs":
		if allDigits(num) {
			return key + "=" + num, true
		}
	case "tokens":
		if _, err := parseJobTokens(num); err == nil {
			return "tokens=" + num, true
		}
	}
	return "", false
}

// plausibleValue reports whether v reads as a value of key (its
// domain's), so that "seq 8192" joins and "which gpu fits" does not.
func plausibleValue(key, v string) bool {
	if v == "" || strings.Contains(v, "=") {
		return false
	}
	s, ok := settingByKey[key]
	return ok && s.Value.plausible(v)
}

// wordLike reports whether s has a letter: a name, not a number.
func wordLike(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// budgetWord reads a memory budget token (24gb), for dropping one that
// only repeats the memory of the GPU before it ("rtx 4090 24gb").
func budgetWord(tok string) (int64, bool) {
	l := strings.ToLower(tok)
	if _, size := catalog.ParseSize(l); size {
		return 0, false // "8b" is a model size, not 8 bytes
	}
	b, err := units.Parse(l)
	if err != nil || !wordLike(tok) || allDigits(tok) {
		return 0, false
	}
	return b, true
}

// onBeforeHardware reports whether words[i] is "on" that starts "on a
// 4090" rather than switching a setting on ("gc on").
func onBeforeHardware(words []string, i int) bool {
	if words[i] != "on" || i+1 >= len(words) {
		return false
	}
	next := words[i+1]
	if fillerWords[next] || allDigits(next) || vendorWords[next] {
		return true
	}
	if _, ok := catalog.LookupGPU(next); ok {
		return true
	}
	_, budget := budgetWord(next)
	return budget
}
