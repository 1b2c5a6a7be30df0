package query

import (
	"fmt"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
)

// Applying the settings: each setting of the table, phase by phase, sets
// its value in the workload or fills its default (stated as an
// assumption), then the rules that read several settings together check
// and complete them (the engine and its serving settings, the parallel
// layout).

// reading is a query being applied: what the tokens said, the Query
// being built, and whether the method trains.
type reading struct {
	p        *parsedQuery
	q        *Query
	training bool
	// values are the given settings, read by their domains.
	values map[string]value
}

func (r *reading) w() *memory.Workload { return &r.q.Workload }

// assume records a default filled in: its setting (Query.Defaults) and
// the assumption stated in the reply.
func (r *reading) assume(def, format string, args ...any) {
	r.q.Defaults = append(r.q.Defaults, def)
	r.note(format, args...)
}

// note states an assumption that is not a default.
func (r *reading) note(format string, args ...any) {
	r.w().Assumptions = append(r.w().Assumptions, fmt.Sprintf(format, args...))
}

// defaulted records a setting left to memory.Resolve, which states it.
func (r *reading) defaulted(def string) { r.q.Defaults = append(r.q.Defaults, def) }

// given is a given setting's value.
func (r *reading) given(key string) (value, bool) {
	v, ok := r.values[key]
	return v, ok
}

// raw is a given setting as typed.
func (r *reading) raw(key string) string { return r.p.kv[key] }

// phaseRules run after their phase's settings.
var phaseRules = map[phase]func(r *reading) error{
	phaseWeights:   fp8Rule,
	phaseEngine:    engineRule,
	phaseServing:   servingRule,
	phaseTechnique: techniqueRule,
	phaseParallel:  parallelRule,
}

// applySettings applies the table, phase by phase, to q.
func (p *parsedQuery) applySettings(q *Query, training bool) error {
	r := &reading{p: p, q: q, training: training, values: map[string]value{}}
	for ph := range phases {
		for _, s := range Settings {
			if s.phase != ph {
				continue
			}
			if err := r.applyOne(s); err != nil {
				return err
			}
		}
		if rule := phaseRules[ph]; rule != nil {
			if err := rule(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyOne reads a given setting by its domain and applies it, or fills
// its default.
func (r *reading) applyOne(s *Setting) error {
	raw, ok := r.p.kv[s.Key]
	if !ok {
		if s.fill != nil {
			s.fill(r)
		}
		return nil
	}
	v, err := s.Value.read(s.Key, raw)
	if err != nil {
		return err
	}
	r.values[s.Key] = v
	if s.apply != nil {
		return s.apply(r, v)
	}
	return nil
}

// frameworkStack is what a framework= word means for the snippets (the
// fix catalogue's stack) and for the estimate (the training stack whose
// defaults fill what the query leaves out).
type frameworkStack struct {
	snippets fix.Framework
	memory   memory.Framework
}

var frameworkStacks = map[string]frameworkStack{
	"pytorch":       {snippets: fix.FrameworkPyTorch},
	"hf":            {snippets: fix.FrameworkHF, memory: memory.FrameworkHF},
	"trl":           {snippets: fix.FrameworkHF, memory: memory.FrameworkTRL},
	"unsloth":       {snippets: fix.FrameworkUnsloth, memory: memory.FrameworkUnsloth},
	"axolotl":       {snippets: fix.FrameworkAxolotl, memory: memory.FrameworkAxolotl},
	"torchtune":     {snippets: fix.FrameworkTorchtune, memory: memory.FrameworkTorchtune},
	"llama-factory": {snippets: fix.FrameworkLlamaFactory, memory: memory.FrameworkLlamaFactory},
	"torchtitan":    {snippets: fix.FrameworkPyTorch, memory: memory.FrameworkTorchtitan},
	"lightning":     {snippets: fix.FrameworkLightning, memory: memory.FrameworkLightning},
	"deepspeed":     {snippets: fix.FrameworkDeepSpeed},
	"keras":         {snippets: fix.FrameworkKeras},
	"jax":           {snippets: fix.FrameworkJAX},
	"vllm":          {snippets: fix.FrameworkVLLM},
}

func applyFramework(r *reading, v value) error {
	st := frameworkStacks[v.canon]
	r.q.Framework = st.snippets
	r.w().Framework = st.memory
	return nil
}

// half is the 16-bit type of the GPU: bf16, or fp16 where it has none.
func (r *reading) half() string {
	if !r.q.GPU.BF16 {
		return "fp16"
	}
	return "bf16"
}

func applyPrecision(r *reading, v value) error {
	r.w().Precision = memory.Precision(v.canon)
	if (v.canon == "bf16" || v.canon == "mixed-bf16") && !r.q.GPU.BF16 {
		r.note("%s has no bf16 support: estimated as asked, but use fp16 (mixed-fp16 with GradScaler) there", r.q.GPU.Name)
	}
	return nil
}

func fillPrecision(r *reading) {
	w, gpu, half := r.w(), r.q.GPU, r.half()
	if w.Model.Quant != nil && w.Method != memory.MethodFull && w.Method != memory.MethodFreeze && w.Method != memory.MethodQLoRA {
		// A pre-quantised checkpoint: memory.Resolve takes its own
		// storage as the precision and says so.
		r.defaulted(DefaultPrecision)
		return
	}
	switch w.Method {
	case memory.MethodQLoRA:
		w.Precision = memory.PrecisionNF4
		r.assume(DefaultPrecision, "precision not given: assuming 4-bit NF4 base weights with %s compute (QLoRA)%s", half, noBF16Advice(gpu, true))
	case memory.MethodLoRA, memory.MethodDoRA, memory.MethodFreeze:
		w.Precision = memory.Precision(half)
		r.assume(DefaultPrecision, "precision not given: assuming frozen weights in %s, trained weights under %s autocast%s", half, half, noBF16Advice(gpu, true))
	case memory.MethodFull:
		if memory.FrameworkPureBF16(w.Framework) {
			w.Precision = memory.Precision(half)
			r.assume(DefaultPrecision, "precision not given: assuming pure %s (weights, gradients and optimizer states, no fp32 master copy), as %s trains%s", half, w.Framework, noBF16Advice(gpu, true))
			return
		}
		w.Precision = memory.Precision("mixed-" + half)
		r.assume(DefaultPrecision, "precision not given: assuming mixed-%s (AMP with fp32 master weights) for training%s", half, noBF16Advice(gpu, true))
	default:
		w.Precision = memory.Precision(half)
		r.assume(DefaultPrecision, "precision not given: assuming %s weights%s", half, noBF16Advice(gpu, false))
	}
}

// fp8Rule says what FP8 weights do on a GPU without FP8 tensor cores
// (catalog.GPU.FP8): they are served weight-only (one byte per weight in
// memory, dequantised to 16-bit for each matmul, as vLLM's Marlin FP8
// kernels do), so the memory estimate holds but not FP8 speed.
func fp8Rule(r *reading) error {
	w, gpu := r.w(), r.q.GPU
	fp8 := w.Precision == memory.PrecisionFP8 || (w.Precision == "" && w.Model.Quant != nil && w.Model.Quant.Method == "fp8")
	if fp8 && !gpu.FP8 && gpu.Key != "" {
		r.note("%s has no FP8 tensor cores: FP8 weights run weight-only there (1 byte per weight, 16-bit compute), so memory is as estimated but not FP8 speed", gpu.Name)
	}
	return nil
}

// noBF16Advice says what a GPU without bf16 (V100, T4) runs instead:
// fp16, and for training autocast with loss scaling, which fp16's narrow
// range needs (docs/memory-model.md §6).
func noBF16Advice(g catalog.GPU, training bool) string {
	if g.BF16 {
		return ""
	}
	if !training {
		return fmt.Sprintf(" (%s has no bf16)", g.Name)
	}
	return fmt.Sprintf(" (%s has no bf16: train under torch.amp.autocast(\"cuda\", dtype=torch.float16) with a torch.amp.GradScaler, or fp16=True in the HF Trainer, which adds the scaler)", g.Name)
}

func applyOptim(r *reading, v value) error {
	r.w().Optimizer = memory.Optimizer(v.canon)
	return nil
}

func fillOptim(r *reading) {
	if !r.training {
		r.w().Optimizer = memory.OptimizerNone
		return
	}
	r.w().Optimizer = memory.OptimizerAdamW
	r.assume(DefaultOptim, "optimizer not given: assuming AdamW")
}

func applyBatch(r *reading, v value) error {
	r.w().Batch = int(v.n)
	return nil
}

func fillBatch(r *reading) {
	r.w().Batch = 1
	switch {
	case r.p.kv["users"] != "":
	case r.training:
		r.assume(DefaultBatch, "batch not given: assuming bs=1 per GPU")
	case r.p.servingEngineAsked():
		// A serving engine batches requests itself (up to max_num_seqs);
		// its reply says how many of max_model_len fit at once.
		r.defaulted(DefaultBatch)
	default:
		r.assume(DefaultBatch, "batch not given: assuming bs=1 (one sequence at a time)")
	}
}

func applyEngine(r *reading, v value) error {
	if r.training && serving.Engine(v.canon).Serving() {
		return Errorf("engine="+r.raw("engine"), "engine=%s serves models and does not train: drop it or use method inference", v.canon)
	}
	r.w().Engine = v.canon
	return nil
}

func fillEngine(r *reading) {
	if r.training {
		return
	}
	if k := r.p.hasAny(keysIn(ScopeServing)); k != "" {
		r.w().Engine = string(serving.EngineVLLM)
		r.assume(DefaultEngine, "engine not given: %s= is a serving setting, so assuming vLLM (engine=sglang, tgi, llama.cpp or ollama for the others)", k)
		return
	}
	r.w().Engine = "hf"
	r.assume(DefaultEngine, "engine not given: assuming Hugging Face transformers (engine=vllm, sglang, tgi, llama.cpp or ollama for a serving engine)")
}

// engineRule refuses a serving setting without a serving engine, and
// writes vLLM's snippets for vLLM.
func engineRule(r *reading) error {
	engine := serving.Engine(r.w().Engine)
	if k := r.p.hasAny(keysIn(ScopeServing)); k != "" && !engine.Serving() {
		if r.training {
			return Errorf(k+"="+r.raw(k), "%s= is a serving-engine setting and does not apply to training", k)
		}
		return Errorf(k+"="+r.raw(k), "%s= is a serving-engine setting: add engine=vllm (or sglang, tgi, llama.cpp, ollama)", k)
	}
	if engine == serving.EngineVLLM {
		r.q.Framework = fix.FrameworkVLLM
	}
	return nil
}

func applyGPUUtil(r *reading, v value) error {
	engine := serving.Engine(r.w().Engine)
	if engine != serving.EngineVLLM && engine != serving.EngineSGLang {
		return Errorf("gpu-util="+r.raw("gpu-util"), "gpu-util= is vLLM's gpu_memory_utilization (SGLang's mem_fraction_static); %s has no such setting", engine.Label())
	}
	r.w().GPUMemoryUtilization = v.f
	return nil
}

// servingRule says how a batch reads under a serving engine.
func servingRule(r *reading) error {
	w := r.w()
	if bs, ok := r.p.kv["bs"]; ok && serving.Engine(w.Engine).Serving() && w.Users == 0 {
		r.note("bs=%s under %s reads as %s sequences served at once (users=%s)", bs, serving.Engine(w.Engine).Label(), bs, bs)
	}
	return nil
}

func applySeq(r *reading, v value) error {
	r.w().SeqLen = int(v.n)
	return nil
}

// chatContext is the context each user of users= holds when the query
// gives none: a chat conversation (its prompts and answers so far), not
// the model's whole window — 50 users of a 128k model is 50 sequences of
// 128k, which nobody serves a chat with.
const chatContext = 8192

func fillSeq(r *reading) {
	w := r.w()
	if users, ok := r.p.kv["users"]; ok && serving.Engine(w.Engine).Serving() {
		seq := chatContext
		if maxPos := w.Model.MaxPositionEmbeddings; maxPos > 0 && maxPos < seq {
			seq = maxPos
		}
		w.SeqLen = seq
		r.assume(DefaultSeq, "sequence length not given: assuming seq=%d for each of the %s users (a chat conversation; seq= for longer ones)", seq, users)
		return
	}
	if engine := serving.Engine(w.Engine); engine.Serving() {
		seq, why := serving.DefaultContext(serving.Deployment{Engine: engine, Model: w.Model, GPU: r.q.GPU})
		w.SeqLen = seq
		r.assume(DefaultSeq, "sequence length not given: assuming seq=%d (%s)", seq, why)
		return
	}
	seq, why := defaultSeq, ""
	if fs := memory.FrameworkSeqLen(w.Framework); fs != defaultSeq && r.training {
		seq, why = fs, fmt.Sprintf(" (%s's max_length)", w.Framework)
	}
	if maxPos := w.Model.MaxPositionEmbeddings; maxPos > 0 && maxPos < seq {
		seq, why = maxPos, fmt.Sprintf(" (%s's maximum)", w.ModelName)
	}
	w.SeqLen = seq
	r.assume(DefaultSeq, "sequence length not given: assuming seq=%d%s", seq, why)
}

// Training techniques. Left unset, memory.Resolve fills the default the
// tools have (QLoRA and the framework recipes checkpoint; several GPUs of
// full fine-tuning shard with FSDP) and states it.

func applyGC(r *reading, v value) error {
	w := r.w()
	w.Checkpointing = memory.Checkpointing(v.canon)
	w.GradCheckpointing = w.Checkpointing != memory.CheckpointOff
	return nil
}

func fillGC(r *reading) {
	if r.training {
		r.defaulted(DefaultGC)
	}
}

func applyLoss(r *reading, v value) error {
	r.w().Loss = memory.Loss(v.canon)
	return nil
}

func applyOptimInBackward(r *reading, v value) error {
	r.w().OptimizerInBackward = v.canon == "on"
	return nil
}

func applyActOffload(r *reading, v value) error {
	r.w().ActivationOffload = v.canon == "on"
	return nil
}

// techniqueRule refuses a fused optimizer step without an optimizer.
func techniqueRule(r *reading) error {
	if w := r.w(); w.OptimizerInBackward && w.Optimizer == memory.OptimizerNone {
		return Errorf("optim-in-bwd="+r.raw("optim-in-bwd"), "optim-in-bwd=on fuses the optimizer step into backward, but optim=none has no step")
	}
	return nil
}

func applyAttn(r *reading, v value) error {
	r.w().Attention = memory.Attention(v.canon)
	return nil
}

// fillAttn leaves the kernel to memory.Resolve, which picks the one the
// model's code usually runs (SDPA/flash, eager for BERT/GPT-2/T5-era
// models) and states it as an assumption.
func fillAttn(r *reading) { r.defaulted(DefaultAttn) }

func applyKV(r *reading, v value) error {
	r.w().KVCacheDtype = v.canon
	if v.canon == "int8" {
		r.note("kv=int8: one byte per cached element (LMDeploy/TensorRT-LLM int8 KV; vLLM and SGLang offer fp8 at the same size)")
	}
	return nil
}

func fillKV(r *reading) {
	if !r.training {
		r.w().KVCacheDtype = "fp16"
		r.assume(DefaultKV, "KV cache dtype not given: assuming 16-bit")
	}
}

func applyRank(r *reading, v value) error {
	r.w().LoRARank = int(v.n)
	return nil
}

func applyTargets(r *reading, v value) error {
	r.w().LoRATargets = v.canon
	return nil
}

// servingEngineAsked reports whether the query names a serving engine or
// a serving setting (which implies vLLM).
func (p *parsedQuery) servingEngineAsked() bool {
	if v, ok := p.kv["engine"]; ok {
		c, err := engineEnum.parse("engine", v)
		return err == nil && serving.Engine(c).Serving()
	}
	return p.hasAny(keysIn(ScopeServing)) != ""
}

// hasAny returns the first of keys that was given, or "".
func (p *parsedQuery) hasAny(keys []string) string {
	for _, k := range keys {
		if _, ok := p.kv[k]; ok {
			return k
		}
	}
	return ""
}

// parallelRule reads gpus, tp, pp, zero and offload together: the GPU
// count against the model-parallel degree, then how the data-parallel
// GPUs hold the model states.
func parallelRule(r *reading) error {
	if err := r.modelParallel(); err != nil {
		return err
	}
	if err := r.gpuCount(); err != nil {
		return err
	}
	return r.sharding()
}

// intValue is a given count, or def.
func (r *reading) intValue(key string, def int) int {
	if v, ok := r.given(key); ok {
		return int(v.n)
	}
	return def
}

// modelParallel sets tp and pp and checks the engine can split the model
// so.
func (r *reading) modelParallel() error {
	w := r.w()
	w.TP, w.PP = r.intValue("tp", 1), r.intValue("pp", 1)
	model := w.TP * w.PP
	if model > maxGPUs {
		return Errorf("tp="+r.raw("tp"), "tp×pp = %d is more GPUs than supported (%d)", model, maxGPUs)
	}
	engine := serving.Engine(w.Engine)
	if err := serving.CheckTP(engine, w.Model, w.TP); err != nil {
		return &Error{Token: "tp=" + r.raw("tp"), Reason: err.Error()}
	}
	if heads := w.Model.NumAttentionHeads; !engine.TensorParallel() && w.TP > 1 && heads > 0 && heads%w.TP != 0 {
		return Errorf("tp="+r.raw("tp"), "tp=%d does not divide %s's %d attention heads", w.TP, w.ModelName, heads)
	}
	w.GPUs = max(1, model)
	return nil
}

// gpuCount sets the GPU count (gpus= or "8x h100") and, for inference on
// several GPUs with no tp= or pp=, the engine's own split.
func (r *reading) gpuCount() error {
	w := r.w()
	model := w.TP * w.PP
	if v, ok := r.given("gpus"); ok {
		if r.p.gpuCount > 0 && r.p.gpuCount != int(v.n) {
			return Errorf("gpus="+r.raw("gpus"), "gpus=%d contradicts '%s'", v.n, ShowToken(r.p.gpuTok))
		}
		w.GPUs = int(v.n)
	} else if r.p.gpuCount > 0 {
		w.GPUs = r.p.gpuCount
	}
	if w.GPUs%model != 0 {
		return Errorf(fmt.Sprintf("gpus=%d", w.GPUs), "gpus=%d is not a multiple of tp×pp = %d", w.GPUs, model)
	}
	if !r.training && model == 1 && w.GPUs > 1 {
		return defaultInferenceSplit(w, serving.Engine(w.Engine), r.assume)
	}
	return nil
}

// defaultInferenceSplit is how an engine uses N GPUs for one model when
// neither tp= nor pp= says: vLLM, SGLang and TGI split every layer
// (tensor parallel N, the standard single-node deployment); transformers'
// device_map="auto" and llama.cpp/Ollama split the layers between the
// GPUs, which then work one after another.
func defaultInferenceSplit(w *memory.Workload, engine serving.Engine, assume func(def, format string, args ...any)) error {
	n := w.GPUs
	if engine.TensorParallel() {
		if err := serving.CheckTP(engine, w.Model, n); err != nil {
			return &Error{Token: fmt.Sprintf("%d GPUs", n), Reason: fmt.Sprintf("tp not given, so tensor parallel across the %d GPUs: %s", n, err)}
		}
		w.TP = n
		assume(DefaultParallel, "tp not given: tensor parallel across the %d GPUs (%s's standard single-node deployment, --tensor-parallel-size %d)", n, engine.Label(), n)
		return nil
	}
	w.PP = n
	switch engine {
	case serving.EngineLlamaCpp, serving.EngineOllama:
		assume(DefaultParallel, "tp/pp not given: %s splits the layers over the %d GPUs (--split-mode layer)", engine.Label(), n)
	default:
		assume(DefaultParallel, "tp/pp not given: transformers' device_map=\"auto\" splits the layers over the %d GPUs, which run one after another", n)
	}
	return nil
}

// sharding reads zero, offload and the sharding word (fsdp, ddp) and
// checks they agree.
func (r *reading) sharding() error {
	w := r.w()
	w.Offload = memory.OffloadNone
	if v, ok := r.given("offload"); ok {
		w.Offload = memory.Offload(v.canon)
	}
	w.Sharding = r.p.sharding
	zero, zeroGiven := r.given("zero")
	w.ZeroStage = int(zero.n)
	switch w.Sharding {
	case memory.ShardingDDP:
		return r.ddpRule()
	case memory.ShardingFSDP:
		return r.fsdpRule(zeroGiven)
	}
	if !zeroGiven && r.training {
		r.zeroDefault()
	}
	if w.ZeroStage > 0 {
		w.Sharding = memory.ShardingDeepSpeed
	}
	switch {
	case w.Offload == memory.OffloadParam && w.ZeroStage != 3:
		return Errorf("offload=param", "offload=param needs zero=3 (or fsdp), got zero=%d", w.ZeroStage)
	case w.Offload == memory.OffloadOptimizer && w.ZeroStage == 0:
		return Errorf("offload=optimizer", "offload=optimizer needs a ZeRO stage (zero=1, 2 or 3) or fsdp, got zero=0")
	}
	return nil
}

func (r *reading) ddpRule() error {
	w := r.w()
	if w.ZeroStage > 0 {
		return Errorf(r.p.shardingTok, "ddp keeps every model state on every GPU, but zero=%d shards them: give one of the two", w.ZeroStage)
	}
	if w.Offload != memory.OffloadNone {
		return Errorf("offload="+r.raw("offload"), "offload= needs ZeRO (zero=) or fsdp, not ddp")
	}
	return nil
}

func (r *reading) fsdpRule(zeroGiven bool) error {
	w := r.w()
	switch {
	case zeroGiven && w.ZeroStage == 1:
		return Errorf("zero=1", "FSDP has no ZeRO-1 equivalent: fsdp means zero=3 (FULL_SHARD), fsdp zero=2 is SHARD_GRAD_OP")
	case !zeroGiven || w.ZeroStage == 0:
		w.ZeroStage = 3
	}
	if w.Offload != memory.OffloadNone && w.ZeroStage != 3 {
		return Errorf("offload="+r.raw("offload"), "FSDP's CPU offload runs with full sharding (fsdp, zero=3), not zero=%d", w.ZeroStage)
	}
	return nil
}

// zeroDefault is the ZeRO stage an offload needs, or none (memory.Resolve
// then picks FSDP for several GPUs of full fine-tuning).
func (r *reading) zeroDefault() {
	w := r.w()
	switch w.Offload {
	case memory.OffloadParam:
		w.ZeroStage = 3
		r.assume(DefaultParallel, "zero not given: offload=param needs ZeRO-3, assuming DeepSpeed zero=3 (say fsdp for FSDP's CPU offload)")
	case memory.OffloadOptimizer:
		w.ZeroStage = 2
		r.assume(DefaultParallel, "zero not given: optimizer offload is ZeRO-Offload, assuming DeepSpeed zero=2")
	default:
		r.defaulted(DefaultParallel)
	}
}
