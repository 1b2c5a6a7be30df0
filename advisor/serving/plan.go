package serving

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/internal/errs"
)

// Limits on a deployment, so that no arithmetic overflows: the query
// grammar refuses larger values with these numbers.
const (
	// MaxParallel is the most GPUs one deployment spans (64 nodes of 8).
	MaxParallel = 512
	// MaxContext is the longest context planned (16M tokens).
	MaxContext = 1 << 24
	// MaxSeqs bounds max_num_seqs and users.
	MaxSeqs = 1 << 20
)

// Plan runs the engine's own arithmetic on d: the defaults it fills (each
// stated in Assumptions), the memory per GPU, the KV cache, whether it
// starts and the start-up lines. d.Engine must be a serving engine; plain
// transformers is the estimator's (advisor/memory).
func Plan(d Deployment) Result { return plan(d, false) }

// plan is Plan; quiet leaves out the log lines and assumptions.
func plan(d Deployment, quiet bool) Result {
	r := Result{Engine: d.Engine, Input: d, quiet: quiet}
	if !quiet {
		r.Assumptions = []string{}
	}
	note := func(format string, args ...any) {
		if quiet {
			return
		}
		s := fmt.Sprintf(format, args...)
		if !slices.Contains(r.Assumptions, s) {
			r.Assumptions = append(r.Assumptions, s)
		}
	}
	d = commonDefaults(d, note)
	if e := d.Engine; e.Serving() && !e.Supports(d.GPU) {
		note("%s supports NVIDIA GPUs of compute capability %.1f and newer; the %s is %.1f: old releases load and profile on it, but kernels fail on the first request", e.Label(), minComputeCapability, d.GPU.Name, d.GPU.ComputeCapability)
	}
	switch d.Engine {
	case EngineSGLang:
		planSGLang(d, &r, note)
	case EngineTGI:
		planTGI(d, &r, note)
	case EngineLlamaCpp, EngineOllama:
		planLlamaCpp(d, &r, note)
	default:
		r.Engine = EngineVLLM
		d.Engine = EngineVLLM
		planVLLM(d, &r, note)
	}
	return r
}

// commonDefaults fills what every engine needs: parallel degrees, the
// dense weight size and the context length.
func commonDefaults(d Deployment, note func(string, ...any)) Deployment {
	d.TP = min(max(d.TP, 1), MaxParallel)
	d.PP = min(max(d.PP, 1), MaxParallel)
	if d.DenseBytes <= 0 {
		d.DenseBytes = 2
	}
	d.MaxNumSeqs = min(max(d.MaxNumSeqs, 0), MaxSeqs)
	d.MaxNumBatchedTokens = min(max(d.MaxNumBatchedTokens, 0), MaxContext)
	d.Users = min(max(d.Users, 0), MaxSeqs)
	if d.MaxModelLen <= 0 {
		d.MaxModelLen = defaultContext(d, note)
	}
	d.MaxModelLen = min(d.MaxModelLen, MaxContext)
	return d
}

// DefaultContext is the engine's context length when none is given and
// why: vLLM's max_model_len, SGLang's context_length and TGI's
// max_total_tokens default to the model's context; llama-server's -c is
// 4096; Ollama's num_ctx depends on the GPU's memory.
func DefaultContext(d Deployment) (int, string) {
	ctx := d.Model.MaxPositionEmbeddings
	capped := func(n int) int {
		if ctx > 0 {
			return min(n, ctx)
		}
		return n
	}
	switch d.Engine {
	case EngineLlamaCpp:
		return capped(llamaCppDefaultContext), "llama-server's default -c"
	case EngineOllama:
		n, why := ollamaDefaultContext(d.GPU.UsableBytes)
		return capped(n), "Ollama's default num_ctx on " + why
	}
	name := map[Engine]string{EngineSGLang: "SGLang's context_length", EngineTGI: "TGI's max_total_tokens"}[d.Engine]
	if name == "" {
		name = "vLLM's max_model_len"
	}
	if ctx <= 0 {
		return fallbackMaxModelLen, name + " when the model names no context"
	}
	if d.Engine == EngineTGI {
		return ctx, name + " defaults to the model's context, lowered to what fits (TGI v3)"
	}
	return ctx, name + " defaults to the model's context"
}

// defaultContext fills DefaultContext and states it.
func defaultContext(d Deployment, note func(string, ...any)) int {
	n, why := DefaultContext(d)
	note("context not given: %d tokens (%s)", n, why)
	return n
}

// CheckTP is the engine's own check of a tensor-parallel degree: vLLM,
// SGLang and TGI split the attention heads (and the KV heads, or replicate
// them when there are fewer than tp) across ranks. A degree that does not
// divide them gets the engine's error and the nearest degrees that work.
// The error is errs.Invalid.
func CheckTP(e Engine, m arch.Model, tp int) error {
	if tp <= 1 || !e.TensorParallel() {
		return nil
	}
	if validTP(m, tp) {
		return nil
	}
	heads := m.NumAttentionHeads
	near := nearestTP(m, tp)
	var msg string
	switch e {
	case EngineTGI:
		msg = fmt.Sprintf("`num_heads` must be divisible by `num_shards` (got `num_heads`: %d and `num_shards`: %d)", heads, tp)
	case EngineSGLang:
		msg = fmt.Sprintf("AssertionError: the number of attention heads (%d) is not divisible by tp_size (%d)", heads, tp)
	default:
		msg = fmt.Sprintf("ValueError: Total number of attention heads (%d) must be divisible by tensor parallel size (%d).", heads, tp)
		switch width, grouped := unevenWidth(m, tp), unalignedGroupWidth(m, tp); {
		case heads > 0 && heads%tp != 0:
		case width > 0:
			msg = fmt.Sprintf("AssertionError: %d is not divisible by %d (the MLP's width across tensor parallel ranks)", width, tp)
		case grouped > 0:
			msg = fmt.Sprintf("ValueError: The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size. (%d / %d = %d is not a multiple of the group size %d)", grouped, tp, grouped/tp, m.Quant.GroupSize)
		default:
			msg = fmt.Sprintf("ValueError: the %d KV heads cannot be split or replicated evenly across tensor parallel size %d", m.NumKVHeads, tp)
		}
	}
	return errs.New(errs.Invalid, "%s says: %s — use tp=%s", e.Label(), msg, joinInts(near, " or tp="))
}

// validTP reports whether tp divides the attention heads and either
// divides the KV heads or is a multiple of them (vLLM's QKVParallelLinear),
// and divides the MLP's widths.
func validTP(m arch.Model, tp int) bool {
	for _, g := range m.Layers() {
		a := g.Attention
		if a.Kind == arch.KindLinear {
			if a.LinearValueHeads > 0 && a.LinearValueHeads%tp != 0 {
				return false
			}
			continue
		}
		if a.Heads > 0 && a.Heads%tp != 0 {
			return false
		}
		if a.Kind != arch.KindMLA && a.KVHeads > 0 && a.KVHeads%tp != 0 && tp%a.KVHeads != 0 {
			return false
		}
	}
	return unevenWidth(m, tp) == 0 && unalignedGroupWidth(m, tp) == 0
}

// unalignedGroupWidth is a row-parallel input width (the attention output
// projection's, the dense MLP's down projection's) whose share per rank is
// not a whole number of quantisation groups, which GPTQ and AWQ kernels
// refuse (0 when all align). It is checked only for a format read from the
// checkpoint's config.json: its widths are the checkpoint's, which official
// releases pad for this (Qwen2.5-72B-AWQ: 29,696, the base model 29,568).
func unalignedGroupWidth(m arch.Model, tp int) int {
	q := m.Quant
	if q == nil || q.GroupSize <= 0 || q.Source != arch.SourceCheckpointConfig || !slices.Contains([]string{"gptq", "awq", "autoround", "gptqmodel"}, q.Format) {
		return 0
	}
	for _, g := range m.Layers() {
		a := g.Attention
		v := a.VHeadDim
		if v == 0 {
			v = a.HeadDim
		}
		for _, w := range []int{a.Heads * v, g.FFN.Intermediate} {
			if w > 0 && w%tp == 0 && (w/tp)%q.GroupSize != 0 {
				return w
			}
		}
	}
	return 0
}

// unevenWidth is an MLP width tp does not divide (0 when it divides them
// all): the column-parallel projections split their width evenly (divide()
// in vLLM's ColumnParallelLinear and FusedMoE).
func unevenWidth(m arch.Model, tp int) int {
	for _, g := range m.Layers() {
		for _, w := range []int{g.FFN.Intermediate, g.FFN.SharedIntermediate, g.FFN.ExpertIntermediate} {
			if w%tp != 0 {
				return w
			}
		}
	}
	return 0
}

// nearestTP is the valid degrees nearest to tp: the largest below and the
// smallest above (up to MaxParallel).
func nearestTP(m arch.Model, tp int) []int {
	var out []int
	for t := tp - 1; t >= 1; t-- {
		if validTP(m, t) {
			out = append(out, t)
			break
		}
	}
	for t := tp + 1; t <= MaxParallel; t++ {
		if validTP(m, t) {
			out = append(out, t)
			break
		}
	}
	return out
}

// ValidTPDegrees lists the tensor-parallel degrees up to limit that the
// model splits evenly, smallest first.
func ValidTPDegrees(m arch.Model, limit int) []int {
	var out []int
	for t := 1; t <= limit; t++ {
		if validTP(m, t) {
			out = append(out, t)
		}
	}
	return out
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}

// gib writes bytes as "14.96 GiB".
func gib(b float64) string { return strconv.FormatFloat(b/(1<<30), 'f', 2, 64) + " GiB" }

// kib writes bytes as "128 KiB".
func kib(b float64) string { return strconv.FormatFloat(b/1024, 'f', -1, 64) + " KiB" }

// commas writes 178880 as "178,880", as vLLM's log does.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
