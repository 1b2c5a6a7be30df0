package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/units"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/models"

	"github.com/vrambot/vrambot/suggest"
)

// Input limits: a /vram query is a handful of words, so anything longer is a
// paste in the wrong place and gets a clear error instead of work.
const (
	MaxBytes       = 1000
	maxQueryTokens = 40
	// maxTokenShown bounds how much of a bad token an error message echoes.
	maxTokenShown = 40
)

// Value limits are the domain's (advisor/memory): beyond them a value is a
// typo, not a workload, and the grammar refuses it with the limit.
const (
	maxBatch     = memory.MaxBatch
	maxSeq       = memory.MaxSeqLen
	maxGPUs      = memory.MaxGPUs
	maxLoRARank  = memory.MaxLoRARank
	maxJobTokens = memory.MaxJobTokens
	// maxGPULayers is more layers than any model has: llama.cpp's -ngl
	// 999 means every layer.
	maxGPULayers = 1 << 12
)

// Defaults a practitioner would assume when the query does not say.
const (
	defaultSeq    = memory.DefaultSeqLen
	defaultGPUKey = "A100-80GB"
)

// Names of the settings ParseQuery may fill with a default (Query.Defaults).
const (
	DefaultMethod    = "method"
	DefaultGPU       = "gpu"
	DefaultPrecision = "precision"
	DefaultOptim     = "optim"
	DefaultBatch     = "bs"
	DefaultSeq       = "seq"
	DefaultGC        = "gc"
	DefaultAttn      = "attn"
	DefaultKV        = "kv"
	DefaultEngine    = "engine"
	DefaultParallel  = "zero"
)

// Query is a parsed /vram request: the workload as the user described it
// (not yet resolved by memory.Resolve), the GPU to compare against, and what
// was filled in by default. Every default is also an assumption string: in
// Workload.Assumptions, or for the attention kernel and the LoRA rank and
// targets (model-dependent), added by memory.Resolve.
type Query struct {
	Workload memory.Workload
	GPU      catalog.GPU
	// RequestedGPU is the catalog key of the GPU the user named; "" for a
	// memory budget or the default GPU.
	RequestedGPU string
	// Budget is true when the GPU is a synthetic one made from a memory budget ("24gb").
	Budget bool
	// Framework is the stack snippets are written for (engine=vllm or framework=...).
	Framework fix.Framework
	// Defaults lists the settings that were not given (DefaultMethod, ...).
	Defaults []string
	// ReadAs is the query in the grammar's own words, as it was read
	// ("llama-3-8b lora 4090" for "can I finetune llama 3 8b on a 4090?").
	ReadAs string
	// Natural is true when the query was read as a question, by its
	// keywords; Ignored lists the words that reading left out.
	Natural bool
	Ignored []string
	// YesNo is true for a question that asks whether ("can I …?", "does
	// it fit …?"): the reply answers it in its header.
	YesNo bool

	canon canonQuery
}

// QueryError is a bad /vram query. Its message is meant for the user: it
// names the offending token and, where one is close, the valid value meant.
type Error struct {
	Token      string // the offending token as typed (shortened, control characters replaced)
	Reason     string // what is wrong, e.g. "unknown method 'lorra'"
	Suggestion string // the closest valid value, "" when nothing is close
	// unplaced marks a word that is nothing the grammar knows and near
	// nothing it knows: a question may leave such words out.
	unplaced bool
	// namesModel marks a question's error that is about the model it
	// meant ("mistral" is a family): it wins over the grammar's error
	// about the question's first word.
	namesModel bool
}

// BadToken is the token the error is about ("" when none): the Slack form
// shows the error under the field that holds it.
func (e *Error) BadToken() string { return e.Token }

// Error is the one-line message: "unknown method 'lorra' — did you mean 'lora'?".
func (e *Error) Error() string {
	if e.Suggestion != "" {
		return e.Reason + " — did you mean '" + e.Suggestion + "'?"
	}
	return e.Reason
}

// ErrorKind makes a QueryError bad input for the edges (internal/errs).
func (e *Error) ErrorKind() errs.Kind { return errs.Invalid }

func Errorf(token, format string, args ...any) *Error {
	return &Error{Token: token, Reason: fmt.Sprintf(format, args...)}
}

// showToken makes a token safe and short for an error message, which
// quotes it in single quotes (so a quote inside is replaced too).
func ShowToken(s string) string {
	return strings.ReplaceAll(safetext.Show(s, maxTokenShown), "'", string(safetext.Replacement))
}

// methodNames maps what users type to a method; the first spelling of each
// method is the canonical one used for suggestions.
var methodNames = map[string]memory.Method{
	"full": memory.MethodFull, "full-ft": memory.MethodFull, "fullft": memory.MethodFull,
	"pretrain": memory.MethodFull, "pre-train": memory.MethodFull, "pretraining": memory.MethodFull,
	"lora":  memory.MethodLoRA,
	"qlora": memory.MethodQLoRA, "q-lora": memory.MethodQLoRA,
	"dora":      memory.MethodDoRA,
	"freeze":    memory.MethodFreeze,
	"inference": memory.MethodInference, "infer": memory.MethodInference, "serve": memory.MethodInference,
}

// looseMethodWords say that a model is trained or run without saying how
// ("finetune", "serving"). They give way to a method named in the same
// query ("full finetune", "qlora training"); alone, training reads as LoRA
// for an LLM and full fine-tuning for a small model, stated as an
// assumption.
var looseMethodWords = map[string]memory.Method{
	"finetune": memory.MethodLoRA, "fine-tune": memory.MethodLoRA, "finetuning": memory.MethodLoRA, "fine-tuning": memory.MethodLoRA,
	"fine-tuned": memory.MethodLoRA, "finetuned": memory.MethodLoRA, "train": memory.MethodLoRA, "training": memory.MethodLoRA,
	"tune": memory.MethodLoRA, "tuning": memory.MethodLoRA, "sft": memory.MethodLoRA, "ft": memory.MethodLoRA,
	"serving": memory.MethodInference, "run": memory.MethodInference, "running": memory.MethodInference,
	"deploy": memory.MethodInference, "deploying": memory.MethodInference, "host": memory.MethodInference,
	"hosting": memory.MethodInference, "inferencing": memory.MethodInference, "generate": memory.MethodInference,
	"generation": memory.MethodInference, "chat": memory.MethodInference, "load": memory.MethodInference,
}

var methodCanon = []string{"full", "lora", "qlora", "dora", "freeze", "inference"}

// closestWord returns the candidate nearest to s by edit distance, or "" when
// it is not close: more than a third of s (and more than one edit) differs.
func closestWord(s string, candidates []string) string {
	best, d := suggest.Closest(s, candidates)
	if !nearWord(s, d) {
		return ""
	}
	return best
}

func nearWord(s string, d int) bool { return d <= max(1, utf8.RuneCountInString(s)/3) }

// parsedQuery collects what the tokens said before defaults are applied.
type parsedQuery struct {
	model      *catalog.Model
	modelToken string
	// modelID is the Hub id the user named for a catalog model, when it
	// is not the catalog's own repo (userModelID).
	modelID string
	// modelRef is a model token the catalog does not hold that looks like a
	// Hub id or a model name: the resolver looks it up after the tokens
	// are read (query_model.go).
	modelRef string
	// resolved is how the model was found when not by a catalog name or a
	// size: the resolver, or a config.json given with the query.
	resolved  *models.Resolution
	method    memory.Method
	methodTok string
	// loose is a method only implied ("finetune", "serving"), looseTok its word.
	loose    memory.Method
	looseTok string
	gpu      *catalog.GPU
	gpuTok   string
	budget   bool
	gpuCount int               // from "8xa100"
	kv       map[string]string // setting → value as typed
	// sharding is fsdp or ddp when the query says so, shardingTok the word.
	sharding    memory.Sharding
	shardingTok string
	// notes are what the reading itself assumed (a setting without an
	// effect on memory, a budget that repeats the GPU's memory).
	notes []string
	// ignored are the words a question had that the reading did not use.
	ignored []string
	natural bool
}

// ParseQuery reads a /vram query (docs/contracts.md §2): tokens in any order,
// case-insensitive. It fills every missing setting with the default a
// practitioner would assume and records each as an assumption. Models come
// from the catalog or a size only: a model the catalog does not hold is a
// *QueryError (ParseQueryWith asks a resolver). Errors are *QueryError.
func Parse(q string) (Query, error) { return ParseWith(context.Background(), q, nil, nil) }

// ParseQueryWith is ParseQuery with a resolver for models the catalog does
// not hold (a Hub id or a model name; nil: catalog only) and, when preset
// is non-nil, the model given beside the query (a config.json): the query
// then names no model. A failed lookup is the resolver's error (a
// *models.LookupError), any other error a *QueryError.
func ParseWith(ctx context.Context, q string, resolver ModelResolver, preset *models.Resolution) (Query, error) {
	if len(q) > MaxBytes {
		return Query{}, Errorf("", "query too long (%d bytes, at most %d): a /vram query is a model, a method, a GPU and a few key=value settings", len(q), MaxBytes)
	}
	if !utf8.ValidString(q) {
		return Query{}, Errorf("", "query is not valid UTF-8 text")
	}
	tokens := tokenizeQuery(q)
	if len(tokens) > maxQueryTokens {
		return Query{}, Errorf("", "too many words in the query (%d, at most %d)", len(tokens), maxQueryTokens)
	}
	p, err := parseTokens(tokens, preset)
	if err != nil && looksLikeQuestion(q) {
		// A question, not a list of tokens: read it by its keywords
		// (query_natural.go). Its error wins when it found a model or
		// is about the model meant.
		np, nerr := parseQuestion(tokens, preset)
		var qe *Error
		switch {
		case nerr == nil:
			p, err = np, nil
		case np != nil && (np.model != nil || np.modelRef != ""), errors.As(nerr, &qe) && qe.namesModel:
			err = nerr
		}
	}
	if err != nil {
		return Query{}, err
	}
	if err := p.resolveModelRef(ctx, resolver); err != nil {
		return Query{}, err
	}
	out, err := p.query()
	if err != nil {
		return Query{}, err
	}
	out.canon = p.canonical()
	if out.canon.method != "" {
		out.canon.method = string(out.Workload.Method) // lora on nf4 weights is read as qlora
	}
	out.ReadAs = out.canon.String()
	out.Natural, out.Ignored = p.natural, p.ignored
	out.YesNo = p.natural && asksWhether(q)
	return out, nil
}

// parseTokens reads tokens with the grammar; preset, when set, is the
// model given beside the query.
func parseTokens(tokens []string, preset *models.Resolution) (*parsedQuery, error) {
	p := &parsedQuery{kv: map[string]string{}}
	if preset != nil {
		p.model, p.modelToken, p.resolved = &preset.Model, "the config.json given", preset
	}
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		// GPU names of several words: "a100 40gb", "rtx 4090", "rtx 6000 ada".
		if g, n, ok := gpuWindow(tokens, i, 2); ok {
			if err := p.setGPU(g, strings.Join(tokens[i:i+n], " "), false); err != nil {
				return p, err
			}
			i += n - 1
			i += p.skipRepeatedMemory(tokens, i+1, g)
			continue
		}
		// A Mac by its chip in two words: "m3 max".
		if i+1 < len(tokens) {
			if chip, ok := catalog.AppleChip(tok + " " + tokens[i+1]); ok {
				return p, appleChipErr(tok+" "+tokens[i+1], chip)
			}
		}
		// Model names of several words: "llama 3 8b", "qwen 2.5 14b".
		if ref, m, n, ok := modelWindow(tokens, i); ok {
			var err error
			if m != nil {
				err = p.setModel(*m, strings.Join(tokens[i:i+n], " "))
			} else if err = p.secondModel(ref); err == nil {
				p.modelRef = ref
			}
			if err != nil {
				return p, err
			}
			i += n - 1
			continue
		}
		// "8x a100", "8x a100 40gb", "2x 24gb": a GPU count followed by
		// the GPU or a memory budget.
		if n, ok := gpuCountPrefix(tok); ok && i+1 < len(tokens) {
			words, err := p.countedGPU(n, tok, tokens[i+1:])
			if err != nil {
				return p, err
			}
			if words > 0 {
				i += words
				continue
			}
		}
		// "48gb a6000": a memory that only says the GPU's own.
		if i+1 < len(tokens) && p.gpu == nil && repeatsNextGPU(tok, tokens[i+1:]) {
			continue
		}
		if err := p.token(tok); err != nil {
			return p, err
		}
		if p.gpu != nil && p.gpuTok == tok && !p.budget {
			i += p.skipRepeatedMemory(tokens, i+1, *p.gpu)
		}
	}
	return p, nil
}

// maxGPUWords is the longest GPU name in words ("rtx pro 6000 blackwell").
const maxGPUWords = 4

// gpuWindow reads a GPU name of at least minWords words at tokens[i],
// longest first. No word of it holds "=" (a key=value is never a GPU), and
// only its first may be another word of the grammar ("4090 lora" is a GPU
// and a method).
func gpuWindow(tokens []string, i, minWords int) (catalog.GPU, int, bool) {
	for n := min(maxGPUWords, len(tokens)-i); n >= minWords; n-- {
		words := tokens[i : i+n]
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, "=") }) {
			continue
		}
		if n > 1 && !gpuNameWords(words) {
			continue
		}
		if g, ok := catalog.LookupGPU(strings.Join(words, " ")); ok {
			return g, n, true
		}
	}
	return catalog.GPU{}, 0, false
}

// gpuLeadWords start GPU names without being one ("rtx 4090").
var gpuLeadWords = map[string]bool{"rtx": true, "gtx": true, "geforce": true, "tesla": true, "gaudi": true, "quadro": true, "titan": true, "m1": true, "m2": true, "m3": true, "m4": true}

// gpuVariantWords continue GPU names ("h100 nvl", "2080 ti", "m4 max").
var gpuVariantWords = map[string]bool{
	"ti": true, "super": true, "ada": true, "pro": true, "nvl": true, "pcie": true, "sxm": true, "sxm4": true, "sxm5": true,
	"max": true, "ultra": true, "blackwell": true, "generation": true, "server": true, "workstation": true, "edition": true,
	"hbm3": true, "s": true, "rtx": true, "gtx": true, "titan": true, // "titan rtx", "rtx titan", "geforce gtx 1080"
}

// gpuNameWords reports whether words can be one GPU name: it starts with
// a GPU or a word GPU names start with, and goes on with variant words,
// numbers and memory sizes only ("mistral-7b a100" is a model and a GPU).
func gpuNameWords(words []string) bool {
	first := strings.ToLower(words[0])
	if _, ok := catalog.LookupGPU(first); !ok && !gpuLeadWords[first] && !allDigits(first) {
		return false
	}
	for _, w := range words[1:] {
		l := strings.ToLower(w)
		_, gpu := catalog.LookupGPU(l)
		_, mem := budgetWord(l)
		if !gpu && !mem && !allDigits(l) && !gpuVariantWords[l] {
			return false
		}
	}
	return true
}

// repeatsNextGPU reports whether tok is a memory budget equal (within
// 10%) to the memory of the GPU the next tokens name.
func repeatsNextGPU(tok string, next []string) bool {
	b, ok := budgetWord(tok)
	if !ok {
		return false
	}
	g, _, ok := gpuWindow(next, 0, 2)
	if !ok {
		if g, ok = catalog.LookupGPU(next[0]); !ok {
			return false
		}
	}
	return sameMemory(b, g)
}

// sameMemory reports whether a budget is a GPU's marketed memory, to 10%.
func sameMemory(b int64, g catalog.GPU) bool {
	if g.MemoryBytes <= 0 {
		return false
	}
	ratio := float64(b) / float64(g.MemoryBytes)
	return ratio >= 0.9 && ratio <= 1.1
}

// skipRepeatedMemory reports 1 when tokens[i] is a memory budget that
// repeats the GPU's own ("rtx 4090 24gb"), which then is no second GPU.
func (p *parsedQuery) skipRepeatedMemory(tokens []string, i int, g catalog.GPU) int {
	if i >= len(tokens) {
		return 0
	}
	if b, ok := budgetWord(tokens[i]); ok && sameMemory(b, g) {
		return 1
	}
	return 0
}

// countedGPU reads the GPU or budget after a count ("8x" then "a100
// 40gb", or "24gb") and returns the words it took (0: none follows).
func (p *parsedQuery) countedGPU(n int, countTok string, next []string) (int, error) {
	g, words, ok := gpuWindow(next, 0, 1)
	budget := false
	if !ok {
		b, isBudget := parseBudgetGPU(strings.ToLower(next[0]))
		if !isBudget {
			return 0, nil
		}
		g, words, budget = budgetGPU(b), 1, true
	}
	if err := checkGPUCount(countTok, n); err != nil {
		return 0, err
	}
	if err := p.setGPU(g, strings.Join(next[:words], " "), budget); err != nil {
		return 0, err
	}
	p.gpuCount = n
	if !budget {
		words += p.skipRepeatedMemory(next, words, g)
	}
	return words, nil
}

// maxCountDigits bounds the digits of a GPU count read ("8x"): more is
// no count anyone has, refused by checkGPUCount rather than read as a
// model's name.
const maxCountDigits = 12

// gpuCountPrefix reads "8x" (or "8×") as a GPU count, whatever its size:
// checkGPUCount holds it to the limit.
func gpuCountPrefix(tok string) (int, bool) {
	l := strings.ToLower(tok)
	num, ok := strings.CutSuffix(l, "x")
	if !ok {
		num, ok = strings.CutSuffix(l, "×")
	}
	if !ok || !allDigits(num) || len(num) > maxCountDigits {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, false
	}
	return n, true
}

// checkGPUCount refuses a count of no GPU or of more than the grammar's
// limit ("1000000x h100").
func checkGPUCount(tok string, n int) error {
	if n < 1 || n > maxGPUs {
		return Errorf(tok, "'%s' is %d GPUs: a count is 1 to %d", ShowToken(tok), n, maxGPUs)
	}
	return nil
}

func (p *parsedQuery) setGPU(g catalog.GPU, tok string, budget bool) error {
	if p.gpu != nil {
		return Errorf(tok, "two GPUs given: '%s' and '%s' (give one GPU name or one memory budget)", ShowToken(p.gpuTok), ShowToken(tok))
	}
	p.gpu, p.gpuTok, p.budget = &g, tok, budget
	return nil
}

func (p *parsedQuery) setModel(m catalog.Model, tok string) error {
	if err := p.secondModel(tok); err != nil {
		return err
	}
	p.model, p.modelToken = &m, tok
	p.modelID = userModelID(m, tok)
	return nil
}

// userModelID is the Hub id the user named for a catalog model (its own
// repo, or a fine-tune, a distillation, a re-packaging of it:
// meta-llama/Llama-3.1-8B-Instruct for llama-3.1-8b), else "". The answer
// names that repo in its header and every command it writes.
func userModelID(m catalog.Model, tok string) string {
	ref := models.RepoRef(modelSpelling(tok))
	if !strings.Contains(ref, "/") || !hub.ValidRepoID(ref) {
		return ""
	}
	if strings.EqualFold(ref, m.HFID) {
		return m.HFID
	}
	return ref
}

// secondModel refuses tok when the query already has a model.
func (p *parsedQuery) secondModel(tok string) error {
	first := p.modelToken
	if p.modelRef != "" {
		first = p.modelRef
	}
	if p.model != nil || p.modelRef != "" {
		return Errorf(tok, "two models given: '%s' and '%s'", ShowToken(first), ShowToken(tok))
	}
	return nil
}

// token classifies one bare word or key=value.
func (p *parsedQuery) token(tok string) error {
	if k, v, ok := strings.Cut(tok, "="); ok {
		return p.keyValue(tok, k, v)
	}
	l := strings.ToLower(tok)
	if m, ok := methodNames[l]; ok {
		if p.method != "" {
			return Errorf(tok, "two methods given: '%s' and '%s'", ShowToken(p.methodTok), ShowToken(tok))
		}
		p.method, p.methodTok = m, tok
		return nil
	}
	if m, ok := looseMethodWords[l]; ok {
		// Training outweighs running ("run a finetune").
		if p.loose == "" || p.loose == memory.MethodInference && m != memory.MethodInference {
			p.loose, p.looseTok = m, tok
		}
		return nil
	}
	if g, ok := catalog.LookupGPU(tok); ok {
		return p.setGPU(g, tok, false)
	}
	if n, ok := parseBudgetGPU(l); ok {
		return p.setGPU(budgetGPU(n), tok, true)
	}
	if m, ok := catalog.LookupModel(modelSpelling(tok)); ok {
		return p.setModel(m, tok)
	}
	if n, ok := catalog.ParseSize(l); ok {
		return p.setModel(catalog.ModelForSize(n), tok)
	}
	if rest, ok := cutGPUCount(l); ok {
		g, isGPU := catalog.LookupGPU(rest.gpu)
		b, isBudget := parseBudgetGPU(rest.gpu)
		if isGPU || isBudget {
			if err := checkGPUCount(tok, rest.n); err != nil {
				return err
			}
			if isBudget {
				g = budgetGPU(b)
			}
			if err := p.setGPU(g, tok, !isGPU); err != nil {
				return err
			}
			p.gpuCount = rest.n
			return nil
		}
	}
	norm := strings.ReplaceAll(l, "_", "-")
	if s, ok := bareSetting(norm); ok {
		return p.keyValue(tok, s.Key, tok)
	}
	if chip, ok := catalog.AppleChip(tok); ok {
		return appleChipErr(tok, chip)
	}
	if err := nearOtherWord(tok); err != nil {
		return err
	}
	if looksLikeModel(tok) && !gpuTypo(tok) {
		if err := p.secondModel(tok); err != nil {
			return err
		}
		p.modelRef = tok
		return nil
	}
	return unknownQueryWord(tok)
}

type countedGPU struct {
	n   int
	gpu string
}

// cutGPUCount reads "8xa100" as 8 × "a100".
func cutGPUCount(l string) (countedGPU, bool) {
	i := strings.IndexAny(l, "x×")
	if i <= 0 {
		return countedGPU{}, false
	}
	sep := "x"
	if strings.HasPrefix(l[i:], "×") {
		sep = "×"
	}
	n, ok := gpuCountPrefix(l[:i] + "x")
	if !ok || len(l) == i+len(sep) {
		return countedGPU{}, false
	}
	return countedGPU{n: n, gpu: l[i+len(sep):]}, true
}

// nearName applies this package's "close enough" rule to a catalog
// suggestion, comparing names without case, spaces, dashes, underscores and
// an organisation prefix ("0" is not close to "l4").
func NearName(tok, sug string) bool {
	squash := strings.NewReplacer(" ", "", "-", "", "_", "")
	t := strings.ToLower(tok)
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	t, u := squash.Replace(t), squash.Replace(strings.ToLower(sug))
	return nearWord(t, suggest.Distance(t, u))
}

// nearOtherWord is the error for a word that is a setting's value without
// its key or a typo of a method, or nil: these come before reading a word
// as a model name.
func nearOtherWord(tok string) error {
	l := strings.ToLower(tok)
	if _, sug, ok := keyedSetting(normWord(l)); ok {
		return &Error{Token: tok, Reason: fmt.Sprintf("'%s' needs its setting name", ShowToken(tok)), Suggestion: sug}
	}
	methodSug, methodD := suggest.Closest(l, methodCanon)
	if methodSug != "" && nearWord(l, methodD) {
		return &Error{Token: tok, Reason: fmt.Sprintf("unknown method '%s'", ShowToken(tok)), Suggestion: methodSug}
	}
	return nil
}

// appleChipErr asks for the budget of a Mac named by its chip: the chip
// does not say how much memory the Mac has, and its GPU uses a share of it
// (catalog.AppleGPUShare).
func appleChipErr(tok, chip string) *Error {
	budget := func(gb float64) string { return strconv.Itoa(int(math.Round(gb*catalog.AppleGPUShare))) + "gb" }
	return Errorf(tok, "'%s' is an %s: its GPU shares the Mac's memory and may use about %d%% of it, so give that as a budget — %s on a 64 GB Mac, %s on a 128 GB one",
		ShowToken(tok), chip, int(math.Round(catalog.AppleGPUShare*100)), budget(64), budget(128))
}

// unknownQueryWord explains a word that is none of model, method, GPU or budget,
// suggesting the closest valid word of whichever kind is nearest.
func unknownQueryWord(tok string) error {
	if err := nearOtherWord(tok); err != nil {
		return err
	}
	if family := catalog.FamilyModels(tok); len(family) > 0 {
		return Errorf(tok, "unknown model '%s' — which one? %s", ShowToken(tok), strings.Join(family, ", "))
	}
	l := strings.ToLower(tok)
	type cand struct{ kind, sug string }
	var cands []cand
	if s := catalog.SuggestGPU(tok); s != "" && NearName(tok, s) {
		cands = append(cands, cand{"GPU", s})
	}
	if s := catalog.SuggestModel(tok); s != "" && NearName(tok, s) {
		cands = append(cands, cand{"model", s})
	}
	if len(cands) > 0 {
		best := cands[0]
		if len(cands) == 2 && suggest.Distance(l, cands[1].sug) < suggest.Distance(l, best.sug) {
			best = cands[1]
		}
		return &Error{Token: tok, Reason: fmt.Sprintf("unknown %s '%s'", best.kind, ShowToken(tok)), Suggestion: best.sug}
	}
	err := Errorf(tok, "unknown word '%s': expected a model (llama-2-7b, 7b), a method (%s), a GPU (a100, 4090) or budget (24gb), or key=value", ShowToken(tok), strings.Join(methodCanon, ", "))
	err.unplaced = true
	return err
}

// Budget bounds: below 1 GiB or above 16 TiB is not a GPU.
const (
	minBudgetBytes = units.GiB
	maxBudgetBytes = 16 * units.TiB
)

// parseBudgetGPU reads a memory budget such as "24gb", "80GiB", "48g"
// (advisor/units: GPU tools label GiB as GB, so GB is GiB). A bare number is
// not a budget: "48" could be anything.
func parseBudgetGPU(l string) (int64, bool) {
	if len(l) > 16 {
		return 0, false
	}
	b, err := units.Parse(l)
	if err != nil || b < minBudgetBytes || b > maxBudgetBytes || strings.ContainsAny(l, " \t") {
		return 0, false
	}
	return b, true
}

// budgetGPU is a synthetic GPU with the given usable memory. It is assumed
// to be a current card: bf16 yes, fp8 no (the conservative middle).
func budgetGPU(n int64) catalog.GPU {
	return catalog.GPU{
		Name:        budgetGiB(n) + " budget",
		MemoryBytes: n,
		UsableBytes: n,
		BF16:        true,
		Source:      "memory budget from the query",
	}
}

// budgetGiB writes bytes as "24 GiB" or "23.5 GiB".
func budgetGiB(n int64) string {
	return strconv.FormatFloat(math.Round(float64(n)/(1<<30)*10)/10, 'f', -1, 64) + " GiB"
}
