package commands

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/units"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/models"

	"github.com/vrambot/vrambot/suggest"
)

// Input limits: a /vram query is a handful of words, so anything longer is a
// paste in the wrong place and gets a clear error instead of work.
const (
	maxQueryBytes  = 1000
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
}

// QueryError is a bad /vram query. Its message is meant for the user: it
// names the offending token and, where one is close, the valid value meant.
type QueryError struct {
	Token      string // the offending token as typed (shortened, control characters replaced)
	Reason     string // what is wrong, e.g. "unknown method 'lorra'"
	Suggestion string // the closest valid value, "" when nothing is close
}

// Error is the one-line message: "unknown method 'lorra' — did you mean 'lora'?".
func (e *QueryError) Error() string {
	if e.Suggestion != "" {
		return e.Reason + " — did you mean '" + e.Suggestion + "'?"
	}
	return e.Reason
}

// ErrorKind makes a QueryError bad input for the edges (internal/errs).
func (e *QueryError) ErrorKind() errs.Kind { return errs.Invalid }

func queryErr(token, format string, args ...any) *QueryError {
	return &QueryError{Token: token, Reason: fmt.Sprintf(format, args...)}
}

// showToken makes a token safe and short for an error message, which
// quotes it in single quotes (so a quote inside is replaced too).
func showToken(s string) string {
	return strings.ReplaceAll(safetext.Show(s, maxTokenShown), "'", string(safetext.Replacement))
}

// methodNames maps what users type to a method; the first spelling of each
// method is the canonical one used for suggestions.
var methodNames = map[string]memory.Method{
	"full": memory.MethodFull, "full-ft": memory.MethodFull, "fullft": memory.MethodFull, "finetune": memory.MethodFull, "fine-tune": memory.MethodFull,
	"lora":      memory.MethodLoRA,
	"qlora":     memory.MethodQLoRA,
	"dora":      memory.MethodDoRA,
	"freeze":    memory.MethodFreeze,
	"inference": memory.MethodInference, "infer": memory.MethodInference, "serve": memory.MethodInference,
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
	// modelRef is a model token the catalog does not hold that looks like a
	// Hub id or a model name: the resolver looks it up after the tokens
	// are read (query_model.go).
	modelRef string
	// resolved is how the model was found when not by a catalog name or a
	// size: the resolver, or a config.json given with the query.
	resolved  *models.Resolution
	method    memory.Method
	methodTok string
	gpu       *catalog.GPU
	gpuTok    string
	budget    bool
	gpuCount  int               // from "8xa100"
	kv        map[string]string // setting → value as typed
	// sharding is fsdp or ddp when the query says so, shardingTok the word.
	sharding    memory.Sharding
	shardingTok string
}

// ParseQuery reads a /vram query (DESIGN.md §3.2): tokens in any order,
// case-insensitive. It fills every missing setting with the default a
// practitioner would assume and records each as an assumption. Models come
// from the catalog or a size only: a model the catalog does not hold is a
// *QueryError (ParseQueryWith asks a resolver). Errors are *QueryError.
func ParseQuery(q string) (Query, error) { return ParseQueryWith(context.Background(), q, nil, nil) }

// ParseQueryWith is ParseQuery with a resolver for models the catalog does
// not hold (a Hub id or a model name; nil: catalog only) and, when preset
// is non-nil, the model given beside the query (a config.json): the query
// then names no model. A failed lookup is the resolver's error (a
// *models.LookupError), any other error a *QueryError.
func ParseQueryWith(ctx context.Context, q string, resolver ModelResolver, preset *models.Resolution) (Query, error) {
	if len(q) > maxQueryBytes {
		return Query{}, queryErr("", "query too long (%d bytes, at most %d): a /vram query is a model, a method, a GPU and a few key=value settings", len(q), maxQueryBytes)
	}
	if !utf8.ValidString(q) {
		return Query{}, queryErr("", "query is not valid UTF-8 text")
	}
	tokens := tokenizeQuery(q)
	if len(tokens) > maxQueryTokens {
		return Query{}, queryErr("", "too many words in the query (%d, at most %d)", len(tokens), maxQueryTokens)
	}
	p := parsedQuery{kv: map[string]string{}}
	if preset != nil {
		p.model, p.modelToken, p.resolved = &preset.Model, "the config.json given", preset
	}
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		// Two-word GPU names: "a100 40gb", "rtx 4090", "h100 pcie".
		if i+1 < len(tokens) && !strings.Contains(tok, "=") {
			if g, ok := catalog.LookupGPU(tok + " " + tokens[i+1]); ok {
				if err := p.setGPU(g, tok+" "+tokens[i+1], false); err != nil {
					return Query{}, err
				}
				i++
				continue
			}
		}
		// "8x a100" or "8x a100 40gb": a GPU count followed by the GPU.
		if n, ok := gpuCountPrefix(tok); ok && i+1 < len(tokens) {
			found := false
			for _, words := range []int{2, 1} {
				if i+words >= len(tokens) {
					continue
				}
				name := strings.Join(tokens[i+1:i+1+words], " ")
				g, ok := catalog.LookupGPU(name)
				if !ok || strings.Contains(name, "=") {
					continue
				}
				if err := p.setGPU(g, name, false); err != nil {
					return Query{}, err
				}
				p.gpuCount = n
				i += words
				found = true
				break
			}
			if found {
				continue
			}
		}
		if err := p.token(tok); err != nil {
			return Query{}, err
		}
	}
	if err := p.resolveModelRef(ctx, resolver); err != nil {
		return Query{}, err
	}
	return p.query()
}

// tokenizeQuery splits on white space, joins "key = value" into "key=value" and
// drops a leading "vram" (as in "@vrambot vram 7b lora").
func tokenizeQuery(q string) []string {
	fields := strings.Fields(q)
	var out []string
	for i := 0; i < len(fields); i++ {
		f := strings.Trim(fields[i], ",;")
		if f == "" {
			continue
		}
		switch {
		case strings.HasPrefix(f, "-") && !strings.Contains(f, "=") && len(strings.TrimLeft(f, "-")) > 0 && i+1 < len(fields) && isFlagValue(fields[i+1]):
			// An engine flag as written on its command line: "--max-model-len 8192".
			f = f + "=" + strings.Trim(fields[i+1], ",;")
			i++
		case f == "=" && len(out) > 0 && i+1 < len(fields):
			out[len(out)-1] += "=" + fields[i+1]
			i++
			continue
		case strings.HasSuffix(f, "=") && i+1 < len(fields):
			f += strings.Trim(fields[i+1], ",;")
			i++
		case strings.HasPrefix(f, "=") && len(out) > 0 && !strings.Contains(out[len(out)-1], "="):
			out[len(out)-1] += f
			continue
		}
		out = append(out, f)
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

// gpuCountPrefix reads "8x" (or "8×") as a GPU count.
func gpuCountPrefix(tok string) (int, bool) {
	l := strings.ToLower(tok)
	num, ok := strings.CutSuffix(l, "x")
	if !ok {
		num, ok = strings.CutSuffix(l, "×")
	}
	if !ok || num == "" || len(num) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > maxGPUs || num[0] == '+' || num[0] == '-' {
		return 0, false
	}
	return n, true
}

func (p *parsedQuery) setGPU(g catalog.GPU, tok string, budget bool) error {
	if p.gpu != nil {
		return queryErr(tok, "two GPUs given: '%s' and '%s' (give one GPU name or one memory budget)", showToken(p.gpuTok), showToken(tok))
	}
	p.gpu, p.gpuTok, p.budget = &g, tok, budget
	return nil
}

func (p *parsedQuery) setModel(m catalog.Model, tok string) error {
	if err := p.secondModel(tok); err != nil {
		return err
	}
	p.model, p.modelToken = &m, tok
	return nil
}

// secondModel refuses tok when the query already has a model.
func (p *parsedQuery) secondModel(tok string) error {
	first := p.modelToken
	if p.modelRef != "" {
		first = p.modelRef
	}
	if p.model != nil || p.modelRef != "" {
		return queryErr(tok, "two models given: '%s' and '%s'", showToken(first), showToken(tok))
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
			return queryErr(tok, "two methods given: '%s' and '%s'", showToken(p.methodTok), showToken(tok))
		}
		p.method, p.methodTok = m, tok
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
		if g, ok := catalog.LookupGPU(rest.gpu); ok {
			if err := p.setGPU(g, tok, false); err != nil {
				return err
			}
			p.gpuCount = rest.n
			return nil
		}
	}
	norm := strings.ReplaceAll(l, "_", "-")
	if sh, ok := shardingWords[norm]; ok {
		if p.sharding != "" {
			return queryErr(tok, "two sharding strategies given: '%s' and '%s'", showToken(p.shardingTok), showToken(tok))
		}
		p.sharding, p.shardingTok = sh, tok
		return nil
	}
	for _, b := range bareValues {
		if slices.Contains(b.values, norm) {
			return p.keyValue(tok, b.key, tok)
		}
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

// shardingWords are the bare words that name how data-parallel GPUs hold
// the model states (DESIGN.md §3.2): FSDP full sharding (ZeRO-3
// equivalent) or plain DistributedDataParallel.
var shardingWords = map[string]memory.Sharding{
	"fsdp": memory.ShardingFSDP, "fsdp2": memory.ShardingFSDP, "fsdp1": memory.ShardingFSDP, "fully-shard": memory.ShardingFSDP,
	"ddp": memory.ShardingDDP, "data-parallel": memory.ShardingDDP,
}

// bareValues are the values that are unambiguous without their key:
// "7b lora bf16 a100" means precision=bf16.
var bareValues = []struct {
	key    string
	values []string
}{
	{"precision", append([]string{"fp32", "fp16", "bf16", "mixed-bf16", "mixed-fp16", "int8", "nf4", "int4", "awq", "gptq", "mxfp4", "nvfp4"}, ggufBareNames()...)}, // not fp8: precision or kv
	{"optim", []string{"adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd"}},
	{"attn", []string{"flash", "sdpa", "eager"}},
	{"engine", []string{"vllm", "sglang", "tgi", "llama.cpp", "ollama"}},
}

// keyedEnums are the closed vocabularies whose values need their key; a
// bare value gets "did you mean 'kv=fp8'?".
var keyedEnums = []struct {
	key string
	e   queryEnum
}{
	// Only on/off: a bare "1" or "no" is not obviously about checkpointing.
	{"gc", queryEnum{values: map[string]string{"on": "on", "off": "off", "selective": "selective"}}},
	{"loss", queryEnum{values: map[string]string{"chunked": "chunked"}}},
	{"kv", kvEnum}, {"offload", offloadEnum}, {"targets", targetsEnum}, {"framework", frameworkEnum},
}

// ggufBareNames are the GGUF types as a bare word may spell them (q4_k_m,
// q4-k-m).
func ggufBareNames() []string {
	var out []string
	for _, t := range arch.GGUFTypes() {
		out = append(out, t, strings.ReplaceAll(t, "_", "-"))
	}
	return out
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
func nearName(tok, sug string) bool {
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
	for _, k := range keyedEnums {
		if c, ok := k.e.values[strings.ReplaceAll(l, "_", "-")]; ok {
			return &QueryError{Token: tok, Reason: fmt.Sprintf("'%s' needs its setting name", showToken(tok)), Suggestion: k.key + "=" + c}
		}
	}
	methodSug, methodD := suggest.Closest(l, methodCanon)
	if methodSug != "" && nearWord(l, methodD) {
		return &QueryError{Token: tok, Reason: fmt.Sprintf("unknown method '%s'", showToken(tok)), Suggestion: methodSug}
	}
	return nil
}

// unknownQueryWord explains a word that is none of model, method, GPU or budget,
// suggesting the closest valid word of whichever kind is nearest.
func unknownQueryWord(tok string) error {
	if err := nearOtherWord(tok); err != nil {
		return err
	}
	l := strings.ToLower(tok)
	type cand struct{ kind, sug string }
	var cands []cand
	if s := catalog.SuggestGPU(tok); s != "" && nearName(tok, s) {
		cands = append(cands, cand{"GPU", s})
	}
	if s := catalog.SuggestModel(tok); s != "" && nearName(tok, s) {
		cands = append(cands, cand{"model", s})
	}
	if len(cands) > 0 {
		best := cands[0]
		if len(cands) == 2 && suggest.Distance(l, cands[1].sug) < suggest.Distance(l, best.sug) {
			best = cands[1]
		}
		return &QueryError{Token: tok, Reason: fmt.Sprintf("unknown %s '%s'", best.kind, showToken(tok)), Suggestion: best.sug}
	}
	return queryErr(tok, "unknown word '%s': expected a model (llama-2-7b, 7b), a method (%s), a GPU (a100, 4090) or budget (24gb), or key=value", showToken(tok), strings.Join(methodCanon, ", "))
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
