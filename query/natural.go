package query

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/models"
)

// Questions (docs/contracts.md §2: "natural questions are read by keyword
// extraction"): "can I finetune llama 3 8b on a 4090?", "how much vram for
// llama 3 70b inference?", "how many concurrent users can llama-3.1-8b
// serve on h100 at 8k context". A query that the grammar refuses and that
// reads as a sentence is read again by its keywords: question words are
// dropped, phrases become settings ("two 4090s" → 2x 4090, "with gradient
// checkpointing" → gc=on, "how many users" → a serving engine's
// concurrency), and words that are nothing the grammar knows are left out
// and listed. The reply shows the reading as a query ("read as:
// llama-3-8b lora 4090"), so nothing is guessed silently.

// questionWords make a query a sentence; they carry no setting.
var questionWords = map[string]bool{
	"can": true, "could": true, "i": true, "we": true, "you": true, "me": true, "my": true, "our": true, "your": true,
	"how": true, "much": true, "many": true, "what": true, "what's": true, "whats": true, "which": true, "will": true,
	"would": true, "should": true, "is": true, "are": true, "am": true, "be": true, "do": true, "does": true, "did": true,
	"need": true, "needs": true, "needed": true, "require": true, "requires": true, "required": true, "want": true,
	"it": true, "its": true, "it's": true, "there": true, "enough": true, "possible": true, "fit": true, "fits": true,
	"vram": true, "memory": true, "ram": true, "card": true, "machine": true, "box": true, "rig": true,
	"please": true, "tell": true, "estimate": true, "calculate": true, "check": true, "get": true, "have": true,
	"has": true, "if": true, "or": true, "but": true, "so": true, "just": true, "model": true, "llm": true,
	"about": true, "roughly": true, "around": true, "approximately": true, "up": true, "i'm": true, "im": true,
	"go": true, "able": true, "take": true, "takes": true, "use": true, "uses": true, "into": true, "this": true,
	"that": true, "than": true, "more": true, "less": true, "without": true, "no": true, "single": true, "one": true,
	"hi": true, "hey": true, "hello": true, "whether": true, "from": true, "locally": true, "handle": true,
	"big": true, "batch": true, "size": true, "cache": true, "gpu": true, "gpus": true, "local": true,
	"work": true, "works": true, "ok": true, "okay": true, "fine": true, "good": true, "best": true, "cheapest": true,
}

// countWords are GPU counts written as words ("two 4090s", "dual 3090").
var countWords = map[string]int{
	"one": 1, "single": 1, "two": 2, "dual": 2, "pair": 2, "twin": 2, "three": 3, "four": 4, "quad": 4,
	"six": 6, "eight": 8, "sixteen": 16,
}

// servingWords ask how many requests a deployment holds: the answer is a
// serving engine's concurrency.
var servingWords = map[string]bool{
	"users": true, "user": true, "concurrent": true, "concurrency": true, "requests": true, "simultaneous": true,
	"throughput": true, "qps": true, "rps": true,
	// Serving a model is a serving engine's question too.
	"serve": true, "serving": true, "served": true,
}

// looksLikeQuestion reports whether q reads as a sentence rather than a
// list of tokens: a question mark, a question word or a filler word.
func looksLikeQuestion(q string) bool {
	if strings.Contains(q, "?") {
		return true
	}
	for _, w := range strings.Fields(strings.ToLower(q)) {
		w = cleanWord(w)
		if questionWords[w] || fillerWords[w] || servingWords[w] {
			return true
		}
	}
	return false
}

// whetherWords start a question that asks whether ("can I …", "will it
// fit …", "is an A100 enough …"); fitWords ask it anywhere.
var (
	whetherWords = map[string]bool{
		"can": true, "could": true, "will": true, "would": true, "does": true, "do": true, "did": true, "is": true,
		"are": true, "should": true, "may": true, "might": true, "am": true, "shall": true,
	}
	fitWords     = map[string]bool{"fit": true, "fits": true, "enough": true, "possible": true}
	openingWords = map[string]bool{"hi": true, "hey": true, "hello": true, "so": true, "ok": true, "okay": true, "quick": true, "question": true}
)

// asksWhether reports whether a question asks whether the workload fits
// (a yes or no), not how much it needs.
func asksWhether(q string) bool {
	words := strings.Fields(strings.ToLower(q))
	first := true
	for _, w := range words {
		w = cleanWord(w)
		if fitWords[w] {
			return true
		}
		if first && openingWords[w] {
			continue
		}
		if first && whetherWords[w] {
			return true
		}
		first = false
	}
	return false
}

// maxQuestionRetries bounds how many unplaced words a question may drop
// (every token once at most).
const maxQuestionRetries = maxQueryTokens

// parseQuestion reads tokens as a question: rewritten by keywords, then
// parsed by the grammar, leaving out each word the grammar cannot place.
// The parsed query is returned with its error so that the caller can
// tell whether it found a model.
func parseQuestion(tokens []string, preset *models.Resolution) (*parsedQuery, error) {
	rewritten, serving := questionTokens(tokens)
	var ignored []string
	for range maxQuestionRetries {
		p, err := parseTokens(rewritten, preset)
		var qe *Error
		// A word the grammar cannot place is left out; so is a word of
		// prose the grammar finds near a name ("minimum" ~ minimax): in a
		// sentence, only a word with a digit or a dash is a model's name.
		if err != nil && errors.As(err, &qe) && qe.Token != "" && (qe.unplaced || proseWord(qe.Token)) {
			if i := indexFold(rewritten, qe.Token); i >= 0 {
				// The word, and every repeat of it, is left out.
				word := rewritten[i]
				ignored = append(ignored, word)
				rewritten = slices.DeleteFunc(slices.Clone(rewritten), func(w string) bool { return strings.EqualFold(w, word) })
				continue
			}
		}
		if err != nil {
			return p, err
		}
		if p.model == nil && p.modelRef == "" {
			e := Errorf("", "no model in the question: name one (llama-3-8b, Qwen/Qwen3-8B) or its size (8b)")
			for _, w := range ignored {
				if family := catalog.FamilyModels(w); len(family) > 0 {
					e.Token, e.namesModel = w, true
					e.Reason = "no model in the question: '" + ShowToken(w) + "' is a family — which one? " + strings.Join(family, ", ")
					break
				}
				if sug := catalog.SuggestModel(w); sug != "" && NearName(w, sug) {
					e.Token, e.Suggestion, e.namesModel = w, sug, true
					e.Reason = "no model in the question: '" + ShowToken(w) + "' is no model I know"
					break
				}
			}
			return p, e
		}
		// A question about training that also says serve or users ("qlora
		// it on a 4090 to serve a chatbot") is a training question.
		training := p.method != "" && p.method != memory.MethodInference || p.loose != "" && p.loose != memory.MethodInference
		if serving && !training && p.kv["engine"] == "" && !p.servingEngineAsked() {
			p.kv["engine"] = "vllm" // concurrency is a serving engine's answer
		}
		if serving && p.method == "" && p.loose == "" {
			p.loose, p.looseTok = methodNames["inference"], "serve"
		}
		p.natural, p.ignored = true, ignored
		return p, nil
	}
	return nil, Errorf("", "could not read the question")
}

func indexFold(list []string, s string) int {
	for i, w := range list {
		if strings.EqualFold(w, s) || ShowToken(w) == s {
			return i
		}
	}
	return -1
}

// questionTokens rewrites a question's tokens by their keywords and
// reports whether it asks how many requests a deployment serves.
func questionTokens(tokens []string) (out []string, serving bool) {
	q := &question{tokenizer: newTokenizer(tokens)}
	for q.i = 0; q.i < len(q.words); q.i++ {
		if q.phrase() {
			continue
		}
		q.negated = false
		if !slices.ContainsFunc(questionRules, func(rule func(*question) bool) bool { return rule(q) }) {
			q.out = append(q.out, q.words[q.i])
		}
	}
	return q.out, q.serving
}

// question is a question's tokens being read by their keywords: a
// tokenizer, whether "without" came before, whether it asks about serving.
type question struct {
	*tokenizer
	negated, serving bool
}

// phrases are the keyword phrases of a question that become one setting
// ("with gradient checkpointing" → gc=on, "8-bit adam" → optim=adamw-8bit);
// each takes the words it reads.
func (q *question) phrase() bool {
	l, next := q.lower[q.i], q.at(1)
	switch {
	case l == "without" || l == "no" || l == "w/o":
		q.negated = true
		return true
	case (l == "gradient" || l == "activation") && next == "checkpointing":
		q.i++
		fallthrough
	case l == "checkpointing":
		q.out = append(q.out, "gc="+map[bool]string{true: "off", false: "on"}[q.negated])
		q.negated = false
		return true
	case (l == "8-bit" || l == "8bit") && adamWords[next]:
		return q.emit("optim=adamw-8bit", 1)
	case l == "paged" && adamWords[next]:
		return q.emit("optim=paged-adamw-8bit", 1)
	case l == "half" && next == "precision":
		return q.emit("precision=fp16", 1)
	case l == "4-bit" || l == "8-bit" || l == "4bit" || l == "8bit":
		return q.emit("precision="+strings.ReplaceAll(l, "-", ""), 0)
	case l == "fp8":
		return q.emit("precision=fp8", 0) // weights; an fp8 KV cache says "kv cache"
	case strings.HasPrefix(l, "zero") && len(l) <= 6 && zeroWord(l) != "":
		return q.emit("zero="+zeroWord(l), 0)
	case (l == "flash" || l == "flash-attention" || l == "flashattention" || l == "eager") && (next == "attention" || next == "attn"):
		return q.emit("attn="+strings.TrimSuffix(strings.TrimSuffix(l, "-attention"), "attention"), 1)
	case l == "flash-attention" || l == "flashattention" || l == "flash-attn":
		return q.emit("attn=flash", 0)
	case l == "deepspeed":
		return q.emit("framework=deepspeed", 0)
	case l == "scratch" || l == "fully" || l == "full-parameter":
		return q.emit("full", 0) // "train from scratch", "finetune fully"
	case servingWords[l]:
		q.serving = true
		return true
	}
	return false
}

// adamWords name the optimizer after "8-bit" or "paged".
var adamWords = map[string]bool{"adam": true, "adamw": true, "optimizer": true}

// questionRules read the other words of a question, in order: the first
// that applies emits its tokens (or drops the word); a word none takes is
// kept.
var questionRules = []func(*question) bool{(*question).gpuCount, (*question).pluralGPU, (*question).questionWord, (*question).bareContext}

// gpuCount reads "two 4090s", "8 h100s", "dual 3090", "two rtx 3090".
func (q *question) gpuCount() bool {
	n, ok := gpuCountWord(q.lower[q.i])
	if !ok || q.i+1 >= len(q.words) {
		return false
	}
	gpu, words, ok := gpuWords(q.words[q.i+1:])
	if !ok {
		return false
	}
	q.out = append(q.out, strconv.Itoa(n)+"x", gpu)
	q.i += words
	return true
}

// pluralGPU reads "4090s" as a GPU.
func (q *question) pluralGPU() bool {
	if gpu, ok := gpuWord(q.words[q.i]); ok && gpu != q.words[q.i] {
		return q.emit(gpu, 0)
	}
	return false
}

// questionWord drops a word that only makes the query a sentence.
func (q *question) questionWord() bool { return questionWords[q.lower[q.i]] }

// bareContext reads a context length left alone: "at 8k".
func (q *question) bareContext() bool {
	if l := q.lower[q.i]; strings.HasSuffix(l, "k") && allDigits(strings.TrimSuffix(l, "k")) {
		return q.emit("seq="+l, 0)
	}
	return false
}

// zeroWord reads "zero3", "zero-2" as a ZeRO stage ("" otherwise).
func zeroWord(l string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(l, "zero"), "-")
	if len(s) == 1 && s[0] >= '0' && s[0] <= '3' {
		return s
	}
	return ""
}

// gpuCountWord reads a GPU count: a number or a count word.
func gpuCountWord(l string) (int, bool) {
	if n, ok := countWords[l]; ok {
		return n, true
	}
	if allDigits(l) && len(l) <= 3 {
		n, _ := strconv.Atoi(l)
		return n, n >= 1 && n <= maxGPUs
	}
	return 0, false
}

// gpuWord returns the GPU a word names, as a token: itself, or without a
// plural s ("4090s", "H100s").
func gpuWord(w string) (string, bool) {
	if _, ok := catalog.LookupGPU(w); ok && !strings.Contains(w, "=") {
		return w, true
	}
	if trimmed, ok := strings.CutSuffix(w, "s"); ok {
		if _, ok := catalog.LookupGPU(trimmed); ok && wordLike(trimmed) || ok && allDigits(trimmed) {
			return trimmed, true
		}
	}
	return "", false
}

// gpuWords reads a GPU named by the first words of tokens (up to
// maxGPUWords, the last possibly plural: "rtx 3090s") and returns it as
// one token and the words it took.
func gpuWords(tokens []string) (string, int, bool) {
	for n := min(maxGPUWords, len(tokens)); n >= 1; n-- {
		words := slices.Clone(tokens[:n])
		if last, ok := gpuWord(words[n-1]); ok || n > 1 {
			if ok {
				words[n-1] = last
			}
			if n > 1 && !gpuNameWords(words) {
				continue
			}
			joined := strings.Join(words, " ")
			if _, ok := catalog.LookupGPU(joined); ok {
				return strings.ReplaceAll(joined, " ", "-"), n, true
			}
		}
	}
	return "", 0, false
}

// proseWord reports a word of letters only (apostrophes allowed).
func proseWord(w string) bool {
	return w != "" && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '’' }) < 0
}
