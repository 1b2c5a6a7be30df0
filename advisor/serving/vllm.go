package serving

import (
	"fmt"
	"math"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// vLLM's defaults and the memory it budgets, each with its source
// (docs/vllm-kv.md; docs/memory-model.md §1.8).
const (
	// DefaultGPUMemoryUtilization is --gpu-memory-utilization's default
	// (vllm/config/cache.py; 0.92 in 2026 builds, docs/vllm-kv.md §1).
	DefaultGPUMemoryUtilization = 0.9
	// DefaultBlockSize is vLLM's KV block on CUDA (DEFAULT_BLOCK_SIZE, §5);
	// mlaBlockSize is FlashMLA's, which vLLM picks for MLA models on GPUs
	// with FlashMLA (Hopper and newer: the catalog's fp8 cards).
	DefaultBlockSize = 16
	mlaBlockSize     = 64
	// vllm serve's scheduler limits (EngineArgs.get_batch_defaults, §2):
	// GPUs with at least 70 GiB that are not A100s get 8192 batched tokens
	// and 1024 sequences, the others 2048 and 256.
	largeGPUBytes         = 70 << 30
	largeBatchedTokens    = 8192
	largeNumSeqs          = 1024
	smallBatchedTokens    = 2048
	smallNumSeqs          = 256
	v0NumSeqs             = 256
	v0MinBatchedTokens    = 2048
	v0LongContext         = 32768 // V0 turns chunked prefill on above this max_model_len (since v0.5.4, vllm-project/vllm#6666)
	v0ChunkedBatchedToken = 512   // V0's max_num_batched_tokens under chunked prefill
	// fallbackMaxModelLen is vLLM's max_model_len when the config names
	// no context length (model.py _get_and_verify_max_len).
	fallbackMaxModelLen = 2048
	// activationElemBytes: activations are in the 16-bit compute dtype.
	activationElemBytes = 2
	// samplerBytesPerLogit is the V1 profile run's sampler peak per logit
	// (max_num_seqs × vocabulary) since vLLM 0.17: the dummy sampler skips
	// top-k, top-p and logprobs (gpu_model_runner.py _dummy_sampler_run:
	// "the sampler may skip top_k, top_p, and logprobs"), so it holds the
	// logits, their fp32 copy, the softmax and the sampling's noise and
	// quotient: about 15 bytes per logit. vLLM 0.19's profiles log a torch
	// peak of 1.89 GiB for Llama-3.1-8B (1024 × 128,256), 2.21 GiB for
	// Qwen3-8B (1024 × 151,936) and 3.65 GiB for Gemma-2 (1024 × 256,000)
	// (testdata/SOURCES.md, llm-d-planner).
	samplerBytesPerLogit = 15
	// legacySamplerBytesPerLogit: from 0.8 to 0.16 the dummy sampler ran
	// top-k and top-p through torch's sort (without FlashInfer's sampler),
	// holding the sorted copy, its int64 indices, the masks and the
	// scattered result beside the logits: 39 bytes per logit (Qwen3-14B's
	// 5.64 GiB on 0.15 and 0.16, Llama-3.1-8B's 4.76 GiB on 0.11,
	// gpt-oss-120b's ~7.4 GiB in vllm-project/vllm#23278 and #27508).
	legacySamplerBytesPerLogit = 39
	// legacyV1Minor is the release that dropped them (Qwen3-14B's KV
	// cache on one H100 grows from 41.94 GiB on 0.16 to 45.34 on 0.17).
	legacyV1Minor = 17
	// v0SamplerBytesPerLogit: V0's profile keeps the fp32 logits of its
	// max_num_seqs sequences (0.19 GiB for 256 × 152k in the log of
	// vllm-project/vllm#13061).
	v0SamplerBytesPerLogit = 4
	// fusedMoEChunk is the tokens fused_moe processes at once
	// (VLLM_FUSED_MOE_CHUNK_SIZE).
	fusedMoEChunk = 32768
	// nonTorchBytes is the non-torch memory the profile adds on one GPU
	// (cuBLAS and attention workspaces, allocator-external buffers):
	// 0.24-0.27 GiB in vLLM 0.19's profiles, 0.13 in 0.11's, 0.03-0.43 in
	// V0's (testdata/SOURCES.md).
	nonTorchBytes = 0.25 * (1 << 30)
	// nonTorchTPBytes: tensor parallelism adds NCCL's and the custom
	// all-reduce's buffers: 0.55 GiB on two H100s on 0.11, at most 0.6 on
	// two A100s on 0.10, 0.25 on two RTX 4090s on V0 0.7.
	nonTorchTPBytes = 0.6 * (1 << 30)
	// nonTorchNVSwitchBytes: ranks joined by an NVSwitch on Hopper and
	// Blackwell also hold NCCL's NVLink-SHARP and the symmetric-memory
	// all-reduce's buffers (VLLM_ALLREDUCE_USE_SYMM_MEM, on by default):
	// 2.06-2.21 GiB per H100 SXM with TP 2 and 4 on vLLM 0.19 whatever the
	// model (Llama-3.1-8B to -70B, Qwen2.5-7B and -72B, Mixtral, Scout).
	nonTorchNVSwitchBytes = 2.1 * (1 << 30)
	// cudaContextBytes is the CUDA context and NCCL state present before
	// V1's baseline snapshot: outside the budget, in nvidia-smi.
	cudaContextBytes = 0.5 * (1 << 30)
	// cudaContextMinBytes is the least a CUDA context holds (256 MiB bare,
	// with lazy module loading; docs/vllm-kv.md §1): V1 refuses to start
	// only when its budget exceeds even the memory free beside that.
	cudaContextMinBytes = 0.25 * (1 << 30)
	// cudaGraphBytes is the CUDA-graph pool: from v0.21 vLLM estimates it
	// before sizing the KV cache and takes it out of the budget
	// ("Estimated CUDA graph memory: 0.22-1.97 GiB total" in public logs);
	// before, it was captured after the KV cache, outside the budget ("took
	// 0.2-1.5 GiB" in the graph-capture lines).
	cudaGraphBytes = 0.5 * (1 << 30)
)

// vllmDefaults fills vLLM's defaults into d and says what it assumed.
func vllmDefaults(d Deployment, note func(string, ...any)) Deployment {
	if d.MemoryFraction <= 0 {
		d.MemoryFraction = DefaultGPUMemoryUtilization
		note("gpu_memory_utilization not given: %.2f (vLLM's default)", d.MemoryFraction)
	}
	if d.Generation == "" {
		d.Generation = GenerationV1
	}
	large := d.GPU.UsableBytes >= largeGPUBytes && !isA100(d.GPU)
	if d.Generation == GenerationV0 {
		if d.MaxNumSeqs <= 0 {
			d.MaxNumSeqs = v0NumSeqs
		}
		if d.MaxNumBatchedTokens <= 0 {
			if d.MaxModelLen > v0LongContext && !versionBefore(d.Version, 0, 5, 4) {
				d.MaxNumBatchedTokens = v0ChunkedBatchedToken
				note("max_num_batched_tokens not given: %d (V0 turns chunked prefill on above %d tokens of context)", d.MaxNumBatchedTokens, v0LongContext)
			} else {
				d.MaxNumBatchedTokens = max(d.MaxModelLen, v0MinBatchedTokens)
				note("max_num_batched_tokens not given: %d (V0 without chunked prefill profiles a whole max_model_len)", d.MaxNumBatchedTokens)
			}
		}
	} else {
		tokens, seqs, why := smallBatchedTokens, smallNumSeqs, "GPUs under 70 GiB and A100s"
		if large {
			tokens, seqs, why = largeBatchedTokens, largeNumSeqs, "GPUs of 70 GiB and more, A100s excepted"
		}
		if d.MaxNumBatchedTokens <= 0 {
			d.MaxNumBatchedTokens = tokens
			note("max_num_batched_tokens not given: %d (vllm serve's default on %s)", tokens, why)
		}
		if d.MaxNumSeqs <= 0 {
			d.MaxNumSeqs = seqs
			note("max_num_seqs not given: %d (vllm serve's default on %s)", seqs, why)
		}
	}
	if d.BlockSize <= 0 {
		d.BlockSize = DefaultBlockSize
		if hasMLA(d.Model) && d.GPU.FP8 {
			d.BlockSize = mlaBlockSize
		}
	}
	return d
}

// GenerationOf is the vLLM engine generation of a release: "v0" or a
// release before 0.8 (when V1 became the default) is V0, anything else V1.
func GenerationOf(version string) Generation {
	if strings.EqualFold(version, "v0") || (version != "" && versionBefore(version, 0, 8, 0)) {
		return GenerationV0
	}
	return GenerationV1
}

// versionBefore reports whether release v ("0.5.3") is older than
// major.minor.patch; an empty or unreadable version is a current one.
func versionBefore(v string, major, minor, patch int) bool {
	var a, b, c int
	if n, _ := fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d.%d", &a, &b, &c); n < 2 {
		return false
	}
	switch {
	case a != major:
		return a < major
	case b != minor:
		return b < minor
	}
	return c < patch
}

func isA100(g catalog.GPU) bool { return g.Key == "A100-80GB" || g.Key == "A100-40GB" }

// graphsInBudget reports whether the release takes its CUDA-graph
// estimate out of the budget: V1 from 0.21, and current vLLM when no
// release is named.
func graphsInBudget(d Deployment) bool {
	return d.Generation != GenerationV0 && !legacyV1(d) && (d.Version == "" || !versionBefore(d.Version, 0, 21, 0))
}

// legacyV1 reports whether the deployment names a V1 release from 0.8 to
// 0.16, whose profile differs from current vLLM's (the sampler's sort,
// smaller all-reduce buffers).
func legacyV1(d Deployment) bool {
	return d.Generation == GenerationV1 && d.Version != "" &&
		!versionBefore(d.Version, 0, 8, 0) && versionBefore(d.Version, 0, legacyV1Minor, 0)
}

// nvSwitched reports whether the GPU's ranks talk through an NVSwitch
// with NVLink SHARP: the SXM boards of Hopper and Blackwell (FP8-capable)
// and the Grace-Blackwell NVL72 racks; PCIe cards, NVL bridge pairs and
// A100s have no SHARP.
func nvSwitched(g catalog.GPU) bool {
	return g.FP8 && g.Variant == "sxm" || g.Family == "gb200" || g.Family == "gb300"
}

// samplerNote says which sampler the activation peak stands for.
func samplerNote(d Deployment) string {
	switch {
	case d.Generation == GenerationV0:
		return fmt.Sprintf("%d bytes per logit: V0 keeps the fp32 logits", v0SamplerBytesPerLogit)
	case legacyV1(d):
		return fmt.Sprintf("%d bytes per logit: 0.8-0.16 sort them for top-k and top-p", legacySamplerBytesPerLogit)
	}
	return fmt.Sprintf("%d bytes per logit: since 0.17 the profile skips top-k and top-p", samplerBytesPerLogit)
}

// nonTorchNote says what the non-torch term holds.
func nonTorchNote(d Deployment) string {
	switch {
	case d.TP <= 1:
		return "cuBLAS and attention workspaces"
	case nvSwitched(d.GPU) && !legacyV1(d):
		return "workspaces, NCCL and the symmetric-memory all-reduce over NVSwitch with NVLink SHARP"
	}
	return "workspaces, NCCL and the custom all-reduce"
}

// vllmNonTorch is the non-torch memory one GPU's profile adds: the
// workspaces, and with tensor parallelism the communicators' buffers,
// which on NVSwitch Hopper and Blackwell include NVLink SHARP's.
func vllmNonTorch(d Deployment) float64 {
	switch {
	case d.TP <= 1:
		return nonTorchBytes
	case nvSwitched(d.GPU) && !legacyV1(d):
		return nonTorchNVSwitchBytes
	}
	return nonTorchTPBytes
}

func hasMLA(m arch.Model) bool {
	for _, g := range m.Layers() {
		if g.Attention.Kind == arch.KindMLA {
			return true
		}
	}
	return false
}

// planVLLM reproduces vLLM's start-up (docs/vllm-kv.md §1-§4): the budget
// u × total, the weights per GPU, the profiled activation peak and
// non-torch memory, the KV cache that is left, its blocks, tokens and
// concurrency, and whether one max_model_len request fits.
func planVLLM(d Deployment, r *Result, note func(string, ...any)) {
	d = vllmDefaults(d, note)
	m := d.Model
	total := float64(d.GPU.UsableBytes)
	budget := math.Ceil(total * d.MemoryFraction)
	nonTorch := vllmNonTorch(d)
	// Every pipeline stage profiles its own GPU; all then use the fewest
	// blocks any of them has (get_kv_cache_configs), so the stage with the
	// fewest is the one reported.
	var p vllmStage
	for i, st := range stages(m, d.PP) {
		s := planVLLMStage(d, st, budget, nonTorch)
		if i == 0 || s.blocks < p.blocks || (s.blocks == p.blocks && s.available < p.available) {
			p = s
		}
	}
	specs, layout := p.specs, p.layout

	r.Deployment = d
	fillSettings(r, d)
	r.BudgetBytes = int64(budget)
	r.WeightsBytes = int64(p.weights)
	r.ActivationBytes = int64(p.act)
	r.NonTorchBytes = int64(nonTorch)
	r.GraphBytes = int64(cudaGraphBytes)
	r.KVCacheAvailableBytes = int64(p.available)
	r.KVBytesPerToken = int64(bytesPerToken(specs))
	if !r.quiet {
		note("activation peak: vLLM's profiling forward pass of %d tokens and its sampler over %d sequences (%s), estimated from the layer shapes", d.MaxNumBatchedTokens, min(d.MaxNumSeqs, d.MaxNumBatchedTokens), samplerNote(d))
		note("non-torch memory during profiling: %s (%s; estimated)", gib(nonTorch), nonTorchNote(d))
		if graphsInBudget(d) {
			note("CUDA graphs: since 0.21 vLLM estimates their pool (about %s) and takes it out of the budget before sizing the KV cache (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, the default); engine-version=0.17 to 0.20 captured them after it, outside the budget", gib(cudaGraphBytes))
		} else {
			note("CUDA graphs are captured after the KV cache is allocated: about %s outside the budget, seen in nvidia-smi", gib(cudaGraphBytes))
		}
		note("the GPU is empty at start-up (vLLM needs %s free)", gib(budget))
		if d.PP > 1 {
			note("pipeline stage reported: %d layers%s (the one with the fewest KV blocks)", p.st.layers, stageRole(p.st))
		}
	}
	weights, act, available := p.weights, p.act, p.available

	// V1 checks, before it loads anything, that the GPU has the whole
	// budget free (request_memory in v1/worker/utils.py); V0 does not.
	v1 := d.Generation != GenerationV0
	free := freeAtStart(d.GPU)
	switch {
	case len(specs) == 0:
		r.Failure, r.Error = FailNoKVCache, fmt.Sprintf("%s keeps no KV cache (an encoder-only model): vLLM serves it as a pooling model, not for generation", modelName(m))
		return
	case v1 && budget > free.most:
		r.Failure, r.Error = FailStartupMemory, fmt.Sprintf("ValueError: Free memory on device cuda:0 (%.2f/%.2f GiB) on startup is less than desired GPU memory utilization (%.2f, %.2f GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
			free.shown/(1<<30), total/(1<<30), d.MemoryFraction, budget/(1<<30))
		r.KVCacheAvailableBytes = 0
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: fmt.Sprintf("vLLM stops before loading the model: %.2f × %s asks for more than the GPU has free %s", d.MemoryFraction, gib(total), free.beside)})
		}
		r.NvidiaSMIBytes = int64(cudaContextBytes)
		return
	case v1 && budget > free.typical:
		note("gpu_memory_utilization %.2f asks for %s free at start-up: an idle GPU has %.2f-%.2f GiB free %s, so vLLM may refuse to start (\"Free memory on device … is less than desired GPU memory utilization\"); %.2f is safe", d.MemoryFraction, gib(budget), free.typical/(1<<30), free.most/(1<<30), free.beside, SafeUtilization(d.GPU))
	}
	switch {
	case weights > free.shown:
		r.Failure, r.Error = FailWeights, fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory while loading the model (%s of weights per GPU, %s on the GPU)", gib(weights), gib(total))
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: "the weights alone do not fit on one GPU: more tensor parallelism or a quantised checkpoint"})
		}
		return
	}
	if !r.quiet {
		r.Log = append(r.Log, vllmLoadLine(d, weights))
	}
	blocks := p.blocks
	r.Blocks = blocks
	r.KVCacheTokens = layout.tokens(blocks)
	r.MaxConcurrency = layout.concurrency(blocks, d.MaxModelLen)
	needed := layout.neededBytes(d.MaxModelLen)
	if d.Generation == GenerationV0 {
		vllmV0Verdict(d, r, available, layout, blocks)
		r.NvidiaSMIBytes = nvidiaSMI(r, total)
		return
	}
	if !r.quiet {
		means := fmt.Sprintf("%s × %.2f = %s budget − %s weights − %s activation peak − %s non-torch", gib(total), d.MemoryFraction, gib(budget), gib(weights), gib(act), gib(nonTorch))
		if graphsInBudget(d) {
			r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("Estimated CUDA graph memory: %.2f GiB total", cudaGraphBytes/(1<<30)),
				Means: "the CUDA-graph pool vLLM profiles and keeps out of the KV cache (estimated)"})
			means += fmt.Sprintf(" − %s CUDA graphs", gib(cudaGraphBytes))
		}
		r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("Available KV cache memory: %.2f GiB", available/(1<<30)), Means: means})
	}
	switch {
	case available <= 0:
		r.Failure, r.Error = FailKVMemory, "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
	case needed > available:
		r.MaxModelLenThatFits = layout.maxLenThatFits(available, d.MaxModelLen)
		r.Failure, r.Error = FailContext, fmt.Sprintf("ValueError: To serve at least one request with the model's max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %d. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
			d.MaxModelLen, needed/(1<<30), available/(1<<30), r.MaxModelLenThatFits)
	default:
		r.Starts = true
		if !r.quiet {
			r.Log = append(r.Log,
				LogLine{Text: fmt.Sprintf("GPU KV cache size: %s tokens", commas(r.KVCacheTokens)),
					Means: fmt.Sprintf("%d blocks of %d tokens; %s of KV per token on this GPU", blocks, layout.block, kib(float64(r.KVBytesPerToken)))},
				LogLine{Text: fmt.Sprintf("Maximum concurrency for %s tokens per request: %.2fx", commas(int64(d.MaxModelLen)), r.MaxConcurrency),
					Means: fmt.Sprintf("requests of the full %d tokens that fit in the cache at once", d.MaxModelLen)})
		}
	}
	if !r.Starts {
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: "vLLM stops at start-up"})
		}
	}
	r.NvidiaSMIBytes = nvidiaSMI(r, total)
}

// vllmStage is vLLM's profile of one pipeline stage's GPU.
type vllmStage struct {
	st                      stage
	weights, act, available float64
	specs                   []kvSpec
	layout                  kvLayout
	blocks                  int64
}

func planVLLMStage(d Deployment, st stage, budget, nonTorch float64) vllmStage {
	m := d.Model
	p := vllmStage{st: st, weights: weightsOnStage(m, d.DenseBytes, d.TP, st, d.GPU), act: activationPeak(m, d, st.last)}
	p.available = budget - p.weights - p.act - nonTorch
	if graphsInBudget(d) {
		p.available -= cudaGraphBytes
	}
	p.specs = kvSpecs(m, d.TP, st.layers, kvElemBytes(d.KVCacheDtype, d.DenseBytes))
	if d.Generation == GenerationV0 {
		p.specs = asFullAttention(p.specs)
	}
	p.layout = newLayout(p.specs, d.BlockSize, d.MaxNumBatchedTokens)
	p.blocks = p.layout.numBlocks(p.available)
	return p
}

func stageRole(st stage) string {
	switch {
	case st.first && st.last:
		return ""
	case st.first:
		return " and the embedding (first stage)"
	case st.last:
		return ", the output head and the sampler (last stage)"
	}
	return ""
}

// vllmV0Verdict is the V0 engine's check and lines: "# GPU blocks" and
// the max-seq-len check of raise_if_cache_size_invalid.
func vllmV0Verdict(d Deployment, r *Result, available float64, layout kvLayout, blocks int64) {
	r.KVCacheTokens = blocks * int64(layout.block)
	r.MaxConcurrency = float64(r.KVCacheTokens) / float64(d.MaxModelLen)
	if !r.quiet {
		r.Log = append(r.Log,
			LogLine{Text: fmt.Sprintf("Memory profiling results: total_gpu_memory=%.2fGiB kv_cache_size=%.2fGiB gpu_memory_utilization=%.2f", float64(r.TotalMemoryBytes)/(1<<30), available/(1<<30), d.MemoryFraction),
				Means: "the KV cache is what the budget leaves after weights, the activation peak and non-torch memory"},
			LogLine{Text: fmt.Sprintf("# GPU blocks: %d", blocks), Means: fmt.Sprintf("blocks of %d tokens: %s tokens", layout.block, commas(r.KVCacheTokens))})
	}
	switch {
	case blocks <= 0:
		r.Failure, r.Error = FailKVMemory, "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
	case r.KVCacheTokens < int64(d.MaxModelLen):
		r.MaxModelLenThatFits = int(r.KVCacheTokens)
		r.Failure, r.Error = FailContext, fmt.Sprintf("ValueError: The model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.", d.MaxModelLen, r.KVCacheTokens)
	default:
		r.Starts = true
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("Maximum concurrency for %d tokens per request: %.2fx", d.MaxModelLen, r.MaxConcurrency),
				Means: fmt.Sprintf("requests of the full %d tokens that fit in the cache at once", d.MaxModelLen)})
		}
	}
	if !r.Starts {
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: "vLLM stops at start-up"})
		}
	}
}

// vllmLoadLine is the weights line in the generation's spelling.
func vllmLoadLine(d Deployment, weights float64) LogLine {
	means := "weights on each GPU"
	if d.TP*d.PP > 1 {
		means = fmt.Sprintf("weights on each of the %d GPUs (tensor parallel %d, pipeline %d; embeddings and output head split, norms replicated)", d.TP*d.PP, d.TP, d.PP)
	}
	if d.Generation == GenerationV0 {
		return LogLine{Text: fmt.Sprintf("Loading model weights took %.4f GB", weights/(1<<30)), Means: means}
	}
	return LogLine{Text: fmt.Sprintf("Model loading took %.4f GiB", weights/(1<<30)), Means: means}
}

// SafeUtilization is the highest gpu_memory_utilization, in hundredths,
// whose budget an idle GPU has free beside a typical CUDA context: what
// V1's start-up check surely passes.
func SafeUtilization(g catalog.GPU) float64 {
	total := float64(g.UsableBytes)
	return math.Floor(100*freeAtStart(g).typical/total) / 100
}

// unifiedSafeUtilization is the gpu_memory_utilization vLLM's own recipes
// give for GB10, whose unified memory "can't satisfy vLLM's default" at
// start-up (vllm-project/recipes#632; docs/gpu-specs.md "Unified memory").
const unifiedSafeUtilization = 0.85

// startFree is what V1's start-up check finds free before it loads
// anything: at most, what to count on, and what its error prints.
type startFree struct {
	most, typical, shown float64
	beside               string // what else holds memory, for the notes
}

// freeAtStart: a discrete GPU has its total free beside the CUDA context
// (256-512 MiB). On unified memory CUDA counts the whole pool as the GPU's
// but finds free only what the host leaves (MemAvailable): at least its
// idle share (HostBytes), and with the page cache of the checkpoint just
// read or a desktop session, the recipes' 0.85 is what to count on.
func freeAtStart(g catalog.GPU) startFree {
	total := float64(g.UsableBytes)
	if g.Unified() {
		most := total - float64(g.HostBytes)
		return startFree{most: most, typical: math.Min(most, unifiedSafeUtilization*total), shown: most,
			beside: fmt.Sprintf("beside the host's share of its unified memory (%s at least, more with the page cache)", gib(float64(g.HostBytes)))}
	}
	return startFree{most: total - cudaContextMinBytes, typical: total - cudaContextBytes, shown: total - cudaContextBytes,
		beside: fmt.Sprintf("beside the CUDA context (%.2f-%.2f GiB)", cudaContextMinBytes/(1<<30), cudaContextBytes/(1<<30))}
}

// nvidiaSMI is what nvidia-smi shows per GPU once the engine is up: the
// budget (it allocates the whole KV cache), the CUDA context, and before
// 0.21 the graph pool outside the budget; when it fails, what it held when
// it stopped.
func nvidiaSMI(r *Result, total float64) int64 {
	if !r.Starts {
		return int64(math.Min(total, float64(r.WeightsBytes)+float64(r.ActivationBytes)+cudaContextBytes))
	}
	if graphsInBudget(r.Deployment) {
		return int64(math.Min(total, float64(r.BudgetBytes)+cudaContextBytes))
	}
	return int64(math.Min(total, float64(r.BudgetBytes+r.GraphBytes)+cudaContextBytes))
}

// asFullAttention is V0's view: every attention layer caches the whole
// context (V0 has no sliding-window or state groups).
func asFullAttention(specs []kvSpec) []kvSpec {
	out := make([]kvSpec, 0, len(specs))
	for _, s := range specs {
		if s.kind == arch.KindLinear {
			continue
		}
		if s.kind != arch.KindMLA {
			s.kind, s.window = arch.KindFull, 0
		}
		out = append(out, s)
	}
	return out
}

// activationPeak is torch's peak increase during vLLM's profile run on
// one GPU (docs/vllm-kv.md §2): the dummy forward pass over
// max_num_batched_tokens tokens, whose largest live set is one layer's
// widest intermediate (the MLP's gate/up and activation, or fused_moe's
// caches) beside the hidden state and residual, in the model's dtype; and
// the dummy sampler over max_num_seqs sequences of the full vocabulary,
// which holds the forward's output meanwhile and, in V1, the fused-MoE
// workspace the forward left allocated. The peak is the larger of the two.
func activationPeak(m arch.Model, d Deployment, sampling bool) float64 {
	tokens := float64(d.MaxNumBatchedTokens)
	elem := d.DenseBytes
	forward := tokens * elem * widestPerToken(m, d.TP, d.MaxNumBatchedTokens)
	if !sampling {
		return forward // pipeline stages before the last neither compute logits nor sample
	}
	perLogit, kept := float64(samplerBytesPerLogit), tokens*elem*moeWorkspacePerToken(m, d.TP, d.MaxNumBatchedTokens)
	switch {
	case d.Generation == GenerationV0:
		perLogit, kept = v0SamplerBytesPerLogit, 0
	case legacyV1(d):
		perLogit = legacySamplerBytesPerLogit
	}
	seqs := float64(min(d.MaxNumSeqs, d.MaxNumBatchedTokens))
	sampler := seqs*float64(m.VocabSize)*perLogit + tokens*float64(m.HiddenSize)*elem + kept
	return math.Max(forward, sampler)
}

// moeWorkspacePerToken is the elements per token of the fused-MoE
// workspace the forward pass leaves allocated: the modular kernel keeps
// its intermediate caches in shared, resizable buffers between calls
// (fused_moe/modular_kernel.py SharedResizableBuffer), so they are still
// live while the sampler runs — e.g. 0.53 GiB of Qwen3-30B-A3B's 2.68 GiB
// peak on vLLM 0.19. MXFP4 experts run through the Triton/FlashInfer
// MXFP4 kernels, which allocate per call (gpt-oss-20b's peak is its
// sampler's alone).
func moeWorkspacePerToken(m arch.Model, tp, tokens int) float64 {
	if m.Quant != nil && m.Quant.Method == "mxfp4" && m.Quant.Quantises(arch.TensorExperts) {
		return 0
	}
	var widest float64
	for _, g := range m.Layers() {
		if g.FFN.IsMoE() {
			widest = math.Max(widest, moeCachePerToken(g.FFN, float64(m.HiddenSize), float64(tp), tokens))
		}
	}
	return widest
}

// moeCachePerToken is fused_moe's intermediate caches per token of a
// chunk: [T, k, 2I], [T·k, I] and [T, k, h] (cache1/2/3), I split by tp;
// above VLLM_FUSED_MOE_CHUNK_SIZE tokens they hold one chunk.
func moeCachePerToken(f arch.FFN, h, t float64, tokens int) float64 {
	k := float64(max(1, f.ActiveExperts))
	chunk := math.Min(1, fusedMoEChunk/math.Max(1, float64(tokens)))
	return chunk * k * (3*float64(f.ExpertIntermediate)/t + h)
}

// widestPerToken is the elements per token of the largest live set of a
// forward pass on one tensor-parallel rank: 3h (input, residual, output)
// plus the widest block intermediate.
func widestPerToken(m arch.Model, tp, tokens int) float64 {
	h := float64(m.HiddenSize)
	t := float64(tp)
	var widest float64
	for _, g := range m.Layers() {
		f := g.FFN
		var ffn float64
		if f.Intermediate > 0 {
			ffn = 3 * float64(f.Intermediate) / t
		}
		if f.IsMoE() {
			ffn += moeCachePerToken(f, h, t, tokens) + 3*float64(f.SharedIntermediate)/t
		}
		a := g.Attention
		attn := float64(2*a.Heads*a.HeadDim+2*a.KVHeads*a.HeadDim) / t
		if a.Kind == arch.KindLinear {
			attn = float64(2*a.LinearKeyHeads*a.LinearKeyDim+2*a.LinearValueHeads*a.LinearValueDim) / t
		}
		widest = math.Max(widest, math.Max(ffn, attn))
	}
	return 3*h + widest
}

// fillSettings copies the resolved settings into the result.
func fillSettings(r *Result, d Deployment) {
	r.MemoryFraction = d.MemoryFraction
	r.MaxModelLen = d.MaxModelLen
	r.TP, r.PP = d.TP, d.PP
	r.MaxNumSeqs = d.MaxNumSeqs
	r.MaxNumBatchedTokens = d.MaxNumBatchedTokens
	r.BlockSize = d.BlockSize
	r.KVCacheDtype = kvName(d.KVCacheDtype)
	r.TotalMemoryBytes = d.GPU.UsableBytes
}

func kvName(dtype string) string {
	if dtype == KVAuto {
		return "auto"
	}
	return dtype
}

func modelName(m arch.Model) string {
	if m.Name != "" {
		return m.Name
	}
	return "the model"
}
