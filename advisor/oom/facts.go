package oom

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Facts are what the paste says beyond the OOM message: the workload it
// names (Trainer arguments, a vLLM or llama.cpp command line, a config
// dump), the engine's own memory numbers, memory readings over the steps
// before the failure, how far the job got, and what the stack shows of the
// model and its context. Parse reads them from the region around the OOM;
// Diagnose turns them into causes and sized fixes. They are not part of
// the JSON contract.
type Facts struct {
	Workload PasteWorkload
	Engine   EngineNumbers
	Growth   Growth
	// Steps is the highest step, iteration or epoch counter printed before
	// the OOM (0 when none): a job that ran many steps fitted at first.
	Steps int
	// Convolutional reports a model made of convolutions with no sign of
	// attention (a CNN): attention and logits fixes do not apply.
	Convolutional bool
	// NoGrad reports that the failing code already runs without autograd
	// (no_grad, inference_mode, generate()).
	NoGrad bool
	// KeptTensors quotes a line that keeps graph-holding tensors across
	// steps ("losses.append(loss)"), the classic leak.
	KeptTensors string
	// GGMLBuffer is what the ggml buffer that failed holds: "weights",
	// "kv" or "compute" ("" when not ggml or not said).
	GGMLBuffer string
	// Training reports a paste that shows a training step (backward, an
	// optimizer step, a trainer's loop).
	Training bool
	// ROCm reports a paste from a ROCm build (HIP, an AMD GPU's gfx name),
	// whose device is still named cuda:N.
	ROCm bool
	// text is the region the facts were read from, for the readers of
	// one engine's lines; frames the OOM's traceback, innermost first.
	text   string
	frames []frame
}

// PasteWorkload is the workload the paste names; zero values are unknown.
// Read lists what each setting was read from, for the reply
// (docs/oom-diagnosis.md §3).
type PasteWorkload struct {
	Model             string // as named: a catalog name, a Hugging Face id, a GGUF file
	Batch             int    // per-device micro-batch
	AccumSteps        int
	SeqLen            int    // a training run's sequence length
	Precision         string // "bf16", "fp16", "fp32"
	GradCheckpointing *bool
	// Method is "lora" or "qlora" where the paste shows an adapter (or
	// jobMethod decides from the whole paste); Adapter says what showed it.
	Method    string
	ZeroStage int    // -1 unknown
	Offload   string // "optimizer", "param"
	// Sharding is FSDP's strategy when the paste shows FSDP ("full-shard",
	// "shard-grad-op", "no-shard").
	Sharding             string
	GPUs                 int
	TP                   int
	MaxModelLen          int // a serving engine's context (vLLM, SGLang, TGI)
	NCtx                 int // llama.cpp's -c / Ollama's num_ctx as given
	GPUMemoryUtilization float64
	GPULayers            int    // llama.cpp -ngl as given (-1 unknown)
	Quant                string // a GGUF type ("Q4_K_M")
	// Quantization is how the weights are stored when not in a GGUF:
	// "bnb-4bit", "bnb-8bit", or the engine's word ("awq", "gptq", "fp8").
	Quantization string
	// TrainableParams and AllParams are PEFT's (or Unsloth's) own count.
	TrainableParams, AllParams int64
	Optimizer                  string
	KVCacheDtype               string
	// BatchedTokens is the most tokens an engine runs in one forward pass
	// (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens, TGI
	// max-batch-prefill-tokens, SGLang chunked-prefill-size).
	BatchedTokens int
	// MaxSeqs is the most sequences an engine batches (vLLM max_num_seqs,
	// TensorRT-LLM max_batch_size, SGLang max_running_requests).
	MaxSeqs int
	// Engine is the program that ran the job, in the job vocabulary (hf,
	// vllm, sglang, tgi, tensorrt-llm, llama.cpp, ollama).
	Engine string
	// Trainer is the training stack whose defaults the estimator fills in
	// (memory.Framework: trl, unsloth, llama-factory, axolotl, torchtune,
	// lightning, hf), as the paste's paths and banners show it.
	Trainer string
	// Training and Inference are what the paste shows of the job's kind.
	Training, Inference bool
	Read                []Reading
}

// EngineNumbers are the memory numbers a serving engine logs at start-up.
type EngineNumbers struct {
	// vLLM
	WeightsBytes, KVAvailableBytes, KVNeededBytes int64
	KVTokens, EstimatedMaxLen, MaxSeqLen          int
	TotalBytes                                    int64
	// NoCacheMemory is vLLM's "No available memory for the cache blocks":
	// the weights and the profiling peak left nothing of the budget. V0
	// reports lines only the V0 engine prints (its worker processes, "#
	// GPU blocks", "Memory profiling results").
	NoCacheMemory, V0 bool
	// llama.cpp: the model's layers on the GPU (of Layers), the GPU
	// buffers (weights, KV cache, compute), the context, the free VRAM.
	OffloadedLayers, Layers, Ctx                             int
	GPUModelBytes, GPUKVBytes, GPUComputeBytes, GPUFreeBytes int64
	// KVTokenLayerBytes is what one token of one layer's KV cache takes
	// (print_info's n_embd_k_gqa + n_embd_v_gqa in the cache's type).
	KVTokenLayerBytes int64
	// Ollama's own plan: the repeating layers' weights and the whole KV
	// cache it sized ("offload to cuda" ... memory.weights.repeating,
	// memory.required.kv).
	RepeatingWeightsBytes, OllamaKVBytes int64
}

// Growth is the memory a log reports over the steps before the OOM.
type Growth struct {
	From, To int64
	Readings int
	Label    string // what the log calls it ("max_memory_allocated", "mem")
}

// Grows reports memory that rose by a quarter and at least a GiB over
// three or more readings, or an explicit "A → B" of half again as much.
func (g Growth) Grows() bool {
	return g.Readings >= 2 && g.To-g.From >= gib && float64(g.To) >= growthFactor*float64(g.From)
}

// Thresholds of the paste readers.
const (
	// growthFactor: memory that grows by a quarter while the work per step
	// stays the same is held across steps.
	growthFactor = 1.25
	// risingShare: the share of readings that must not fall for a series
	// to count as growing.
	risingShare = 0.7
	// manySteps: a job that ran this many steps before its OOM fitted at
	// the start; the cause is what changes between steps.
	manySteps = 100
	// factsReach bounds the text the readers look at: the region around
	// the OOM, whose size Parse already bounds; maxReadings the memory
	// readings kept from it.
	factsReach = 96 << 10
	// maxReadingLines and maxStepLines bound the log lines read for memory
	// readings and step counters: the last ones before the OOM, where the
	// trend that led to it and the step it reached are.
	maxReadingLines = 128
	maxStepLines    = 32
)

var (

	// vLLM's start-up numbers.
	reVLLMWeightsTook = regexp.MustCompile(`(?:Model loading took|Loading model weights took)\s+` + sizePattern)
	reVLLMAvailKV     = regexp.MustCompile(`Available KV cache memory:\s*` + sizePattern)
	reVLLMKVTokensLog = regexp.MustCompile(`GPU KV cache size:\s*([\d,]+) tokens`)
	reVLLMTotalMem    = regexp.MustCompile(`total_gpu_memory\s*[=(]\s*` + sizePattern)

	// llama.cpp's start-up numbers.
	reGGMLOffloaded = regexp.MustCompile(`offloaded (\d+)/(\d+) layers to GPU`)
	reGGMLNLayer    = regexp.MustCompile(`\bn_layer\s*=\s*(\d+)`)
	reGGMLNCtx      = regexp.MustCompile(`\bn_ctx\s*=\s*(\d+)`)
	reGGMLModelBuf  = regexp.MustCompile(`(?:CUDA|ROCm|Metal|Vulkan|SYCL)\d*(?: model)? buffer size\s*=\s*` + sizePattern)
	reGGMLKVBuf     = regexp.MustCompile(`(?:CUDA|ROCm|Metal|Vulkan|SYCL)\d* KV buffer size\s*=\s*` + sizePattern)
	reGGMLCompBuf   = regexp.MustCompile(`(?:CUDA|ROCm|Metal|Vulkan|SYCL)\d* compute buffer size\s*=\s*` + sizePattern)
	reGGMLFreeVRAM  = regexp.MustCompile(`using device (?:CUDA|ROCm|Vulkan|SYCL)\d+ \([^)]*\)[^\n]*?- (\d+) MiB free`)

	// reMemArrow is an explicit before → after ("18 GB → 39 GB").
	reMemArrow = regexp.MustCompile(`(\d{1,7}(?:\.\d{1,3})?)\s?([KMGT]i?B)\s*(?:→|->|=>|-->)\s*(\d{1,7}(?:\.\d{1,3})?)\s?([KMGT]i?B)`)
	// Progress: "step 1500", "iter: 2,800", "global_step=208", a tqdm
	// "450/1000 [", "Epoch 3".
	// It reads a lower-cased line.
	reStepCounter = regexp.MustCompile(`\b(?:global_step|step|iter(?:ation)?|it)\b\s*[:=]?\s*(\d{1,3}(?:,\d{3})+|\d{1,9})\b|\|\s*(\d{1,9})/\d{1,9}\s*\[`)

	// The model's kind, from frames and source lines.
	reConvEvidence      = regexp.MustCompile(`torch/nn/modules/(?:conv|batchnorm|pooling)\.py|\bF\.conv[123]d\(|\bconv[123]d\(|\bConv[123]d\b|torchvision/models/|BatchNorm[123]d|\bresnet\d*\b|\bvgg\d*\b|efficientnet|mobilenet|\byolo`)
	reAttentionEvidence = regexp.MustCompile(`(?i)attention|attn|transformers/models/|modeling_\w+\.py|scaled_dot_product|softmax\(|multiheadattention|\bvit\b|swin|diffusers|\bllama|\bbert\b|\bgpt|\bqwen|mistral|transformer`)
	reNoGrad            = regexp.MustCompile(`with torch\.(?:no_grad|inference_mode)\(\)|@torch\.(?:no_grad|inference_mode)\(\)|torch/utils/_contextlib\.py", line \d+, in decorate_context|torch\.set_grad_enabled\(False\)`)
	// reKeptTensors is a loss or output tensor kept across steps without
	// .item()/.detach(): appended to a list or summed into a total.
	reKeptTensors = regexp.MustCompile(`\b\w*(?:losses|outputs|preds|logits|results|history)\w*\.append\(\s*(?:loss|outputs?|logits|preds?|out)\w*\s*\)|\b(?:total|running|epoch|train|sum)_?loss\s*\+=\s*loss\w*\s*(?:$|[^.\w])`)
)

// pasteText is a region of the paste with its lower-case copy, so that a
// reader runs its regular expression only where a cheap search finds the
// words it needs (Go's regexp costs far more per byte than strings.Index).
type pasteText struct{ s, lower string }

// has reports whether the text holds any of the lower-case words.
func (t pasteText) has(words ...string) bool {
	for _, w := range words {
		if strings.Contains(t.lower, w) {
			return true
		}
	}
	return false
}

// readFacts reads the facts from text, of which the OOM is at offset at.
func readFacts(text string, at int, frames []frame) Facts {
	if len(text) > factsReach {
		lo := max(0, at-factsReach*2/3)
		text, at = text[lo:min(len(text), lo+factsReach)], at-lo
	}
	t := pasteText{text, strings.ToLower(text)}
	before := text[:max(0, min(at, len(text)))]
	f := Facts{Workload: readWorkload(t, frames), Engine: readEngine(t), Growth: readGrowth(before), Steps: readSteps(before), text: text, frames: frames}
	f.Convolutional = t.has("conv", "resnet", "vgg", "batchnorm", "torchvision", "efficientnet", "mobilenet", "yolo") &&
		reConvEvidence.MatchString(text) && !reAttentionEvidence.MatchString(text)
	f.NoGrad = t.has("no_grad", "inference_mode", "decorate_context", "set_grad_enabled") && reNoGrad.MatchString(text)
	f.Training = f.Workload.Training
	f.ROCm = t.has("hip out of memory", "pytorch_hip_alloc_conf", "/rocm", "rocm/", "rocm-smi", "hipmalloc", "hip error", "amd instinct", "radeon", "gfx90a", "gfx942", "gfx1100", "gfx1151")
	for _, fr := range frames {
		if generateFns[fr.fn] {
			f.NoGrad = true
		}
		if m := reKeptTensors.FindString(fr.src); m != "" && f.KeptTensors == "" {
			f.KeptTensors = m
		}
	}
	if f.KeptTensors == "" && (strings.Contains(before, ".append(") || strings.Contains(before, "+=")) {
		f.KeptTensors = reKeptTensors.FindString(before)
	}
	return f
}

// lastInt returns the last match of group 1 (or the first non-empty group)
// of re in s as an int.
func lastInt(re *regexp.Regexp, s string) (int, bool) {
	ms := re.FindAllStringSubmatch(s, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		for _, g := range ms[i][1:] {
			if g != "" {
				if n, ok := intOf(g); ok {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// zeroStage is the ZeRO stage the paste shows (-1 when it does not): a
// frame of the stage's own optimizer file, else a config value.
func zeroStage(t pasteText, frames []frame) int {
	text := t.s
	for _, f := range frames {
		p := strings.ReplaceAll(f.path, `\`, "/")
		switch {
		case reZeroFrame3.MatchString(p):
			return 3
		case reZeroFrame2.MatchString(p):
			return 2
		}
	}
	if !t.has("zero", "deepspeed") {
		return -1
	}
	if m := reZeroStage.FindAllStringSubmatch(text, -1); m != nil {
		for _, g := range m[len(m)-1][1:] {
			if g != "" {
				n, _ := strconv.Atoi(g)
				return n
			}
		}
	}
	return -1
}

func readEngine(t pasteText) EngineNumbers {
	text := t.s
	var e EngineNumbers
	e.NoCacheMemory = strings.Contains(text, "No available memory for the cache blocks")
	e.V0 = strings.Contains(text, "VllmWorkerProcess") || strings.Contains(text, "# GPU blocks") ||
		strings.Contains(text, "Memory profiling results") || strings.Contains(text, "Loading model weights took")
	if t.has("kv cache", "took", "total_gpu_memory", "max seq len") {
		if n := findSize(reVLLMWeightsTook, text, 1); n != nil {
			e.WeightsBytes = *n
		}
		if n := findSize(reVLLMAvailKV, text, 1); n != nil {
			e.KVAvailableBytes = *n
		}
		if m := reVLLMV1.FindStringSubmatch(text); m != nil {
			if n := sizeAt(m, 1); n != nil {
				e.KVNeededBytes = *n
			}
			if n := sizeAt(m, 3); n != nil {
				e.KVAvailableBytes = *n
			}
		}
		if m := reVLLMKVTokensLog.FindStringSubmatch(text); m != nil {
			e.KVTokens, _ = intOf(m[1])
		} else if m := reVLLMKVTokens.FindStringSubmatch(text); m != nil {
			e.KVTokens, _ = intOf(m[1])
		}
		e.EstimatedMaxLen, _ = lastInt(reVLLMEstimate, text)
		e.MaxSeqLen, _ = lastInt(reVLLMMaxSeq, text)
		if n := findSize(reVLLMTotalMem, text, 1); n != nil {
			e.TotalBytes = *n
		}
	}
	readGGMLLayers(t, &e)
	if !t.has("layers to gpu", "n_layer", "n_ctx", "buffer size", "mib free") {
		return e
	}
	if m := reGGMLOffloaded.FindStringSubmatch(text); m != nil {
		e.OffloadedLayers, _ = intOf(m[1])
		e.Layers, _ = intOf(m[2])
	} else if n, ok := lastInt(reGGMLNLayer, text); ok {
		e.Layers = n + 1 // llama.cpp counts the output layer as one more
	}
	e.Ctx, _ = lastInt(reGGMLNCtx, text)
	sum := func(re *regexp.Regexp) int64 {
		var total int64
		for _, m := range re.FindAllStringSubmatch(text, 64) {
			if n := sizeAt(m, 1); n != nil {
				total += *n
			}
		}
		return total
	}
	if t.has("buffer size") {
		e.GPUModelBytes, e.GPUKVBytes, e.GPUComputeBytes = sum(reGGMLModelBuf), sum(reGGMLKVBuf), sum(reGGMLCompBuf)
	}
	if m := reGGMLFreeVRAM.FindStringSubmatch(text); m != nil {
		if n, ok := intOf(m[1]); ok {
			e.GPUFreeBytes = int64(n) << 20
		}
	}
	return e
}

var (
	reGGMLKGQA   = regexp.MustCompile(`\bn_embd_k_gqa\s*=\s*(\d{1,7})\b`)
	reGGMLVGQA   = regexp.MustCompile(`\bn_embd_v_gqa\s*=\s*(\d{1,7})\b`)
	reGGMLKVType = regexp.MustCompile(`type_k = '(\w+)', type_v = '(\w+)'`)
	// Ollama's "offload to cuda" line (server.go, memory.go).
	reOllamaLayers    = regexp.MustCompile(`layers\.model=(\d{1,4}) layers\.offload=(\d{1,4})`)
	reOllamaAvailable = regexp.MustCompile(`memory\.available="\[` + sizePattern)
	reOllamaKV        = regexp.MustCompile(`memory\.required\.kv="` + sizePattern)
	reOllamaRepeating = regexp.MustCompile(`memory\.weights\.repeating="` + sizePattern)
)

// kvTypeBytes are the bytes per element of llama.cpp's KV cache types.
var kvTypeBytes = map[string]float64{"f16": 2, "bf16": 2, "f32": 4, "q8_0": 34.0 / 32, "q4_0": 18.0 / 32, "q5_1": 24.0 / 32, "q5_0": 22.0 / 32, "q4_1": 20.0 / 32}

// readGGMLLayers reads what one layer's KV cache takes per token and
// Ollama's own offload plan.
func readGGMLLayers(t pasteText, e *EngineNumbers) {
	text := t.s
	if t.has("n_embd_k_gqa") {
		k, ok1 := lastInt(reGGMLKGQA, text)
		v, ok2 := lastInt(reGGMLVGQA, text)
		if ok1 && ok2 {
			kb, vb := 2.0, 2.0 // f16, llama.cpp's default
			if m := reGGMLKVType.FindStringSubmatch(text); m != nil {
				if b, ok := kvTypeBytes[m[1]]; ok {
					kb = b
				}
				if b, ok := kvTypeBytes[m[2]]; ok {
					vb = b
				}
			}
			e.KVTokenLayerBytes = int64(float64(k)*kb + float64(v)*vb)
		}
	}
	if !t.has("layers.model=") {
		return
	}
	if m := reOllamaLayers.FindStringSubmatch(text); m != nil {
		if n, ok := intOf(m[1]); ok && e.Layers == 0 {
			e.Layers = n
		}
		if n, ok := intOf(m[2]); ok && e.OffloadedLayers == 0 {
			e.OffloadedLayers = n
		}
	}
	if n := findSize(reOllamaAvailable, text, 1); n != nil && e.GPUFreeBytes == 0 {
		e.GPUFreeBytes = *n
	}
	if n := findSize(reOllamaKV, text, 1); n != nil {
		e.OllamaKVBytes = *n
	}
	if n := findSize(reOllamaRepeating, text, 1); n != nil {
		e.RepeatingWeightsBytes = *n
	}
}

// readGrowth finds the memory series a log prints before the OOM and
// returns the one that grew most, or an explicit "A → B".
func readGrowth(text string) Growth {
	type series struct {
		first, last, prev int64
		n, rises          int
	}
	all := map[string]*series{}
	var best Growth
	var ms []reading
	// An OOM message's own numbers are not a reading of the job's.
	for _, line := range lastLines(text, maxReadingLines, func(line string) bool {
		return memoryWord(line) && !strings.Contains(line, "out of memory") && !strings.Contains(line, "Tried to allocate") && !strings.Contains(line, "OutOfMemory")
	}) {
		ms = append(ms, memoryReadings(strings.ToLower(line))...)
	}
	for _, m := range ms {
		v, key := m.bytes, m.key
		s := all[key]
		if s == nil {
			s = &series{first: v, prev: v}
			all[key] = s
		}
		if v >= s.prev {
			s.rises++
		}
		s.prev, s.last = v, v
		s.n++
	}
	for _, key := range slices.Sorted(maps.Keys(all)) {
		s := all[key]
		// Mostly rising: a series that goes up and down is a per-step
		// reading of the same peak, not growth.
		if s.n >= 3 && float64(s.rises) >= risingShare*float64(s.n) && s.last-s.first > best.To-best.From {
			best = Growth{From: s.first, To: s.last, Readings: s.n, Label: key}
		}
	}
	var arrows [][]string
	for _, line := range lastLines(text, maxReadingLines, func(line string) bool {
		return strings.Contains(line, "→") || strings.Contains(line, "->") || strings.Contains(line, "=>")
	}) {
		arrows = append(arrows, reMemArrow.FindAllStringSubmatch(line, 4)...)
	}
	for _, m := range arrows {
		a, ok1 := parseSize(m[1], m[2])
		b, ok2 := parseSize(m[3], m[4])
		if ok1 && ok2 && b-a > best.To-best.From && float64(b) >= 1.5*float64(a) {
			best = Growth{From: a, To: b, Readings: 2, Label: "→"}
		}
	}
	return best
}

// memoryWords are the words a log prints a memory reading after, longest
// first so that "max_memory_allocated" is not read as "memory".
var memoryWords = []string{"max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved", "mem_usage",
	"gpu_memory", "gpu_mem", "memory used", "memory usage", "memory", "mem used", "mem", "vram", "allocated", "reserved"}

// reading is one memory value a log line gives after a memory word.
type reading struct {
	key   string
	bytes int64
}

// memoryReadings reads "word ... 12.3 GB" from a lower-cased line: a
// memory word (as a whole word), at most readingGap other bytes, a number
// and a size unit. A hand scan: Go's regexp takes far longer on it.
func memoryReadings(line string) []reading {
	var out []reading
	for i := 0; i < len(line) && len(out) < 4; {
		w, at := "", -1
		for _, cand := range memoryWords {
			if j := strings.Index(line[i:], cand); j >= 0 && (at < 0 || i+j < at || i+j == at && len(cand) > len(w)) {
				w, at = cand, i+j
			}
		}
		if at < 0 {
			break
		}
		end := at + len(w)
		i = end
		if at > 0 && isWordByte(line[at-1]) || end < len(line) && isWordByte(line[end]) {
			continue
		}
		k := end
		for k < len(line) && k-end <= readingGap && !isDigit(line[k]) && line[k] != '\n' {
			k++
		}
		n := k
		for n < len(line) && (isDigit(line[n]) || line[n] == '.') && n-k < 12 {
			n++
		}
		if n == k {
			continue
		}
		u := n
		if u < len(line) && line[u] == ' ' {
			u++
		}
		ue := u
		for ue < len(line) && ue-u < 3 && (line[ue] >= 'a' && line[ue] <= 'z') {
			ue++
		}
		unit := line[u:ue]
		switch unit {
		case "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "g", "m":
		default:
			continue
		}
		if v, ok := parseSize(strings.TrimSuffix(line[k:n], "."), unitCase(unit)); ok && v > 0 {
			out = append(out, reading{key: w, bytes: v})
		}
		i = ue
	}
	return out
}

// readingGap is how far after its word a memory value may stand
// ("mem_usage:cuda:0 8.9GB", "max_memory_allocated 31.2 GiB").
const readingGap = 24

// lastLines returns the last n lines of text that keep accepts, in order.
func lastLines(text string, n int, keep func(string) bool) []string {
	var out []string
	for end := len(text); end > 0 && len(out) < n; {
		start := strings.LastIndexByte(text[:end], '\n') + 1
		if line := text[start:end]; keep(line) {
			out = append(out, line)
		}
		end = start - 1
	}
	slices.Reverse(out)
	return out
}

// unitCase restores the case of a lower-cased size unit ("gib" → "GiB").
func unitCase(u string) string {
	if len(u) == 3 && u[1] == 'i' {
		return strings.ToUpper(u[:1]) + "iB"
	}
	return strings.ToUpper(u)
}

// memoryWord is the cheap test before a line is read for a memory value.
func memoryWord(line string) bool {
	for _, w := range []string{"mem", "Mem", "MEM", "alloc", "reserved", "vram", "VRAM"} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// readSteps returns the highest step counter printed in text.
func readSteps(text string) int {
	hi := 0
	for _, line := range lastLines(text, maxStepLines, func(line string) bool {
		return strings.Contains(line, "step") || strings.Contains(line, "Step") || strings.Contains(line, "iter") || strings.Contains(line, "it/s") || strings.Contains(line, "s/it")
	}) {
		for _, m := range reStepCounter.FindAllStringSubmatch(strings.ToLower(line), 4) {
			for _, g := range m[1:] {
				if v, ok := intOf(g); ok && v > hi {
					hi = v
				}
			}
		}
	}
	return hi
}

// stackFrames is the traceback of the report's OOM, innermost first.
func stackFrames(r Report) []frame { return r.Facts.frames }
