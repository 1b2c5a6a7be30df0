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

// Questions (DESIGN.md §3.2: "natural questions are read by keyword
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
	lower := make([]string, len(tokens))
	for i, t := range tokens {
		lower[i] = strings.ToLower(t)
	}
	at := func(i int) string {
		if i < len(lower) {
			return lower[i]
		}
		return ""
	}
	negated := false
	for i := 0; i < len(tokens); i++ {
		l := lower[i]
		switch {
		case l == "without" || l == "no" || l == "w/o":
			negated = true
			continue
		case (l == "gradient" || l == "activation") && at(i+1) == "checkpointing":
			i++
			fallthrough
		case l == "checkpointing":
			out = append(out, "gc="+map[bool]string{true: "off", false: "on"}[negated])
			negated = false
			continue
		case (l == "8-bit" || l == "8bit") && (at(i+1) == "adam" || at(i+1) == "adamw" || at(i+1) == "optimizer"):
			out = append(out, "optim=adamw-8bit")
			i++
			continue
		case l == "paged" && (at(i+1) == "adam" || at(i+1) == "adamw" || at(i+1) == "optimizer"):
			out = append(out, "optim=paged-adamw-8bit")
			i++
			continue
		case l == "half" && at(i+1) == "precision":
			out = append(out, "precision=fp16")
			i++
			continue
		case l == "4-bit" || l == "8-bit" || l == "4bit" || l == "8bit":
			out = append(out, "precision="+strings.ReplaceAll(l, "-", ""))
			continue
		case l == "fp8":
			out = append(out, "precision=fp8") // weights; an fp8 KV cache says "kv cache"
			continue
		case strings.HasPrefix(l, "zero") && len(l) <= 6 && zeroStage(l) != "":
			out = append(out, "zero="+zeroStage(l))
			continue
		case (l == "flash" || l == "flash-attention" || l == "flashattention" || l == "eager") && (at(i+1) == "attention" || at(i+1) == "attn"):
			out = append(out, "attn="+strings.TrimSuffix(strings.TrimSuffix(l, "-attention"), "attention"))
			i++
			continue
		case l == "flash-attention" || l == "flashattention" || l == "flash-attn":
			out = append(out, "attn=flash")
			continue
		case l == "deepspeed":
			out = append(out, "framework=deepspeed")
			continue
		case l == "scratch" || l == "fully" || l == "full-parameter":
			out = append(out, "full") // "train from scratch", "finetune fully"
			continue
		case servingWords[l]:
			serving = true
			continue
		}
		negated = false
		// "two 4090s", "8 h100s", "dual 3090", "two rtx 3090".
		if n, ok := gpuCountWord(l); ok && i+1 < len(tokens) {
			if gpu, words, ok := gpuWords(tokens[i+1:]); ok {
				out = append(out, strconv.Itoa(n)+"x", gpu)
				i += words
				continue
			}
		}
		if gpu, ok := gpuWord(tokens[i]); ok && gpu != tokens[i] {
			out = append(out, gpu) // "4090s"
			continue
		}
		if questionWords[l] {
			continue
		}
		// A context length left alone: "at 8k".
		if strings.HasSuffix(l, "k") && allDigits(strings.TrimSuffix(l, "k")) {
			out = append(out, "seq="+l)
			continue
		}
		out = append(out, tokens[i])
	}
	return out, serving
}

// zeroStage reads "zero3", "zero-2" as a ZeRO stage ("" otherwise).
func zeroStage(l string) string {
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
