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

// wordKeys are settings written as words ("batch size 8", "8k context
// length", "lora rank 16"), longest first: each maps to its key.
var wordKeys = []struct {
	words []string
	key   string
}{
	{[]string{"max", "sequence", "length"}, "seq"}, {[]string{"max", "seq", "length"}, "seq"},
	{[]string{"max", "seq", "len"}, "seq"}, {[]string{"max", "model", "len"}, "seq"},
	{[]string{"max", "model", "length"}, "seq"}, {[]string{"micro", "batch", "size"}, "bs"},
	{[]string{"gpu", "memory", "utilization"}, "gpu-util"}, {[]string{"context", "window", "size"}, "seq"},
	{[]string{"batch", "size"}, "bs"}, {[]string{"micro", "batch"}, "bs"}, {[]string{"batch", "of"}, "bs"},
	{[]string{"seq", "len"}, "seq"}, {[]string{"seq", "length"}, "seq"}, {[]string{"sequence", "length"}, "seq"},
	{[]string{"sequence", "len"}, "seq"}, {[]string{"context", "length"}, "seq"}, {[]string{"context", "len"}, "seq"},
	{[]string{"context", "window"}, "seq"}, {[]string{"max", "context"}, "seq"}, {[]string{"lora", "rank"}, "rank"},
	{[]string{"kv", "cache"}, "kv"}, {[]string{"tensor", "parallel"}, "tp"}, {[]string{"pipeline", "parallel"}, "pp"},
	{[]string{"zero", "stage"}, "zero"}, {[]string{"deepspeed", "zero"}, "zero"}, {[]string{"concurrent", "users"}, "users"},
	{[]string{"concurrent", "requests"}, "users"}, {[]string{"simultaneous", "users"}, "users"},
	{[]string{"parallel", "requests"}, "users"}, {[]string{"job", "size"}, "tokens"},
}

// countedKeys are the keys a number may come before ("8k context", "16
// users", "8 gpus", "2B tokens"): the word (or the start of a wordKeys
// entry) → key.
var countedKeys = map[string]string{
	"context": "seq", "ctx": "seq", "token": "seq", "tokens": "seq",
	"users": "users", "user": "users", "requests": "users", "sessions": "users", "sequences": "users",
	"concurrent": "users", "simultaneous": "users", "parallel": "users",
	"gpus": "gpus", "gpu": "gpus", "cards": "gpus", "devices": "gpus",
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
	words := queryWords(q)
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	var out []string
	for i := 0; i < len(words); i++ {
		w, l := words[i], lower[i]
		at := func(k int) string {
			if i+k < len(words) {
				return lower[i+k]
			}
			return ""
		}
		raw := func(k int) string {
			if i+k < len(words) {
				return words[i+k]
			}
			return ""
		}
		switch {
		case strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && len(strings.TrimLeft(w, "-")) > 0 && i+1 < len(words) && isFlagValue(words[i+1]):
			// An engine flag as written on its command line: "--max-model-len 8192".
			out = append(out, w+"="+raw(1))
			i++
			continue
		case w == "=" && len(out) > 0 && i+1 < len(words):
			out[len(out)-1] += "=" + raw(1)
			i++
			continue
		case strings.HasSuffix(w, "=") && i+1 < len(words):
			out = append(out, w+raw(1))
			i++
			continue
		case strings.HasPrefix(w, "=") && len(out) > 0 && !strings.Contains(out[len(out)-1], "="):
			out[len(out)-1] += w
			continue
		}
		// "fine tune" and "fine-tuning" are one word; "LoRA-tune" is LoRA.
		if l == "fine" && strings.HasPrefix(at(1), "tun") {
			out = append(out, "finetune")
			i++
			continue
		}
		if m, rest, ok := strings.Cut(l, "-"); ok && methodNames[m] != "" && looseMethodWords[rest] != "" {
			out = append(out, m)
			continue
		}
		// "seq: 8192" and "seq:8192" (but not an Ollama tag such as qwen3:8b).
		if k, v, ok := strings.Cut(w, ":"); ok && isSettingWord(k) {
			if v == "" && i+1 < len(words) {
				v = raw(1)
				i++
			}
			if v != "" {
				out = append(out, k+"="+v)
				continue
			}
		}
		// "batch size 8", "lora rank 16", "seq 8192", "gc on".
		if key, n, ok := settingWordsAt(lower, i); ok && i+n < len(words) && plausibleValue(key, words[i+n]) && !onBeforeHardware(lower, i+n) {
			out = append(out, key+"="+words[i+n])
			i += n
			continue
		}
		// "24 GB".
		if numberRE.MatchString(l) && memoryUnits[at(1)] {
			out = append(out, l+at(1))
			i++
			continue
		}
		// "4 x a100", "4 × a100".
		if allDigits(l) && (at(1) == "x" || at(1) == "×") && i+2 < len(words) {
			out = append(out, l+"x")
			i++
			continue
		}
		// "8k context", "16 concurrent users", "8 gpus", "2B tokens".
		if numberRE.MatchString(l) {
			if key, n, ok := countedKeyAt(lower, i+1); ok {
				if v, ok := countedValue(key, l); ok {
					out = append(out, v)
					i += n
					continue
				}
			}
		}
		// "fp8 kv cache".
		if _, ok := kvEnum.values[strings.ReplaceAll(l, "_", "-")]; ok && at(1) == "kv" {
			out = append(out, "kv="+l)
			i++
			if at(1) == "cache" {
				i++
			}
			continue
		}
		if fillerWords[l] {
			continue
		}
		if vendorWords[l] && i+1 < len(words) {
			continue
		}
		out = append(out, w)
	}
	if len(out) > 0 {
		if l := strings.ToLower(out[0]); l == "vram" || l == "/vram" {
			out = out[1:]
		}
	}
	return out
}

// isFlagValue reports whether a word can be the value of a preceding
// "--flag": a number, a fraction or a word, not another flag or a key=value.
func isFlagValue(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.Contains(s, "=")
}

// canonicalKey is the grammar key a typed key names (an alias, a flag
// with its dashes, a TrainingArguments name), or "".
func canonicalKey(k string) string {
	key := strings.TrimLeft(strings.ReplaceAll(strings.ToLower(k), "_", "-"), "-")
	if a, ok := keyAliases[key]; ok {
		return a
	}
	if slices.Contains(queryKeys, key) {
		return key
	}
	return ""
}

// isSettingWord reports whether a bare word names a setting.
func isSettingWord(w string) bool { return canonicalKey(w) != "" }

// spacedKeys are the keys whose value may follow after a space ("bs 4"):
// every key except those whose word is common in prose ("model", "gpu",
// "version", "c", "r", "context" alone reads better through countedKeys).
func spacedKey(key, typed string) bool {
	switch key {
	case "", "model", "method", "engine-version":
		return false
	}
	switch strings.ToLower(typed) {
	case "c", "r", "gpu", "version", "dtype":
		return false
	}
	return true
}

// settingWordsAt reads a setting's name at words[i]: a wordKeys phrase or
// one key word. It returns the key and how many words it took.
func settingWordsAt(words []string, i int) (string, int, bool) {
	for _, wk := range wordKeys {
		if i+len(wk.words) <= len(words) && wordsAre(words[i:i+len(wk.words)], wk.words) {
			return wk.key, len(wk.words), true
		}
	}
	key := canonicalKey(strings.TrimSuffix(words[i], ":"))
	if !spacedKey(key, words[i]) {
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

// plausibleValue reports whether v reads as a value of key, so that "seq
// 8192" joins and "which gpu fits" does not.
func plausibleValue(key, v string) bool {
	if v == "" || strings.Contains(v, "=") {
		return false
	}
	switch key {
	case "bs", "gpus", "tp", "pp", "rank", "users", "max-num-seqs", "max-num-batched-tokens", "ga":
		return allDigits(v)
	case "zero":
		return len(v) == 1 && v[0] >= '0' && v[0] <= '3'
	case "seq":
		_, err := parseSeqLen(v)
		return err == nil
	case "tokens":
		_, err := parseJobTokens(v)
		return err == nil
	case "gpu-util":
		_, err := parseFraction(key, v)
		return err == nil
	}
	for _, e := range keyEnums() {
		if e.key == key {
			_, ok := e.enum.values[strings.ReplaceAll(strings.ToLower(v), "_", "-")]
			return ok
		}
	}
	return false
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
