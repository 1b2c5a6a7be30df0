package memory

import (
	"fmt"
	"math"
	"slices"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Defaults that Resolve fills in, each reported as an assumption.
const (
	// DefaultLoRARank and DefaultLoRATargets are PEFT's LoraConfig defaults
	// (r=8; q_proj and v_proj for Llama-style models), so a plain
	// `get_peft_model` run prints what we print: 4,194,304 trainable
	// parameters for Llama-2-7B.
	DefaultLoRARank    = 8
	DefaultLoRATargets = "qv"
	// DefaultSeqLen is the context assumed when none is given: the common
	// fine-tuning/serving length of 2k tokens, capped at the model's maximum.
	DefaultSeqLen = 2048
	// FreezeTrainableLayers is how many last blocks a "freeze" run trains:
	// LLaMA-Factory's default freeze_trainable_layers=2.
	FreezeTrainableLayers = 2
	// defaultParams is the size assumed when neither a model nor a size is given.
	defaultParams = 7_000_000_000
)

// Limits on user-controlled sizes, so that no arithmetic can overflow and no
// answer pretends to model a nonsensical job. They are the domain's: the
// query grammar refuses a value above them with these numbers, and Resolve
// clamps to them for callers that build a Workload directly.
const (
	// MaxBatch: no public job runs a micro-batch of a million sequences.
	MaxBatch = 1 << 20
	// MaxSeqLen: 16M tokens, far beyond the longest published context (10M).
	MaxSeqLen = 1 << 24
	// MaxGPUs: 65,536 GPUs, beyond the largest published training cluster.
	MaxGPUs = 1 << 16
	// MaxLoRARank: a LoRA rank above 65,536 is wider than any model.
	MaxLoRARank = 1 << 16
	// MaxJobTokens: ~40× the largest published pre-training run (15T tokens).
	MaxJobTokens = 1e15
)

// Resolve fills the derived fields of w and the defaults for its zero values.
// Derived fields (Model from ModelName or Params, Params, TrainableParams) are
// recomputed on every call, so a caller may change Method or LoRARank on a
// resolved workload and resolve again. Every default it fills is appended to
// Assumptions once (Resolve is idempotent). It is a pure function.
func Resolve(w Workload) Workload { return resolve(w, true) }

// resolve is Resolve; with record false it skips writing the assumptions,
// which Estimate does not return (it runs hundreds of times per plan).
func resolve(w Workload, record bool) Workload {
	if record {
		w.Assumptions = slices.Clone(w.Assumptions)
	}
	a := assumptions{w: &w, record: record}
	resolveModel(&w, a)
	resolveMethod(&w, a)
	resolveCheckpoint(&w, a)
	resolvePrecision(&w, a)
	resolveOptimizer(&w, a)
	resolveBatchAndSeqLen(&w, a)
	resolveParallelism(&w, a)
	resolveTraining(&w, a)
	resolveAttention(&w, a)
	resolveLoRA(&w, a)
	resolveExperts(&w, a)
	noteMethodCaveats(&w, a)
	w.TrainableParams = TrainableParams(w)
	return w
}

// assumptions appends the defaults resolve fills to w.Assumptions, each
// once, or with record false nothing. It is a method, not a closure the
// resolve steps are handed, so that the compiler inlines it where it is
// called: a call through a func value would allocate its arguments on
// every Estimate.
type assumptions struct {
	w      *Workload
	record bool
}

func (a assumptions) note(format string, args ...any) {
	if !a.record {
		return
	}
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(a.w.Assumptions, s) {
		a.w.Assumptions = append(a.w.Assumptions, s)
	}
}

// resolveModel fills the architecture from the model's name or size (a
// 7B model when neither is known), noting a stand-in's or a scaled
// shape's provenance, and the parameters and name from it.
func resolveModel(w *Workload, a assumptions) {
	if w.Model.HiddenSize <= 0 || w.Model.NumLayers <= 0 {
		m, ok := catalog.Model{}, false
		if w.ModelName != "" {
			m, ok = catalog.LookupModel(w.ModelName)
		}
		if !ok {
			if w.Params <= 0 {
				w.Params = defaultParams
				if w.ModelName != "" {
					a.note("unknown model %q: assumed a 7B model", w.ModelName)
				} else {
					a.note("no model given: assumed a 7B model")
				}
			}
			m = catalog.ModelForSize(w.Params)
		}
		w.Model = m
	}
	if m := w.Model; m.StandInFor != "" {
		a.note("%s has no config.json of its own in the catalog: read with %s's, the same architecture (context %d tokens)", m.Name, m.StandInFor, m.MaxPositionEmbeddings)
	}
	if w.Model.Scaled {
		m := w.Model
		a.note("no published architecture for %s: assumed today's typical shape (%d layers, hidden %d, GQA with %d query / %d KV heads × %d, SwiGLU width %d, vocab %d): the %s",
			catalog.FormatSize(m.Params), m.NumLayers, m.HiddenSize, m.NumAttentionHeads, m.NumKVHeads, m.HeadDim, m.IntermediateSize, m.VocabSize, m.Source)
	}
	w.Params = w.Model.Params
	if w.ModelName == "" {
		w.ModelName = w.Model.Name
	}
}

// resolveMethod makes the method one of methods: inference when it is
// not given or not known.
func resolveMethod(w *Workload, a assumptions) {
	if slices.Contains(methods, w.Method) {
		return
	}
	if w.Method != "" {
		a.note("unknown method %q: ignored", w.Method)
	}
	w.Method = MethodInference
	a.note("method not given: inference")
}

// resolvePrecision fills the method's common regime (defaultPrecision)
// when the precision is neither a regime nor a checkpoint format.
func resolvePrecision(w *Workload, a assumptions) {
	if slices.Contains(precisions, w.Precision) || IsCheckpointPrecision(w.Precision) {
		return
	}
	if w.Precision != "" {
		a.note("unknown precision %q: ignored", w.Precision)
	}
	w.Precision = defaultPrecision(w.Method)
	a.note("precision not given: %s", w.Precision)
}

// resolveOptimizer fills AdamW for training, none for inference.
func resolveOptimizer(w *Workload, a assumptions) {
	if !slices.Contains(optimizers, w.Optimizer) {
		if w.Optimizer != "" {
			a.note("unknown optimizer %q: ignored", w.Optimizer)
		}
		w.Optimizer = ""
	}
	if w.Optimizer == "" {
		if w.Method == MethodInference {
			w.Optimizer = OptimizerNone
		} else {
			w.Optimizer = OptimizerAdamW
			a.note("optimizer not given: adamw")
		}
	}
}

// resolveBatchAndSeqLen fills a batch of 1 and the framework's sequence
// length (capped at the model's context), each within its limit.
func resolveBatchAndSeqLen(w *Workload, a assumptions) {
	if w.Batch <= 0 {
		w.Batch = 1
		a.note("batch size not given: 1 per GPU")
	}
	w.Batch = min(w.Batch, MaxBatch)
	if w.SeqLen <= 0 {
		w.SeqLen = FrameworkSeqLen(w.Framework)
		if mp := w.Model.MaxPositionEmbeddings; mp > 0 && mp < w.SeqLen {
			w.SeqLen = mp
		}
		a.note("sequence length not given: %d tokens", w.SeqLen)
	}
	w.SeqLen = min(w.SeqLen, MaxSeqLen)
}

// resolveParallelism bounds the tensor- and pipeline-parallel degrees,
// the GPUs (at least tp×pp), the ZeRO stage and the offload.
func resolveParallelism(w *Workload, a assumptions) {
	w.TP = clamp(w.TP, 1, MaxGPUs)
	w.PP = clamp(w.PP, 1, MaxGPUs)
	if w.GPUs <= 0 {
		w.GPUs = 1
	}
	w.GPUs = min(w.GPUs, MaxGPUs)
	if w.TP*w.PP > w.GPUs {
		w.GPUs = w.TP * w.PP
		a.note("tp×pp needs %d GPUs", w.GPUs)
	}
	w.ZeroStage = clamp(w.ZeroStage, 0, 3)
	if w.Offload != OffloadOptimizer && w.Offload != OffloadParam {
		w.Offload = OffloadNone
	}
}

// resolveAttention fills the attention kernel (eager for the dropout-era
// models, flash/SDPA otherwise) and a 16-bit KV cache for inference.
func resolveAttention(w *Workload, a assumptions) {
	if w.Attention != AttentionFlash && w.Attention != AttentionEager {
		w.Attention = ""
	}
	if w.KVCacheDtype != "fp8" && w.KVCacheDtype != "fp16" && w.KVCacheDtype != "int8" {
		w.KVCacheDtype = ""
	}
	if w.Attention == "" {
		if hasDropout(w.Model) {
			// BERT/GPT-2/OPT/T5-generation code runs eager attention in most
			// scripts (T5's position bias rules out flash kernels).
			w.Attention = AttentionEager
			a.note("attention not given: eager (how %s-era code usually runs; T5's position bias rules out flash kernels)", w.Model.Name)
		} else {
			w.Attention = AttentionFlash
			a.note("attention not given: flash/SDPA (no s² score matrix)")
		}
	}
	if w.Method == MethodInference {
		if w.KVCacheDtype == "" {
			w.KVCacheDtype = "fp16"
		}
	}
}

// resolveLoRA fills an adapter's rank and targets: the framework's
// recipes', else PEFT's defaults.
func resolveLoRA(w *Workload, a assumptions) {
	if !w.Method.IsAdapter() {
		return
	}
	fw, known := frameworks[w.Framework]
	switch {
	case w.LoRARank > 0:
	case known && fw.loraRank > 0:
		w.LoRARank = fw.loraRank
		a.note("LoRA rank not given: %d, as %s's recipes", w.LoRARank, w.Framework)
	default:
		w.LoRARank = DefaultLoRARank
		a.note("LoRA rank not given: %d (PEFT default)", w.LoRARank)
	}
	w.LoRARank = min(w.LoRARank, MaxLoRARank)
	switch {
	case validTargets(w.LoRATargets):
	case known && fw.loraTargets != "":
		w.LoRATargets = fw.loraTargets
		a.note("LoRA targets not given: every linear layer (attention and MLP), as %s's recipes", w.Framework)
	default:
		w.LoRATargets = DefaultLoRATargets
		a.note("LoRA targets not given: q and v projections (PEFT default)")
	}
}

// noteMethodCaveats notes what freeze trains and where paged 8-bit AdamW
// keeps its state.
func noteMethodCaveats(w *Workload, a assumptions) {
	if w.Method == MethodFreeze {
		a.note("freeze: the last %d blocks are trained, the rest frozen (LLaMA-Factory default)", FreezeTrainableLayers)
	}
	if w.Optimizer == OptimizerPagedAdamW8bit && w.Method != MethodInference {
		a.note("paged-adamw-8bit: its state lives in CUDA unified memory outside PyTorch's allocator and pages to CPU RAM under pressure, so it is not counted on the GPU")
	}
}

// resolveCheckpoint reconciles the precision with how the checkpoint is
// stored (w.Model.Quant, from its config.json): a checkpoint format named
// as the precision (precision=awq) is assumed, unless the checkpoint already
// is one; no precision means the checkpoint's own; a 16/32-bit or
// bitsandbytes precision replaces the checkpoint's storage; full and
// freeze fine-tuning train 16-bit weights. w.Model.Quant is replaced, never
// modified: the catalog's models share it.
func resolveCheckpoint(w *Workload, a assumptions) {
	q := w.Model.Quant
	p := w.Precision
	trainsWeights := w.Method == MethodFull || w.Method == MethodFreeze
	scheme, named := arch.Scheme(string(p))
	switch {
	case named && trainsWeights:
		a.note("precision=%s names a quantised checkpoint, but %s fine-tuning trains 16-bit weights: estimated in bf16", p, w.Method)
		w.Precision, w.Model.Quant = PrecisionBF16, nil
	case named && q != nil && sameStorage(q, scheme):
		a.note("precision=%s: the checkpoint's own storage, %s (%s)", p, q.Description, q.Source)
	case named:
		s := *scheme
		s.Source = "precision=" + string(p)
		w.Model.Quant = &s
		a.note("precision=%s: assumed a pre-quantised checkpoint of %s: %s; the rest (embeddings, norms, output head) and the compute in 16-bit", p, w.Model.Name, s.Description)
	case q == nil:
	case trainsWeights:
		a.note("%s fine-tuning trains 16-bit weights: the checkpoint's %s is taken as dequantised to 16-bit", w.Method, q.Description)
		w.Model.Quant = nil
	case p == "" && q.Method == "mxfp4" && w.Method != MethodInference:
		// transformers' MXFP4 kernels do inference only: TRL, axolotl and
		// the OpenAI cookbook load gpt-oss with Mxfp4Config(dequantize=True)
		// to train it (docs/memory-model.md §6.6).
		w.Precision, w.Model.Quant = PrecisionBF16, nil
		a.note("precision not given: the checkpoint's %s is dequantised to bf16 for training, as Mxfp4Config(dequantize=True) loads it (TRL, axolotl, the OpenAI cookbook)", q.Description)
	case p == "":
		w.Precision = checkpointPrecision(q)
		a.note("precision not given: the checkpoint's own, %s (%s)", q.Description, q.Source)
	case p != checkpointPrecision(q):
		a.note("precision=%s replaces the checkpoint's own storage (%s)", p, q.Description)
		w.Model.Quant = nil
	}
}

// sameStorage reports whether the named scheme is what the checkpoint
// already stores (AWQ, GPTQ and int4 are all 4-bit integers).
func sameStorage(q, scheme *arch.Quantization) bool {
	return q.Method == scheme.Method || (q.Format == "gguf" && q.Method == scheme.Method)
}

// checkpointPrecision is the precision name of a checkpoint's storage:
// its format when the grammar names it, bitsandbytes nf4/int8 as the
// existing regimes, bf16 (16-bit compute) otherwise.
func checkpointPrecision(q *arch.Quantization) Precision {
	switch p := Precision(q.Method); {
	case IsCheckpointPrecision(p), p == PrecisionNF4, p == PrecisionInt8:
		return p
	}
	return PrecisionBF16
}

// The accepted enumeration values (docs/contracts.md §2).
var (
	methods    = []Method{MethodFull, MethodLoRA, MethodQLoRA, MethodDoRA, MethodFreeze, MethodInference}
	precisions = []Precision{PrecisionFP32, PrecisionFP16, PrecisionBF16, PrecisionMixedBF16, PrecisionMixedFP16, PrecisionInt8, PrecisionNF4}
	optimizers = []Optimizer{OptimizerAdamW, OptimizerAdamW8bit, OptimizerPagedAdamW8bit, OptimizerAdamW4bit, OptimizerAdamWFP8, OptimizerAdafactor, OptimizerSGD, OptimizerNone}
)

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func validTargets(t string) bool { return t == "qv" || t == "attn" || t == "all" }

// defaultPrecision is the common regime per method: AMP with fp32 master
// weights for full fine-tuning (HF Trainer bf16=True, Lightning bf16-mixed),
// 16-bit frozen weights for LoRA and freeze, 4-bit NF4 for QLoRA, bf16 for
// inference.
func defaultPrecision(m Method) Precision {
	switch m {
	case MethodFull:
		return PrecisionMixedBF16
	case MethodQLoRA:
		return PrecisionNF4
	default:
		return PrecisionBF16
	}
}

// TrainableParams counts the parameters that get gradients: all resident
// ones for full fine-tuning (not the MTP modules, which training scripts do
// not load), the LoRA adapters (from the architecture, rank and targets),
// the last FreezeTrainableLayers blocks for freeze, none for inference.
func TrainableParams(w Workload) int64 {
	m := w.Model
	switch w.Method {
	case MethodFull:
		return m.ResidentParams()
	case MethodLoRA, MethodQLoRA:
		return LoRAParams(m, w.LoRARank, w.LoRATargets, w.LoRAExperts.On())
	case MethodDoRA:
		return LoRAParams(m, w.LoRARank, w.LoRATargets, w.LoRAExperts.On()) + DoRAMagnitudeParams(m, w.LoRATargets)
	case MethodFreeze:
		return int64(min(FreezeTrainableLayers, m.NumLayers)) * m.MeanLayerParams()
	default:
		return 0
	}
}

// loraModule is one adapted linear layer: its input and output widths, how
// many copies a layer has (count: one per expert) and how many a token
// passes through (active: the experts it is routed to).
type loraModule struct{ in, out, count, active float64 }

// maxLoRAModules is the most kinds of linear layer LoRA adapts in one
// block: q, k, v, o, then gate, up and down of the dense MLP, of the
// routed experts and of the shared expert.
const maxLoRAModules = 13

// loraModules lists the linear layers of one block that LoRA adapts for the
// targets: qv = query and value, attn = q, k, v, o, all = attention, the
// dense MLP and the shared experts (PEFT's all-linear: under transformers 5
// the routed experts are fused 3-D parameters, not Linear layers). With
// experts, every routed expert's fused projections get adapters too, as
// PEFT's target_parameters builds them (ParamWrapper: lora_A in × r·E,
// lora_B r·E × out for gate_up_proj and down_proj; docs/memory-model.md
// §6.9). Linear-attention layers have no q/v projections, so only "all"
// adapts them (their input and output projections). It fills an array so
// that Estimate does not allocate.
func loraModules(m catalog.Model, ls layerShape, targets string, experts bool) ([maxLoRAModules]loraModule, int) {
	var mods [maxLoRAModules]loraModule
	n := 0
	add := func(in, out, count, active float64) {
		if in > 0 && out > 0 && count > 0 {
			mods[n] = loraModule{in, out, count, active}
			n++
		}
	}
	h, q, kv := ls.h, ls.q, ls.kv
	switch {
	case ls.linear:
		if targets == "all" {
			v := 2*kv - q
			add(h, 2*q+2*v, 1, 1)
			add(v, h, 1, 1)
		}
	default:
		add(h, q, 1, 1)
		add(h, kv, 1, 1)
		if targets == "attn" || targets == "all" {
			add(h, kv, 1, 1)
			add(q, h, 1, 1)
		}
	}
	mlp := func(i, count, active float64) {
		add(h, i, count, active)
		add(i, h, count, active)
		if ls.gated {
			add(h, i, count, active)
		}
	}
	for i := range m.NumLayerGroups() {
		g := m.LayerGroupAt(i)
		if shapeOf(m, g) != ls {
			continue
		}
		f := g.FFN
		if targets == "all" {
			mlp(float64(f.Intermediate), 1, 1)
			mlp(float64(f.SharedIntermediate), 1, 1)
		}
		if f.IsMoE() && experts {
			// The fused gate_up_proj (h → 2I, or h → I ungated) and down_proj.
			e, k, up := float64(f.Experts), float64(max(1, f.ActiveExperts)), float64(f.ExpertIntermediate)
			if ls.gated {
				up *= 2
			}
			add(h, up, e, k)
			add(float64(f.ExpertIntermediate), h, e, k)
		}
		break
	}
	return mods, n
}

// loraBlockParams is rank × (in + out) summed over the adapted layers of a
// block; in a mixture of experts every expert's MLP gets its own adapters.
func loraBlockParams(m catalog.Model, ls layerShape, rank int, targets string, experts bool) int64 {
	mods, n := loraModules(m, ls, targets, experts)
	var sum float64
	for _, mod := range mods[:n] {
		sum += mod.count * float64(rank) * (mod.in + mod.out)
	}
	return int64(sum)
}

// LoRAParams is the adapter size: rank × (in + out) per adapted matrix, per
// block, with experts the routed experts' adapters too. Decoder blocks of
// encoder-decoder models also adapt the cross-attention's matching
// projections (PEFT's T5 targets q and v match both attentions).
func LoRAParams(m catalog.Model, rank int, targets string, experts bool) int64 {
	if !validTargets(targets) {
		targets = DefaultLoRATargets
	}
	if m.Family == catalog.FamilyEncoderDecoder {
		ls := shapeAt(m, 0)
		cross := "qv"
		if targets != "qv" {
			cross = "attn"
		}
		n := int64(m.NumLayers) * loraBlockParams(m, ls, rank, targets, false)
		return n + int64(m.NumDecoderLayers)*(loraBlockParams(m, ls, rank, targets, false)+loraBlockParams(m, ls, rank, cross, false))
	}
	var n int64
	for i := range m.NumLayerGroups() {
		ls := shapeAt(m, i)
		n += int64(ls.layers) * loraBlockParams(m, ls, rank, targets, experts)
	}
	return n
}

// DoRAMagnitudeParams is DoRA's trained magnitude vector: one value per
// output feature of every adapted linear layer, every expert's own in a
// mixture of experts (Liu et al. 2024, arXiv:2402.09353 §4.1; PEFT
// lora_magnitude_vector).
func DoRAMagnitudeParams(m catalog.Model, targets string) int64 {
	if !validTargets(targets) {
		targets = DefaultLoRATargets
	}
	var n float64
	for i := range m.NumLayerGroups() {
		ls := shapeAt(m, i)
		mods, k := loraModules(m, ls, targets, false) // DoRA cannot wrap a 3-D parameter (PEFT ParamWrapper)
		for _, mod := range mods[:k] {
			n += ls.layers * mod.count * mod.out
		}
	}
	if m.Family == catalog.FamilyEncoderDecoder {
		n *= float64(m.TotalLayers()) / math.Max(1, float64(m.NumLayers))
	}
	return int64(n)
}

// FrameworkSeqLen is the sequence length fw's recipes truncate to when
// the query gives none: TRL's SFTConfig max_length=1024, DefaultSeqLen
// for the others.
func FrameworkSeqLen(fw Framework) int {
	if n := frameworks[fw].seqLen; n > 0 {
		return n
	}
	return DefaultSeqLen
}

// KnownPrecision reports whether p is a precision the estimator models
// (the regimes of docs/contracts.md §2).
func KnownPrecision(p Precision) bool { return slices.Contains(precisions, p) }
