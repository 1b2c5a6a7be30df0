package serving

import (
	"fmt"
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
)

// SGLang: the token pool is what mem_fraction_static of the GPU leaves
// after the weights and what was in use before them (ModelRunner.
// profile_max_num_token: rest = free after loading − total × (1 −
// mem_fraction_static); #tokens = rest / cell size). Activations and CUDA
// graphs live in the 1 − mem_fraction_static it keeps back.
const (
	// sglangPreloadBytes is the CUDA context, NCCL and cuBLAS state in use
	// before the weights load; more with tensor parallelism. Calibrated on
	// the Qwen3-235B-A22B-FP8 4×H100 log of vllm-project/vllm#21348
	// (367,404 tokens at mem_fraction_static 0.93).
	sglangPreloadBytes   = 1.0 * (1 << 30)
	sglangPreloadTPBytes = 2.0 * (1 << 30)
	// sglangChunkedPrefill is chunked_prefill_size's default on large GPUs.
	sglangChunkedPrefill = 8192
)

// sglangMemFraction is mem_fraction_static's default by tensor-parallel
// size (sglang/srt/server_args.py, 2024-2025 releases).
func sglangMemFraction(tp int) float64 {
	switch {
	case tp >= 16:
		return 0.79
	case tp >= 8:
		return 0.81
	case tp >= 4:
		return 0.85
	case tp >= 2:
		return 0.87
	}
	return 0.88
}

func planSGLang(d Deployment, r *Result, note func(string, ...any)) {
	if d.MemoryFraction <= 0 {
		d.MemoryFraction = sglangMemFraction(d.TP)
		note("mem_fraction_static not given: %.2f (SGLang's default for tp=%d)", d.MemoryFraction, d.TP)
	}
	if d.MaxNumBatchedTokens <= 0 {
		d.MaxNumBatchedTokens = sglangChunkedPrefill
	}
	m := d.Model
	total := float64(d.GPU.UsableBytes)
	weights := weightsPerGPU(m, d.DenseBytes, d.TP, d.PP, d.GPU)
	preload := sglangPreloadBytes
	if d.TP*d.PP > 1 {
		preload = sglangPreloadTPBytes
	}
	specs := asFullAttention(kvSpecs(m, d.TP, stages(m, d.PP)[0].layers, kvElemBytes(d.KVCacheDtype, d.DenseBytes)))
	cell := bytesPerToken(specs)
	rest := total*d.MemoryFraction - weights - preload
	r.Deployment = d
	fillSettings(r, d)
	r.BudgetBytes = int64(total * d.MemoryFraction)
	r.WeightsBytes = int64(weights)
	r.NonTorchBytes = int64(preload)
	r.KVCacheAvailableBytes = int64(rest)
	r.KVBytesPerToken = int64(cell)
	note("SGLang's pool keeps every attention layer's K and V for every token (no sliding-window pool)")
	note("memory in use before the weights load: %s (CUDA context, NCCL; estimated)", gib(preload))
	if len(specs) == 0 || cell <= 0 {
		r.Failure, r.Error = FailNoKVCache, fmt.Sprintf("%s keeps no KV cache: SGLang serves it for embeddings, not generation", modelName(m))
		return
	}
	if !r.quiet {
		r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("Load weight end. mem usage=%.2f GB", weights/(1<<30)), Means: "weights on each GPU"})
	}
	if weights > total-preload {
		r.Failure, r.Error = FailWeights, fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory while loading the weights (%s per GPU, %s on the GPU)", gib(weights), gib(total))
		return
	}
	tokens := int64(math.Max(0, rest) / cell)
	r.KVCacheTokens = tokens
	r.MaxConcurrency = float64(tokens) / float64(d.MaxModelLen)
	if tokens <= 0 {
		r.Failure, r.Error = FailKVMemory, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: "SGLang stops at start-up"})
		}
		return
	}
	r.Starts = true
	half := rest / 2
	if hasMLA(m) {
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("KV Cache is allocated. #tokens: %d, KV size: %.2f GB", tokens, rest/(1<<30)),
				Means: fmt.Sprintf("%s × %.2f − %s weights − %s in use before them", gib(total), d.MemoryFraction, gib(weights), gib(preload))})
		}
	} else {
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB", tokens, half/(1<<30), half/(1<<30)),
				Means: fmt.Sprintf("%s × %.2f − %s weights − %s in use before them", gib(total), d.MemoryFraction, gib(weights), gib(preload))})
		}
	}
	if !r.quiet {
		r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("max_total_num_tokens=%d, context_len=%d", tokens, d.MaxModelLen),
			Means: fmt.Sprintf("%.2f requests of the full context fit at once", r.MaxConcurrency)})
	}
	r.NvidiaSMIBytes = int64(math.Min(total, total*d.MemoryFraction+cudaGraphBytes))
}

// TGI: after a warm-up prefill of max_batch_prefill_tokens, the free
// memory (× cuda_memory_fraction) less 5% "wiggle room" becomes KV blocks
// (flash_causal_lm.py warmup: num_blocks = free × TGI_WIGGLE_ROOM //
// block bytes).
const (
	tgiWiggleRoom        = 0.95
	tgiBlockSize         = 16
	tgiDefaultPrefill    = 4096
	tgiMemoryFraction    = 1.0
	tgiContextBytes      = 0.75 * (1 << 30) // CUDA context and NCCL, estimated
	llamaCppDefaultBatch = 512              // llama.cpp -ub (n_ubatch) default
)

func planTGI(d Deployment, r *Result, note func(string, ...any)) {
	if d.MemoryFraction <= 0 {
		d.MemoryFraction = tgiMemoryFraction
	}
	if d.MaxNumBatchedTokens <= 0 {
		d.MaxNumBatchedTokens = min(tgiDefaultPrefill, d.MaxModelLen)
		note("max_batch_prefill_tokens not given: %d (assumed; TGI v3 sizes it from memory)", d.MaxNumBatchedTokens)
	}
	if d.BlockSize <= 0 {
		d.BlockSize = tgiBlockSize
	}
	m := d.Model
	total := float64(d.GPU.UsableBytes)
	weights := weightsPerGPU(m, d.DenseBytes, d.TP, d.PP, d.GPU)
	warmup := float64(d.MaxNumBatchedTokens) * activationElemBytes * widestPerToken(m, d.TP, d.MaxNumBatchedTokens)
	free := total*d.MemoryFraction - weights - warmup - tgiContextBytes
	kv := free * tgiWiggleRoom
	specs := asFullAttention(kvSpecs(m, d.TP, stages(m, d.PP)[0].layers, kvElemBytes(d.KVCacheDtype, d.DenseBytes)))
	cell := bytesPerToken(specs)
	r.Deployment = d
	fillSettings(r, d)
	r.BudgetBytes = int64(total * d.MemoryFraction)
	r.WeightsBytes = int64(weights)
	r.ActivationBytes = int64(warmup)
	r.NonTorchBytes = int64(tgiContextBytes)
	r.KVCacheAvailableBytes = int64(kv)
	r.KVBytesPerToken = int64(cell)
	note("cuda_memory_fraction %.2f; TGI keeps 5%% of the free memory back (TGI_WIGGLE_ROOM)", d.MemoryFraction)
	if len(specs) == 0 || cell <= 0 {
		r.Failure, r.Error = FailNoKVCache, fmt.Sprintf("%s keeps no KV cache: TGI does not serve it for generation", modelName(m))
		return
	}
	if weights > total-tgiContextBytes {
		r.Failure, r.Error = FailWeights, fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory while loading the weights (%s per GPU, %s on the GPU)", gib(weights), gib(total))
		return
	}
	blockBytes := float64(d.BlockSize) * cell
	blocks := int64(math.Max(0, kv) / blockBytes)
	r.Blocks = blocks
	r.KVCacheTokens = blocks * int64(d.BlockSize)
	r.MaxConcurrency = float64(r.KVCacheTokens) / float64(d.MaxModelLen)
	if !r.quiet {
		r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("KV-cache blocks: %d, size: %d", blocks, d.BlockSize),
			Means: fmt.Sprintf("95%% of the %s left after %s of weights and the %d-token warm-up prefill", gib(math.Max(0, free)), gib(weights), d.MaxNumBatchedTokens)})
	}
	if r.KVCacheTokens < int64(d.MaxModelLen) && r.Input.MaxModelLen <= 0 && r.KVCacheTokens >= tgiBlockSize {
		// TGI v3 infers max_total_tokens from memory when it is not set.
		d.MaxModelLen = int(r.KVCacheTokens)
		r.MaxModelLen = d.MaxModelLen
		r.MaxConcurrency = 1
		note("max_total_tokens lowered to %d: TGI v3 picks what fits when it is not set", d.MaxModelLen)
	}
	if r.KVCacheTokens < int64(d.MaxModelLen) {
		r.MaxModelLenThatFits = int(r.KVCacheTokens)
		r.Failure, r.Error = FailContext, fmt.Sprintf("TGI refuses to start: the KV cache holds %d tokens (max batch total tokens), fewer than max_total_tokens %d; lower --max-total-tokens", r.KVCacheTokens, d.MaxModelLen)
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: "TGI stops at start-up"})
		}
		return
	}
	r.Starts = true
	if !r.quiet {
		r.Log = append(r.Log, LogLine{Text: fmt.Sprintf("Setting max batch total tokens to %d", r.KVCacheTokens),
			Means: fmt.Sprintf("%.2f requests of max_total_tokens %d fit at once", r.MaxConcurrency, d.MaxModelLen)})
	}
	r.NvidiaSMIBytes = int64(math.Min(total, weights+warmup+tgiContextBytes+float64(r.KVCacheTokens)*cell))
}

// llama.cpp and Ollama: layers are offloaded to the GPU one by one (-ngl;
// the output head counts as one more), the KV cache of the offloaded
// layers sits beside them (f16 unless --cache-type-k/-v or
// OLLAMA_KV_CACHE_TYPE say q8_0/q4_0), plus a compute buffer of one
// micro-batch and the CUDA context.
const (
	// llamaCppDefaultContext is llama-server's -c default.
	llamaCppDefaultContext = 4096
	// llamaCppDefaultQuant is the GGUF type assumed when none is named:
	// the one Ollama's default tags ship.
	llamaCppDefaultQuant = "q4_k_m"
	// llamaCppDefaultBits is Q4_K_M's average bits per weight on
	// Llama-3.1-8B (llama.cpp tools/quantize/README.md).
	llamaCppDefaultBits  = 4.8944
	llamaCppContextBytes = 0.4 * (1 << 30) // CUDA runtime and cuBLAS, estimated
	// llamaCppCacheBytes: --cache-type-k/-v default to f16 whatever the
	// weights are stored in.
	llamaCppCacheBytes = 2
)

// ollamaDefaultContext is num_ctx by the GPU's memory (Ollama's
// docs/context-length.mdx: 4k under 24 GiB, 32k up to 48 GiB, 256k above).
func ollamaDefaultContext(memory int64) (int, string) {
	switch {
	case memory < 24<<30:
		return 4096, "GPUs under 24 GiB"
	case memory < 48<<30:
		return 32768, "GPUs of 24-48 GiB"
	}
	return 262144, "GPUs of 48 GiB and more"
}

func planLlamaCpp(d Deployment, r *Result, note func(string, ...any)) {
	m := d.Model
	if m.Quant == nil || m.Quant.Format != "gguf" {
		m.Quant = arch.NewQuantization(llamaCppDefaultQuant, "gguf", llamaCppDefaultBits/8,
			[]arch.TensorGroup{arch.TensorEmbedding, arch.TensorLMHead, arch.TensorAttention, arch.TensorMLP, arch.TensorExperts, arch.TensorSharedExperts, arch.TensorRouter, arch.TensorVision})
		d.Model = m
		note("GGUF type not given: Q4_K_M (%.2f bits per weight; the type Ollama's default tags ship)", llamaCppDefaultBits)
	}
	if d.KVCacheDtype == KVInt8 {
		d.KVCacheDtype = KVQ8
	}
	gpus := d.TP * d.PP
	d.TP, d.PP = 1, gpus // layers are split across GPUs (--split-mode layer)
	byGroup := m.WeightBytesByGroup(2)
	var total float64
	for g, b := range byGroup {
		if arch.TensorGroup(g) != arch.TensorMTP {
			total += b
		}
	}
	embed := byGroup[arch.TensorEmbedding]
	output := byGroup[arch.TensorLMHead]
	if m.TieWordEmbeddings {
		output = embed
	}
	layers := max(1, m.NumLayers)
	perLayer := (total - embed - byGroup[arch.TensorLMHead]) / float64(layers)
	specs := kvSpecs(m, 1, m.NumLayers, kvElemBytes(d.KVCacheDtype, llamaCppCacheBytes))
	// --parallel n slots of the context each (llama-server -c n×ctx).
	slots := max(1, d.Users)
	kvPerLayer := cacheBytes(specs, d.MaxModelLen, slots) / float64(layers)
	compute := float64(llamaCppDefaultBatch) * 4 * (float64(m.VocabSize) + 4*float64(m.HiddenSize))
	capacity := float64(gpus) * float64(d.GPU.UsableBytes)
	fixed := float64(gpus)*llamaCppContextBytes + compute
	gpuLayers := d.GPULayers
	all := layers + 1 // the output head counts as a layer
	if gpuLayers <= 0 || gpuLayers > all {
		// Every layer that fits (Ollama's scheduler; llama.cpp -ngl auto).
		gpuLayers = 0
		for n := all; n >= 0; n-- {
			if fixed+llamaGPUBytes(n, layers, perLayer, kvPerLayer, output) <= capacity {
				gpuLayers = n
				break
			}
		}
	}
	onGPU := llamaGPUBytes(gpuLayers, layers, perLayer, kvPerLayer, output)
	kv := kvPerLayer * float64(min(gpuLayers, layers))
	r.Deployment = d
	fillSettings(r, d)
	r.MemoryFraction = 1
	r.TP, r.PP = 1, gpus
	r.GPULayers, r.Layers = gpuLayers, all
	r.BudgetBytes = d.GPU.UsableBytes
	r.WeightsBytes = int64((onGPU - kv) / float64(gpus))
	r.ActivationBytes = int64(compute)
	r.NonTorchBytes = int64(math.Round(llamaCppContextBytes))
	r.KVCacheAvailableBytes = int64(kv / float64(gpus))
	r.KVBytesPerToken = int64(bytesPerToken(specs) / float64(gpus))
	r.KVCacheTokens = int64(slots * d.MaxModelLen)
	r.MaxConcurrency = float64(slots)
	switch {
	case d.Engine == EngineOllama:
		note("OLLAMA_NUM_PARALLEL %d: that many sequences of num_ctx at once", slots)
	default:
		note("--parallel %d with -c %d: slots of %d tokens each", slots, slots*d.MaxModelLen, d.MaxModelLen)
	}
	name := "-ngl"
	if d.Engine == EngineOllama {
		name = "Ollama's layer placement"
	}
	if d.GPULayers <= 0 {
		note("%s: every layer that fits on the GPU (%d of %d)", name, gpuLayers, all)
	}
	if fixed+onGPU > capacity {
		r.Failure, r.Error = FailGPULayers, fmt.Sprintf("ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc failed: out of memory", (onGPU/float64(gpus))/(1<<20))
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: r.Error, Means: fmt.Sprintf("-ngl %d does not fit: lower -ngl or -c", gpuLayers)})
		}
		return
	}
	r.Starts = true
	means := "every layer and the output head on the GPU"
	if gpuLayers < all {
		means = fmt.Sprintf("%d layers stay on the CPU: generation runs at CPU memory speed for them", all-gpuLayers)
	}
	kvType := "f16"
	if d.KVCacheDtype == KVQ8 || d.KVCacheDtype == KVQ4 {
		kvType = d.KVCacheDtype
	}
	if !r.quiet {
		r.Log = append(r.Log,
			LogLine{Text: fmt.Sprintf("load_tensors: offloaded %d/%d layers to GPU", gpuLayers, all), Means: means},
			LogLine{Text: fmt.Sprintf("load_tensors: CUDA0 model buffer size = %.2f MiB", float64(r.WeightsBytes)/(1<<20)), Means: "weights on the (first) GPU"},
			LogLine{Text: fmt.Sprintf("llama_kv_cache: CUDA0 KV buffer size = %.2f MiB (%d cells, K (%s), V (%s))", float64(r.KVCacheAvailableBytes)/(1<<20), slots*d.MaxModelLen, kvType, kvType),
				Means: fmt.Sprintf("the KV cache of %d tokens for the offloaded layers", slots*d.MaxModelLen)},
			LogLine{Text: fmt.Sprintf("llama_context: CUDA0 compute buffer size = %.2f MiB", compute/(1<<20)), Means: "one micro-batch of 512 tokens: logits and intermediates"})
	}
	if d.Engine == EngineOllama {
		proc := "100% GPU"
		if gpuLayers < all {
			cpu := 100 * float64(all-gpuLayers) / float64(all)
			proc = fmt.Sprintf("%.0f%%/%.0f%% CPU/GPU", cpu, 100-cpu)
		}
		if !r.quiet {
			r.Log = append(r.Log, LogLine{Text: "ollama ps: PROCESSOR " + proc, Means: "where the layers run"})
		}
	}
	r.NvidiaSMIBytes = int64(math.Min(float64(d.GPU.UsableBytes), (fixed+onGPU)/float64(gpus)))
}

// llamaGPUBytes is the weights and KV of n offloaded layers (the last one
// being the output head when n exceeds the transformer layers).
func llamaGPUBytes(n, layers int, perLayer, kvPerLayer, output float64) float64 {
	blocks := min(n, layers)
	b := float64(blocks) * (perLayer + kvPerLayer)
	if n > layers {
		b += output
	}
	return b
}
