package job

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
)

// Serving engines are launched with flags: vllm serve (vllm/engine/
// arg_utils.py), SGLang's launch_server (python/sglang/srt/server_args.py),
// llama.cpp's llama-server and llama-cli (common/arg.cpp), Ollama's
// environment and Modelfile (docs/jobs.md §2.4). A table per engine reads
// them by the flag's name without its dashes (-tp and --tensor-parallel-size
// alike).

// flag is one --name value (or --name=value) of a command line.
type flag struct {
	name, value string
	raw         string // the flag as written, without its value
	has         bool   // a value was given
}

// parseArgs splits a command's arguments into flags and positional
// words; bools are the flags that take no value.
func parseArgs(args []string, bools map[string]bool) (flags []flag, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || isNumber(a) {
			positional = append(positional, a)
			continue
		}
		raw, value, has := strings.Cut(a, "=")
		name := strings.ReplaceAll(strings.ToLower(strings.TrimLeft(raw, "-")), "_", "-")
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		_, boolean := truth(next)
		switch {
		case has || i+1 >= len(args):
		case bools[name] && boolean && !isNumber(next): // HfArgumentParser's --bf16 False
			value, has = next, true
			i++
		case !bools[name] && (!strings.HasPrefix(next, "-") || isNumber(next)):
			value, has = next, true
			i++
		}
		flags = append(flags, flag{name: name, raw: raw, value: strings.Trim(value, `"'`), has: has})
	}
	return flags, positional
}

func isNumber(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }

// readFlags reads flags by an engine's table (keys without dashes), in
// the table's priority order first (a checkpoint's quantisation before
// --dtype) and then as written.
func (r *reading) readFlags(flags []flag, t table, first ...string) {
	done := make([]bool, len(flags))
	for _, name := range first {
		for i, f := range flags {
			if f.name == name && !done[i] {
				r.readFlag(f, t)
				done[i] = true
			}
		}
	}
	for i, f := range flags {
		if !done[i] {
			r.readFlag(f, t)
		}
	}
}

func (r *reading) readFlag(f flag, t table) {
	key := f.raw
	v := &node{value: f.value, null: !f.has}
	if !f.has {
		v = &node{value: "true"} // a bare boolean flag
	}
	if rule, ok := t[f.name]; ok {
		rule(r, key, v)
		return
	}
	// argparse takes a flag's unambiguous prefix (--max-num-batched-token).
	if full := prefixOf(f.name, t); full != "" {
		t[full](r, key, v)
		return
	}
	r.generic(f.name, v)
	r.rename(f.name, key)
}

// prefixOf is the one flag of t that name is a prefix of ("" for none
// or several).
func prefixOf(name string, t table) string {
	if len(name) < 4 {
		return ""
	}
	found := ""
	for k := range t {
		if strings.HasPrefix(k, name) {
			if found != "" {
				return ""
			}
			found = k
		}
	}
	return found
}

// rename shows a key read by generic with its dashes, as written.
func (r *reading) rename(from, to string) {
	for i := range r.j.Unknown {
		if r.j.Unknown[i] == from {
			r.j.Unknown[i] = to
		}
	}
	for i := range r.j.Ignored {
		if r.j.Ignored[i] == from {
			r.j.Ignored[i] = to
		}
	}
	for i := range r.j.Read {
		if r.j.Read[i].Key == from {
			r.j.Read[i].Key = to
		}
	}
}

// servingLen reads a context length as engines write it: 32768, vLLM's
// "32k" (thousands) and "32K" (KiB), "1m"; "auto" and -1 leave the
// engine's default (the model's context).
func servingLen(r *reading, key string, v *node) {
	s := strings.TrimSpace(v.str())
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "K"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case strings.EqualFold(v.str(), "auto") || err == nil && f <= 0:
		r.item(key, v.str(), "", "the model's own context")
	case err != nil || math.IsInf(f, 0) || math.IsNaN(f):
		r.unknown(key, fmt.Sprintf("%s is not a length", shown(key, v.str())))
	default:
		n := int64(math.Round(f * mult))
		r.setAs(key, v.str(), "seq", strconv.FormatInt(n, 10))
	}
}

// kvDtypes maps the engines' KV-cache dtypes (vLLM and SGLang's
// --kv-cache-dtype, llama.cpp's -ctk/-ctv, Ollama's OLLAMA_KV_CACHE_TYPE)
// to the grammar's kv ("" for one it has no word for).
var kvDtypes = map[string]string{
	"auto": "fp16", "fp16": "fp16", "f16": "fp16", "bf16": "fp16", "bfloat16": "fp16", "float16": "fp16", "half": "fp16",
	"fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp8_inc": "fp8", "fp8_ds_mla": "fp8",
	"q8_0": "int8", "int8": "int8", "q4_0": "", "q4_1": "", "q5_0": "", "q5_1": "", "iq4_nl": "", "f32": "",
}

func kvDtype(r *reading, key string, v *node) {
	s := strings.ToLower(v.str())
	k, ok := kvDtypes[s]
	switch {
	case s == "auto":
		r.item(key, v.str(), "", "auto: the model's dtype")
	case ok && k != "":
		r.setAs(key, v.str(), "kv", k)
	default:
		r.unknown(key, fmt.Sprintf("a %s KV cache has no word in the grammar: estimated in 16 bits", shown(key, v.str())))
	}
}

// quantizations maps vLLM's and SGLang's --quantization to the grammar's
// precision ("" for a method whose storage the checkpoint's own config
// says, which the estimate reads from it).
var quantizations = map[string]string{
	"fp8": "fp8", "fbgemm_fp8": "fp8", "ptpc_fp8": "fp8", "fp8_e4m3": "fp8", "w8a8_fp8": "fp8",
	"awq": "awq", "awq_marlin": "awq", "gptq": "gptq", "gptq_marlin": "gptq", "gptq_marlin_24": "gptq",
	"bitsandbytes": "nf4", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4", "nvfp4": "nvfp4", "w8a8_int8": "int8",
	"compressed-tensors": "", "compressed_tensors": "", "modelopt": "", "gguf": "", "auto-round": "", "auto_round": "",
}

func quantization(r *reading, key string, v *node) {
	s := strings.ToLower(v.str())
	p, ok := quantizations[s]
	switch {
	case ok && p != "":
		r.setAs(key, v.str(), "precision", p)
	case ok:
		r.item(key, v.str(), "", "the checkpoint's own quantisation config says its storage")
	default:
		r.unknown(key, fmt.Sprintf("quantisation %s has no word in the grammar", shown(key, v.str())))
	}
}

// servingDtype reads --dtype: the weights' dtype unless a quantisation
// is given.
func servingDtype(r *reading, key string, v *node) {
	d := dtypeOf(v.str())
	if d == "" {
		r.item(key, v.str(), "", "auto: the checkpoint's dtype")
		return
	}
	if r.j.Setting("precision") != "" {
		r.item(key, v.str(), "", "the activations' dtype: the weights are the checkpoint's quantisation")
		return
	}
	r.setAs(key, v.str(), "precision", d)
}

// replicas reads a data-parallel size: whole copies, each GPU as one.
func replicas(r *reading, key string, v *node) {
	if positive(v.str()) > 1 {
		r.unknown(key, fmt.Sprintf("%s data-parallel replicas: each GPU holds what one replica's GPU does", v.str()))
		return
	}
	r.item(key, v.str(), "", "one replica")
}

// vllmBools are vLLM's flags that take no value.
var vllmBools = boolSet("enforce-eager", "trust-remote-code", "enable-prefix-caching", "no-enable-prefix-caching", "enable-chunked-prefill",
	"no-enable-chunked-prefill", "enable-expert-parallel", "disable-log-requests", "enable-log-requests", "disable-log-stats",
	"enable-auto-tool-choice", "async-scheduling", "disable-custom-all-reduce", "enable-lora", "calculate-kv-scales",
	"disable-sliding-window", "enable-sleep-mode", "skip-tokenizer-init", "enable-eplb", "headless", "disable-frontend-multiprocessing",
	"enable-prompt-tokens-details", "enable-force-include-usage", "enable-server-load-tracking", "enable-dbo", "no-async-scheduling",
	"enable-log-outputs", "enable-reasoning", "enable-lora-bias", "fully-sharded-loras", "enforce-eager=true")

func boolSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

var vllmFlags = table{
	"model-id":                     func(r *reading, k string, v *node) { r.model(k, v.str()) }, // KServe's Hugging Face runtime
	"model-name":                   ign,
	"backend":                      ign,
	"model":                        func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"tensor-parallel-size":         to("tp"),
	"tp":                           to("tp"),
	"pipeline-parallel-size":       to("pp"),
	"pp":                           to("pp"),
	"data-parallel-size":           replicas,
	"dp":                           replicas,
	"max-model-len":                servingLen,
	"gpu-memory-utilization":       to("gpu-util"),
	"max-num-seqs":                 to("max-num-seqs"),
	"max-num-batched-tokens":       to("max-num-batched-tokens"),
	"kv-cache-dtype":               kvDtype,
	"quantization":                 quantization,
	"q":                            quantization,
	"dtype":                        servingDtype,
	"enforce-eager":                unmodelled("CUDA graphs off: the estimate still takes their pool (a few hundred MiB to 2 GiB) out of the KV cache"),
	"cpu-offload-gb":               unmodelled("weights offloaded to CPU RAM: not modelled, estimated with every weight on the GPU"),
	"enable-expert-parallel":       unmodelled("expert parallelism: experts split across the GPUs as tensor parallelism splits them, estimated so"),
	"decode-context-parallel-size": unmodelled("decode context parallelism: the KV cache split across GPUs is not modelled"),
	"dcp":                          unmodelled("decode context parallelism: the KV cache split across GPUs is not modelled"),
	"kv-cache-memory":              unmodelled("a KV cache of a fixed size: not modelled, the cache is sized by gpu-memory-utilization"),
	"kv-cache-memory-bytes":        unmodelled("a KV cache of a fixed size: not modelled, the cache is sized by gpu-memory-utilization"),
	"speculative-config":           unmodelled("speculative decoding: the draft model's memory is not modelled"),
	"speculative-model":            unmodelled("speculative decoding: the draft model's memory is not modelled"),
	"num-speculative-tokens":       ign,
	"block-size":                   unmodelled("KV block size: the engine's default is assumed"),
	"limit-mm-per-prompt":          unmodelled("multimodal inputs per prompt: the encoder's profiled memory is not modelled"),
	"cuda-graph-sizes":             unmodelled("CUDA graph capture sizes: the graph pool is estimated by the engine's defaults"),
	"max-cudagraph-capture-size":   unmodelled("CUDA graph capture sizes: the graph pool is estimated by the engine's defaults"),
	"max-seq-len-to-capture":       ign,
	"compilation-config":           unmodelled("compilation config: the CUDA graph pool is estimated by the engine's defaults"),
	"o":                            ign,
	"kv-transfer-config":           unmodelled("KV transfer or offloading: not modelled"),
	"kv-offloading-size":           unmodelled("KV offloading to CPU: not modelled"),
	"kv-offloading-backend":        ign,
	"hf-overrides":                 unmodelled("config overrides: the model is estimated from its own config.json"),
	"enable-lora":                  unmodelled("LoRA adapters served: their memory is not modelled"),
	"max-loras":                    ign, "max-lora-rank": ign, "lora-modules": ign,
	"swap-space": ign, "enable-prefix-caching": ign, "no-enable-prefix-caching": ign, "enable-chunked-prefill": ign,
	"served-model-name": ign, "host": ign, "port": ign, "trust-remote-code": ign, "download-dir": ign, "tokenizer": ign,
	"tokenizer-mode": ign, "chat-template": ign, "tool-call-parser": ign, "enable-auto-tool-choice": ign, "reasoning-parser": ign,
	"disable-log-requests": ign, "disable-log-stats": ign, "uvicorn-log-level": ign, "max-log-len": ign, "seed": ign, "load-format": ign,
	"revision": ign, "generation-config": ign, "override-generation-config": ign, "distributed-executor-backend": ign,
	"async-scheduling": ign, "disable-custom-all-reduce": ign, "max-logprobs": ign, "config-format": ign, "enable-log-requests": ign,
	"guided-decoding-backend": ign, "structured-outputs-config": ign, "mm-encoder-tp-mode": ign, "rope-scaling": ign, "scheduling-policy": ign,
	"max-num-partial-prefills": ign, "max-parallel-loading-workers": ign, "calculate-kv-scales": ign, "api-key": ign, "hf-token": ign,
	"allowed-local-media-path": ign, "response-role": ign, "root-path": ign, "ssl-keyfile": ign, "ssl-certfile": ign, "middleware": ign,
	"disable-fastapi-docs": ign, "enable-prompt-tokens-details": ign, "tool-parser-plugin": ign, "enable-server-load-tracking": ign,
	"mm-processor-kwargs": ign, "media-io-kwargs": ign, "code-revision": ign, "tokenizer-revision": ign, "config": ign,
	"enable-eplb": ign, "eplb-config": ign, "all2all-backend": ign, "enable-dbo": ign, "headless": ign, "data-parallel-address": ign,
	"data-parallel-rpc-port": ign, "data-parallel-start-rank": ign, "data-parallel-size-local": ign, "api-server-count": ign,
	"disable-sliding-window": unmodelled("sliding windows off: every layer caches the whole context, not modelled"),
	"max-num-seqs-per-step":  ign, "num-gpu-blocks-override": unmodelled("a fixed number of KV blocks: not modelled"),
}

var sglangBools = boolSet("trust-remote-code", "disable-cuda-graph", "enable-dp-attention", "enable-torch-compile", "disable-radix-cache",
	"enable-metrics", "enable-mixed-chunk", "disable-overlap-schedule", "enable-dp-lm-head", "skip-server-warmup", "enable-ep-moe",
	"enable-deepep-moe", "enable-cache-report", "disable-custom-all-reduce", "enable-nan-detection", "enable-p2p-check", "log-requests",
	"enable-two-batch-overlap", "disable-chunked-prefix-cache", "enable-hierarchical-cache", "enable-memory-saver", "enable-lora")

var sglangFlags = table{
	"model-path":                   func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"model":                        func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"tp":                           to("tp"),
	"tp-size":                      to("tp"),
	"tensor-parallel-size":         to("tp"),
	"pp-size":                      to("pp"),
	"pipeline-parallel-size":       to("pp"),
	"dp":                           replicas,
	"dp-size":                      replicas,
	"data-parallel-size":           replicas,
	"context-length":               servingLen,
	"mem-fraction-static":          to("gpu-util"),
	"max-running-requests":         to("max-num-seqs"),
	"chunked-prefill-size":         to("max-num-batched-tokens"),
	"max-prefill-tokens":           unmodelled("a cap on one prefill's tokens: the engine's activation peak is estimated by chunked-prefill-size"),
	"max-total-tokens":             unmodelled("a cap on the KV pool's tokens: not modelled, the pool is sized by mem-fraction-static"),
	"kv-cache-dtype":               kvDtype,
	"quantization":                 quantization,
	"dtype":                        servingDtype,
	"disable-cuda-graph":           unmodelled("CUDA graphs off: their memory is still estimated"),
	"cuda-graph-max-bs":            unmodelled("CUDA graph batch sizes: the graph memory is estimated by the engine's defaults"),
	"enable-dp-attention":          unmodelled("data-parallel attention: not modelled, estimated as tensor parallelism"),
	"ep-size":                      unmodelled("expert parallelism: experts split across the GPUs as tensor parallelism splits them, estimated so"),
	"ep":                           unmodelled("expert parallelism: experts split across the GPUs as tensor parallelism splits them, estimated so"),
	"expert-parallel-size":         unmodelled("expert parallelism: experts split across the GPUs as tensor parallelism splits them, estimated so"),
	"enable-torch-compile":         unmodelled("torch.compile: not modelled"),
	"speculative-algorithm":        unmodelled("speculative decoding: the draft model's memory is not modelled"),
	"speculative-draft-model-path": unmodelled("speculative decoding: the draft model's memory is not modelled"),
	"speculative-num-steps":        ign, "speculative-eagle-topk": ign, "speculative-num-draft-tokens": ign,
	"nnodes":    unmodelled("several nodes: the GPUs are tp × pp"),
	"node-rank": ign, "dist-init-addr": ign, "attention-backend": ign, "trust-remote-code": ign, "host": ign, "port": ign,
	"served-model-name": ign, "api-key": ign, "tool-call-parser": ign, "reasoning-parser": ign, "log-level": ign, "enable-metrics": ign,
	"chat-template": ign, "tokenizer-path": ign, "download-dir": ign, "random-seed": ign, "grammar-backend": ign, "page-size": ign,
	"enable-mixed-chunk": ign, "schedule-policy": ign, "disable-radix-cache": ign, "enable-dp-lm-head": ign, "moe-a2a-backend": ign,
	"disable-overlap-schedule": ign, "skip-server-warmup": ign, "watchdog-timeout": ign, "load-format": ign, "revision": ign,
	"enable-cache-report": ign, "moe-runner-backend": ign, "model-loader-extra-config": ign, "schedule-conservativeness": ign,
	"decode-log-interval": ign, "sampling-backend": ign, "tool-server": ign, "disable-flashinfer-autotune": ign, "hf-chat-template-name": ign, "enable-p2p-check": ign,
}

// The llama.cpp flags (common/arg.cpp): -ngl, -c, -ctk/-ctv, -fa, -np and
// the offload switches.
var llamaBools = boolSet("cont-batching", "no-cont-batching", "mlock", "no-mmap", "nkvo", "no-kv-offload", "jinja", "cnv", "conversation",
	"cpu-moe", "cmoe", "metrics", "embedding", "embeddings", "verbose", "v", "no-warmup", "flash-attn-auto", "kv-unified", "no-kv-unified",
	"swa-full", "no-webui", "slots", "props", "reranking", "interactive", "i", "color", "no-display-prompt", "log-disable", "check-tensors",
	"numa-distribute", "warmup", "context-shift", "no-context-shift", "mmproj-offload", "no-mmproj-offload", "special", "escape")

var llamaFlags = table{
	"m":               ggufModel,
	"model":           ggufModel,
	"hf":              hfRepoFlag,
	"hf-repo":         hfRepoFlag,
	"hfr":             hfRepoFlag,
	"c":               llamaContext,
	"ctx-size":        llamaContext,
	"ngl":             gpuLayers,
	"n-gpu-layers":    gpuLayers,
	"gpu-layers":      gpuLayers,
	"ctk":             kvDtype,
	"cache-type-k":    kvDtype,
	"ctv":             cacheTypeV,
	"cache-type-v":    cacheTypeV,
	"fa":              flashAttn,
	"flash-attn":      flashAttn,
	"np":              slots,
	"parallel":        slots,
	"ts":              tensorSplit,
	"tensor-split":    tensorSplit,
	"sm":              splitMode,
	"split-mode":      splitMode,
	"nkvo":            unmodelled("the KV cache stays in CPU RAM: not modelled, estimated on the GPU"),
	"no-kv-offload":   unmodelled("the KV cache stays in CPU RAM: not modelled, estimated on the GPU"),
	"ot":              unmodelled("tensors kept in CPU RAM (--override-tensor): not modelled, estimated on the GPU"),
	"override-tensor": unmodelled("tensors kept in CPU RAM (--override-tensor): not modelled, estimated on the GPU"),
	"cpu-moe":         unmodelled("MoE experts kept in CPU RAM: not modelled, estimated on the GPU"),
	"cmoe":            unmodelled("MoE experts kept in CPU RAM: not modelled, estimated on the GPU"),
	"n-cpu-moe":       unmodelled("MoE experts of some layers kept in CPU RAM: not modelled, estimated on the GPU"),
	"ncmoe":           unmodelled("MoE experts of some layers kept in CPU RAM: not modelled, estimated on the GPU"),
	"md":              unmodelled("a draft model: its weights and cache are not modelled"),
	"model-draft":     unmodelled("a draft model: its weights and cache are not modelled"),
	"ngld":            ign, "gpu-layers-draft": ign, "n-gpu-layers-draft": ign, "cd": ign, "ctx-size-draft": ign, "draft-max": ign, "draft-min": ign,
	"b":           unmodelled("the logical batch: the compute buffer is estimated by the engine's defaults"),
	"batch-size":  unmodelled("the logical batch: the compute buffer is estimated by the engine's defaults"),
	"ub":          unmodelled("the physical batch: the compute buffer is estimated by the engine's defaults"),
	"ubatch-size": unmodelled("the physical batch: the compute buffer is estimated by the engine's defaults"),
	"mmproj":      unmodelled("a multimodal projector: its weights are not modelled"),
	"hff":         ign, "hf-file": ign, "t": ign, "threads": ign, "tb": ign, "threads-batch": ign, "host": ign, "port": ign, "mg": ign,
	"main-gpu": ign, "mlock": ign, "no-mmap": ign, "jinja": ign, "temp": ign, "top-k": ign, "top-p": ign, "min-p": ign, "repeat-penalty": ign,
	"n": ign, "n-predict": ign, "p": ign, "prompt": ign, "cnv": ign, "conversation": ign, "sys": ign, "system-prompt": ign, "seed": ign,
	"s": ign, "cont-batching": ign, "metrics": ign, "alias": ign, "a": ign, "api-key": ign, "chat-template": ign, "log-file": ign,
	"rope-scaling": ign, "rope-freq-base": ign, "rope-freq-scale": ign, "yarn-orig-ctx": ign, "dev": ign, "device": ign, "numa": ign,
	"f": ign, "file": ign, "reasoning-format": ign, "reasoning-budget": ign, "no-warmup": ign, "kv-unified": ign, "no-kv-unified": ign,
	"swa-full": unmodelled("sliding-window layers cache the whole context: not modelled"), "verbose": ign, "v": ign, "lv": ign,
	"ctx-checkpoints": ign, "cache-reuse": ign, "slot-save-path": ign, "timeout": ign, "to": ign, "path": ign, "no-webui": ign,
	"spec-replace": ign, "override-kv": ign, "chat-template-file": ign, "lora": unmodelled("a LoRA adapter: its weights are not modelled"),
	"i": ign, "interactive": ign, "color": ign, "r": ign, "reverse-prompt": ign, "in-prefix": ign, "in-suffix": ign, "keep": ign,
	"presence-penalty": ign, "frequency-penalty": ign, "dry-multiplier": ign, "samplers": ign, "mirostat": ign,
	"prio": ign, "prio-batch": ign, "fit": ign, "log-colors": ign, "poll": ign, "cpu-range": ign,
	"spec-type": unmodelled("speculative decoding: the draft's memory is not modelled"), "spec-draft-n-max": ign, "spec-draft-n-min": ign,
	"ctxcp": ign, "cache-ram": ign, "cram": ign, "special": ign, "escape": ign, "log-disable": ign, "no-display-prompt": ign,
}

// ggufModel reads -m: a GGUF file, named by its model and its type
// (…-Q4_K_M.gguf).
func ggufModel(r *reading, key string, v *node) {
	r.model(key, v.str())
	ggufPrecision(r, key, v.str())
}

// ggufPrecision reads a GGUF type from a file or tag name.
func ggufPrecision(r *reading, key, name string) {
	base := strings.ToLower(name)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(ggufShard.ReplaceAllString(strings.TrimSuffix(base, ".gguf"), ""), ".gguf")
	for _, t := range ggufTypes() {
		if strings.HasSuffix(base, "-"+t) || strings.HasSuffix(base, "."+t) || strings.HasSuffix(base, "_"+t) || strings.HasSuffix(base, ":"+t) {
			r.setAs(key, name, "precision", t)
			return
		}
	}
	if strings.HasSuffix(base, "gguf") || strings.Contains(strings.ToLower(name), ".gguf") {
		r.note("%s: no GGUF type the grammar names in the file's name: add precision=q4_k_m (or the file's type)", key)
	}
}

// ggufTypes are the GGUF types the grammar names, longest first, so
// that q4_k_m is found before q4_k.
func ggufTypes() []string {
	ts := slices.Clone(arch.GGUFTypes())
	slices.SortFunc(ts, func(a, b string) int { return len(b) - len(a) })
	return ts
}

// hfRepoFlag reads -hf REPO[:QUANT].
func hfRepoFlag(r *reading, key string, v *node) {
	repo, quant, _ := strings.Cut(v.str(), ":")
	r.model(key, repo)
	if quant != "" {
		ggufPrecision(r, key, repo+"-"+quant)
	}
}

// llamaContext reads -c: 0 is the model's training context.
func llamaContext(r *reading, key string, v *node) {
	if v.str() == "0" {
		r.item(key, "0", "", "the model's own context")
		return
	}
	r.set(key, v.str(), "seq")
}

// gpuLayers reads -ngl: 99, 999 or all put every layer on the GPU, as the
// estimate does when it fits.
func gpuLayers(r *reading, key string, v *node) {
	s := strings.ToLower(v.str())
	n := positive(s)
	switch {
	case s == "all" || s == "auto" || n >= 99:
		r.item(key, v.str(), "", "every layer on the GPU")
	case n > 0:
		r.setAs(key, v.str(), "gpu-layers", strconv.Itoa(n))
	case s == "0":
		r.unknown(key, "no layer on the GPU: the model runs on the CPU")
	default:
		r.unknown(key, fmt.Sprintf("%s is not a layer count", shown(key, v.str())))
	}
}

// cacheTypeV reads -ctv: the grammar has one KV dtype, so it is read when
// -ctk does not say another.
func cacheTypeV(r *reading, key string, v *node) {
	if r.j.Setting("kv") != "" {
		if kvDtypes[strings.ToLower(v.str())] == r.j.Setting("kv") {
			r.item(key, v.str(), "", "the same as the K cache's")
		} else {
			r.unknown(key, "a V cache in another type than the K cache: estimated with the K cache's")
		}
		return
	}
	kvDtype(r, key, v)
}

// flashAttn reads -fa (a bare flag, or on/off/auto).
func flashAttn(r *reading, key string, v *node) {
	if b, ok := truth(v.str()); ok && !b {
		r.item(key, v.str(), "", "off")
		return
	}
	r.setAs(key, v.str(), "attn", "flash")
}

// slots reads -np: the slots share -c between them (each gets c/np).
func slots(r *reading, key string, v *node) {
	r.item(key, v.str(), "", "the parallel slots share -c: the cache is -c tokens in all")
}

// tensorSplit reads -ts: the GPUs the layers are split over.
func tensorSplit(r *reading, key string, v *node) {
	n := 0
	for _, p := range strings.FieldsFunc(v.str(), func(r rune) bool { return r == ',' || r == '/' }) {
		if f, err := strconv.ParseFloat(p, 64); err == nil && f > 0 {
			n++
		}
	}
	if n > 1 {
		r.setAs(key, v.str(), "gpus", strconv.Itoa(n))
		return
	}
	r.item(key, v.str(), "", "")
}

func splitMode(r *reading, key string, v *node) {
	switch strings.ToLower(v.str()) {
	case "row":
		r.unknown(key, "rows split across GPUs: estimated as a split of whole layers")
	default:
		r.item(key, v.str(), "", "")
	}
}

// ollamaEnv are Ollama's environment variables that change memory
// (envconfig/config.go).
var ollamaEnv = table{
	"OLLAMA_CONTEXT_LENGTH":    to("seq"),
	"OLLAMA_KV_CACHE_TYPE":     kvDtype,
	"OLLAMA_FLASH_ATTENTION":   flashAttn,
	"OLLAMA_NUM_PARALLEL":      unmodelled("parallel requests: each gets the whole context, not modelled"),
	"OLLAMA_GPU_OVERHEAD":      unmodelled("memory Ollama keeps free: not modelled"),
	"OLLAMA_MAX_LOADED_MODELS": ign, "OLLAMA_HOST": ign, "OLLAMA_MODELS": ign, "OLLAMA_KEEP_ALIVE": ign, "OLLAMA_ORIGINS": ign,
	"OLLAMA_DEBUG": ign, "OLLAMA_MAX_QUEUE": ign, "OLLAMA_SCHED_SPREAD": ign, "OLLAMA_NEW_ENGINE": ign, "OLLAMA_LOAD_TIMEOUT": ign,
}

// modelfileParams are the Modelfile PARAMETERs that change memory
// (ollama docs/modelfile.mdx).
var modelfileParams = table{
	"num_ctx":   to("seq"),
	"num_gpu":   gpuLayers,
	"num_batch": unmodelled("the batch: the compute buffer is estimated by the engine's defaults"),
}

// vllmEnv are vLLM's environment variables that change what it does.
var vllmEnv = table{
	"VLLM_USE_V1": func(r *reading, k string, v *node) {
		if b, ok := truth(v.str()); ok && !b {
			r.setAs(k, v.str(), "engine-version", "v0")
			return
		}
		r.item(k, v.str(), "", "the V1 engine, the estimate's")
	},
	"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": unmodelled("how CUDA graphs are budgeted: the estimate follows the release's default"),
}

// envName is a variable's name as written.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
