package oom

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
)

// finishJob completes the workload with what the report itself says (the
// engine, the method, llama.cpp's and vLLM's own numbers) and decides where
// in the job the OOM happened (docs/oom-diagnosis.md §3, §4).
func finishJob(sc *scan, a anchor, rep *Report, frames []frame) {
	w := &rep.Facts.Workload
	w.Engine = jobEngine(sc, rep)
	if w.Engine != "" {
		w.note("engine", w.Engine, engineEvidence(rep))
	}
	// vLLM's sleep mode is how RL trainers share the GPU with it: the
	// engine says nothing of the job's method.
	if w.Method == "" && rep.Extra["kind"] != KindVLLMCumem {
		switch {
		case servingEngines[w.Engine] || w.Inference && !w.Training || rep.Phase == PhaseGenerate:
			w.Method = "inference"
		case (w.Training || rep.Phase == PhaseBackward || rep.Phase == PhaseOptimizer) && w.Quantization == "bnb-4bit":
			// transformers' Trainer refuses to train quantized weights
			// ("You cannot perform fine-tuning on purely quantized
			// models"): a training job that loads 4-bit weights trains
			// adapters on them.
			w.Method = "qlora"
		case w.Training || rep.Phase == PhaseBackward || rep.Phase == PhaseOptimizer || w.ZeroStage >= 0 || w.Sharding != "":
			w.Method = "full"
		}
		if w.Method != "" {
			w.note("method", w.Method, methodEvidence(w))
		}
	}
	if servingEngines[w.Engine] && w.SeqLen > 0 {
		// An engine's config line says max_seq_len for its context.
		if w.MaxModelLen == 0 {
			w.MaxModelLen = w.SeqLen
		}
		w.SeqLen = 0
		w.drop("seq_len")
	}
	if n, ok := rep.Extra["max_seq_len"].(int); ok && w.MaxModelLen == 0 {
		w.MaxModelLen = n
		w.note("max_model_len", strconv.Itoa(n), fmt.Sprintf("max seq len (%d)", n))
	}
	e := rep.Facts.Engine
	if w.NCtx == 0 && e.Ctx > 0 {
		w.NCtx = e.Ctx
		w.note("n_ctx", strconv.Itoa(e.Ctx), fmt.Sprintf("n_ctx = %d", e.Ctx))
	}
	if w.GPULayers < 0 && e.Layers > 0 && (w.Engine == EngineLlamaCPP || w.Engine == EngineOllama) {
		w.GPULayers = e.OffloadedLayers
		w.note("ngl", strconv.Itoa(e.OffloadedLayers), fmt.Sprintf("offloaded %d/%d layers to GPU", e.OffloadedLayers, e.Layers))
	}
	where, ev := jobWhere(sc, a, rep, frames)
	rep.Job = jobOf(*w, where, ev)
}

// jobEngine names the program that ran the job, in the job vocabulary.
func jobEngine(sc *scan, rep *Report) string {
	switch rep.Extra["stack"] {
	case StackLlamaCPP:
		return EngineLlamaCPP
	case StackOllama:
		return EngineOllama
	case "sglang":
		return EngineSGLang
	case "text-generation-inference":
		return EngineTGI
	case StackTensorRTLLM:
		return EngineTensorRTLLM
	}
	switch rep.Stack {
	case fix.FrameworkVLLM:
		return EngineVLLM
	case fix.FrameworkSGLang:
		return EngineSGLang
	case fix.FrameworkTGI:
		return EngineTGI
	}
	if rep.Framework == FrameworkVLLM {
		return EngineVLLM
	}
	t := pasteText{sc.text, strings.ToLower(sc.text)}
	if rep.Stack == fix.FrameworkHF || t.has(hfWords...) {
		return EngineHF
	}
	return ""
}

func engineEvidence(rep *Report) string {
	if s, ok := rep.Extra["stack"].(string); ok {
		return s + "'s own lines"
	}
	if rep.Stack != fix.FrameworkUnknown && rep.Stack != fix.FrameworkPyTorch {
		return string(rep.Stack) + " in the stack"
	}
	return "the program's own lines"
}

func methodEvidence(w *PasteWorkload) string {
	switch {
	case w.Method == "inference" && servingEngines[w.Engine]:
		return w.Engine + " serves the model"
	case w.Method == "inference":
		return "an inference script, no training step"
	case w.ZeroStage >= 0 || w.Sharding != "":
		return "model states sharded for training, no adapter"
	case w.Method == "qlora":
		return "a training job on 4-bit bitsandbytes weights, which train only through adapters"
	}
	return "a training step and no adapter"
}

// Where in the frames: the loss over the whole vocabulary, or the logits
// it is computed from (docs/oom-diagnosis.md §4).
var (
	logitsFns = set("cross_entropy", "nll_loss", "log_softmax", "ForCausalLMLoss", "fixed_cross_entropy", "vocab_parallel_cross_entropy",
		"_convert_to_fp32", "convert_to_fp32", "loss_function", "_VocabParallelCrossEntropy", "compute_logits", "_compute_logits")
	reLogitsSrc = regexp.MustCompile(`\blm_head\(|logits\.float\(\)|\.float\(\)[^\n]{0,40}\blogits\b|\blogits\b[^\n]{0,40}\.float\(\)|cross_entropy\(|log_softmax\(|\bloss_fct\(|\boutput\.float\(\)|\btensor\.float\(\)`)
)

// logitsReach is how many innermost frames are read for the logits.
const logitsReach = 3

// jobWhere decides where in the job the OOM happened: the engine's own
// start-up, an optimizer being built, memory that grew, fragmentation,
// the logits, else the phase the stack shows.
func jobWhere(sc *scan, a anchor, rep *Report, frames []frame) (string, string) {
	f := rep.Facts
	if rep.Phase == PhaseOptimizer {
		for _, fr := range frames {
			if optimizerInit(fr) {
				return WhereOptimizerInit, describe(fr)
			}
		}
	}
	if rep.Phase != PhaseBackward && rep.Phase != PhaseForward && deepspeedInitLog(sc.text[:min(len(sc.text), a.pos)]) {
		return WhereOptimizerInit, "DeepSpeed's last lines before it are the optimizer's creation"
	}
	if kv, ok := startupKV(rep); ok {
		return WhereKVStartup, kv
	}
	if f.Growth.Grows() || f.KeptTensors != "" {
		return WhereLeak, "memory grew step after step"
	}
	if ru, ok := reservedUnallocated(*rep); ok && rep.TriedToAllocateBytes != nil && rep.TotalCapacityBytes != nil &&
		ru >= *rep.TriedToAllocateBytes && float64(ru) >= fragmentedShare*float64(*rep.TotalCapacityBytes) {
		return WhereFragmentation, fmt.Sprintf("%s reserved but unallocated, more than the %s asked", GiB(ru), GiB(*rep.TriedToAllocateBytes))
	}
	for i, fr := range frames {
		if i == logitsReach {
			break
		}
		if logitsFns[fr.fn] || reLogitsSrc.MatchString(fr.src) {
			return WhereLogits, describe(fr)
		}
	}
	switch rep.Phase {
	case PhaseLoad:
		return WhereWeightsLoad, rep.PhaseEvidence
	case PhaseBackward:
		return WhereBackward, rep.PhaseEvidence
	case PhaseForward, PhaseEval:
		return WhereForward, rep.PhaseEvidence
	case PhaseOptimizer:
		return WhereOptimizerStep, rep.PhaseEvidence
	case PhaseGenerate:
		return WhereGenerate, rep.PhaseEvidence
	}
	return WhereUnknown, ""
}

// reDeepSpeedLog is a DeepSpeed log line, and reDeepSpeedInit one of those
// it prints while it builds the optimizer (engine.py's "Creating ...
// optimizer", stage_1_and_2.py's bucket and offload settings).
var (
	reDeepSpeedLog  = regexp.MustCompile(`\[(?:INFO|WARNING)\] \[[\w.]+:\d+:\w+\]`)
	reDeepSpeedInit = regexp.MustCompile(`Creating (?:[\w.]+ )?(?:ZeRO stage \d )?optimizer|Creating BF16 optimizer|Reduce bucket size|Allgather bucket size|CPU Offload: |Round robin gradient partitioning|DeepSpeed Basic Optimizer|optimizer_state_dict|initialize_optimizer_states|Stage 3 initialize beginning|(?i:creating fp32 partitions|initializing optimizer states|begin bf16_optimizer)`)
)

// deepspeedInitLog reports a paste whose last DeepSpeed lines before the
// OOM are the optimizer's creation: the OOM came before any step.
func deepspeedInitLog(before string) bool {
	if !strings.Contains(before, "[INFO]") && !strings.Contains(before, "[WARNING]") {
		return false
	}
	lines := lastLines(before, 8, func(l string) bool { return reDeepSpeedLog.MatchString(l) })
	return len(lines) > 0 && reDeepSpeedInit.MatchString(lines[len(lines)-1])
}

// startupKV reports an engine that failed while it sized its KV cache or
// memory pools at start-up.
func startupKV(rep *Report) (string, bool) {
	switch {
	case rep.Format == FormatVLLMKV:
		return "vLLM sized its KV cache at start-up", true
	case rep.Extra["kind"] == KindTensorRT && rep.Extra["component"] != nil:
		return fmt.Sprintf("TensorRT-LLM's executor could not create its %v", rep.Extra["component"]), true
	case rep.Phase != PhaseLoad:
		return "", false
	case rep.Extra["stack"] == "sglang" || rep.Extra["stack"] == "text-generation-inference":
		return rep.PhaseEvidence, true
	case rep.Framework == FrameworkVLLM && rep.Format == FormatOther && rep.FreeBytes != nil:
		return "vLLM's start-up check of free memory", true
	case rep.Facts.GGMLBuffer == "kv" || rep.Facts.GGMLBuffer == "compute":
		return "llama.cpp sized its " + map[string]string{"kv": "KV cache", "compute": "compute buffer"}[rep.Facts.GGMLBuffer] + " at start-up", true
	}
	return "", false
}

// jobOf is the JSON view of the workload.
func jobOf(w PasteWorkload, where, evidence string) *Job {
	j := &Job{Where: where, WhereEvidence: evidence, Read: w.Read}
	if j.Read == nil {
		j.Read = []Reading{}
	}
	strp := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	intp := func(n int) *int {
		if n <= 0 {
			return nil
		}
		return &n
	}
	j.Model, j.Method, j.Engine = strp(w.Model), strp(w.Method), strp(w.Engine)
	if w.ZeroStage >= 0 {
		z := w.ZeroStage
		j.ZeroStage = &z
	}
	j.Sharding, j.Offload = strp(w.Sharding), strp(w.Offload)
	j.TP, j.GPUs, j.MaxModelLen = intp(w.TP), intp(w.GPUs), intp(w.MaxModelLen)
	j.GGUFType, j.NCtx = strp(w.Quant), intp(w.NCtx)
	if w.GPULayers >= 0 {
		n := w.GPULayers
		j.NGL = &n
	}
	j.Quantization = strp(w.Quantization)
	if w.TrainableParams > 0 {
		j.TrainableParams = &w.TrainableParams
	}
	if w.AllParams > 0 {
		j.AllParams = &w.AllParams
	}
	j.Batch, j.GradAccumSteps, j.SeqLen = intp(w.Batch), intp(w.AccumSteps), intp(w.SeqLen)
	j.Precision, j.GradientCheckpointing, j.Optimizer = strp(w.Precision), w.GradCheckpointing, strp(w.Optimizer)
	if w.GPUMemoryUtilization > 0 {
		u := w.GPUMemoryUtilization
		j.GPUMemoryUtilization = &u
	}
	j.KVCacheDtype = strp(w.KVCacheDtype)
	return j
}
