package oom

import (
	"regexp"
	"strconv"
	"strings"
)

// Readers of the messages that do not come from a Python framework's
// allocator: llama.cpp/ggml, NCCL, the Linux OOM killer and other host
// allocators, and the reports that reformat an error (ComfyUI). Each reads
// only the lines of its own event, a few after the anchor.

// Kinds of these messages, for extra.kind.
const (
	KindGGMLAlloc        = "ggml-alloc-failed"
	KindCUDAError        = "cuda-error-out-of-memory"
	KindNCCL             = "nccl-cuda-out-of-memory"
	KindOOMKilled        = "oom-killed"
	KindRustAlloc        = "rust-alloc-failed"
	KindBadAlloc         = "bad-alloc"
	KindNumpy            = "numpy-array-memory-error"
	KindPythonMemory     = "python-memory-error"
	KindDataLoaderKilled = "dataloader-worker-killed"
	KindDataLoaderShm    = "dataloader-shared-memory"
	KindHostRequires     = "insufficient-system-memory"
	KindAllocOnDevice    = "allocation-on-device"
	KindComfyUIReport    = "comfyui-error-report"
	KindJSONResponse     = "json-error-response"
)

// Stacks named in extra.stack by these readers.
const (
	StackLlamaCPP = "llama.cpp"
	StackOllama   = "ollama"
)

// eventReach is how many bytes after its anchor one event's lines are read.
const eventReach = 2048

var (
	reGGMLAllocating = regexp.MustCompile(`allocating\s+` + sizePattern + ` on device (\d+)`)
	// reGGMLBuffer is ggml's name of the buffer that failed ("CUDA0",
	// "ROCm1", "Vulkan0", "CPU", "CUDA_Host") and its exact size.
	reGGMLBuffer   = regexp.MustCompile(`failed to allocate (?:(\w+?)(\d*) )?buffer of size (\d+)`)
	reGGMLUnable   = regexp.MustCompile(`unable to allocate (\w+?)(\d*) buffer`)
	reGGMLCPUAlloc = regexp.MustCompile(`ggml_backend_cpu_buffer_type_alloc_buffer|CPU buffer of size`)
	reGGMLVulkan   = regexp.MustCompile(`Device memory allocation of size (\d+) failed|can't allocate (\d+) Bytes of memory on device`)
	reGGMLMetalBuf = regexp.MustCompile(`failed to allocate buffer, size =\s*` + sizePattern)
	// reGGMLBackendFn is a ggml backend's function in a log line.
	reGGMLBackendFn = regexp.MustCompile(`\bggml_backend_(cuda|sycl|metal|cpu|musa)_`)
	// reGGMLCurrentDevice is ggml's CUDA error report: "CUDA error: out of
	// memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm".
	// ggml before 2024 printed the device alone: "current device: 0".
	reGGMLCurrentDevice = regexp.MustCompile(`current device: (\d+)(?:, in function (\w+))?`)

	// reNCCLDevice is the CUDA device in NCCL's log prefix
	// ("host:pid:tid [3] include/alloc.h:178 NCCL WARN ...").
	reNCCLDevice = regexp.MustCompile(`\[(\d+)\] (?:[\w/.-]+:\d+ )?NCCL WARN`)
	reNCCLCalloc = regexp.MustCompile(`Failed to CUDA calloc (?:async )?(\d+) bytes`)

	reKilledProcess = regexp.MustCompile(`Kill(?:ed)? process (\d+) \(([^)\n]{0,64})\)`)
	reAnonRSS       = regexp.MustCompile(`anon-rss:([\d,]+)kB`)
	reRustAlloc     = regexp.MustCompile(`memory allocation of (\d+) bytes failed`)
	// reNumpyAlloc: NumPy prints three significant digits, "117. GiB" too.
	reNumpyAlloc    = regexp.MustCompile(`Unable to allocate\s+(\d{1,15}(?:\.\d{0,9})?)\s?([KMGTP]?i?B)\b`)
	reDataLoaderSig = regexp.MustCompile(`killed by signal: (Killed|Bus error)`)
	reHostRequires  = regexp.MustCompile(`requires more system memory \(` + sizePattern + `\) than is available \(` + sizePattern + `\)`)
	// reLoadingShards is transformers' progress bar while it loads a
	// checkpoint into memory: an OOM kill under it happened at load.
	reLoadingShards = regexp.MustCompile(`Loading checkpoint shards:|Loading safetensors checkpoint shards:`)
)

// eventText is the text of the event anchored at a: its line and the few
// after it.
func (sc *scan) eventText(a anchor) string {
	li := sc.lineOf(a.pos)
	end := len(sc.text)
	if k := li + followReach + 1; k < len(sc.starts) {
		end = sc.starts[k]
	}
	return sc.text[a.pos:min(end, a.pos+eventReach)]
}

// ggmlDevice names the device of a ggml buffer: CUDA and ROCm (HIP)
// buffers are cuda:N as PyTorch names them, SYCL is an Intel XPU, Metal the
// Apple GPU, CPU and CUDA_Host host memory; Vulkan has no name in the
// vocabulary.
func ggmlDevice(backend, idx string) (*string, bool) {
	if idx == "" {
		idx = "0"
	}
	switch strings.ToLower(backend) {
	case "cuda", "rocm", "hip", "musa":
		return cudaDevice(idx), true
	case "sycl":
		return str("xpu:" + idx), true
	case "metal", "mtl":
		return str("mps"), true
	case "cpu", "cuda_host", "cpu_mapped":
		return str("cpu"), true
	case "vulkan":
		return nil, true
	}
	return nil, false
}

// extractGGML reads llama.cpp's and ggml's allocation failures. The exact
// byte count of "buffer of size N" wins over the rounded "allocating N MiB".
func extractGGML(sc *scan, a anchor, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Format = FormatOther
	rep.Extra["kind"] = KindGGMLAlloc
	rep.Extra["stack"] = ggmlStack(sc.text)
	ev := sc.eventText(a)
	if m := reGGMLAllocating.FindStringSubmatch(ev); m != nil {
		rep.TriedToAllocateBytes = sizeAt(m, 1)
		rep.Device = cudaDevice(m[3])
	}
	if m := reGGMLVulkan.FindStringSubmatch(ev); m != nil {
		if n, ok := parseInt(m[1] + m[2]); ok {
			rep.TriedToAllocateBytes = &n
		}
	}
	if m := reGGMLMetalBuf.FindStringSubmatch(ev); m != nil {
		rep.TriedToAllocateBytes = sizeAt(m, 1)
	}
	if rep.Device == nil {
		// The backend's own function names the device when no buffer does
		// ("ggml_backend_metal_buffer_type_alloc_buffer: ...").
		if m := reGGMLBackendFn.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
			rep.Device, _ = ggmlDevice(m[1], "")
		}
	}
	if m := reGGMLBuffer.FindStringSubmatch(ev); m != nil {
		if n, ok := parseInt(m[3]); ok {
			rep.TriedToAllocateBytes = &n
		}
		if d, ok := ggmlDevice(m[1], m[2]); ok && (rep.Device == nil || d != nil) {
			rep.Device = d
		}
		if m[1] == "" && reGGMLCPUAlloc.MatchString(ev) {
			rep.Device = str("cpu")
		}
	} else if m := reGGMLUnable.FindStringSubmatch(ev); m != nil && rep.Device == nil {
		rep.Device, _ = ggmlDevice(m[1], m[2])
	}
	if rep.Device == nil && (strings.Contains(ev, "kIOGPUCommandBuffer") || reMetalStatus.MatchString(ev)) {
		// Metal's command-buffer error: the Apple GPU.
		rep.Device = str("mps")
	}
}

// ggmlStack names the program around ggml: Ollama when the paste shows
// it, else llama.cpp (llama-server, llama-cpp-python, LM Studio...).
func ggmlStack(text string) string {
	if strings.Contains(strings.ToLower(text), "ollama") {
		return StackOllama
	}
	return StackLlamaCPP
}

// isGGML reports a paste from ggml: its function names and log prefixes.
func isGGML(text string) bool {
	for _, s := range []string{"ggml_", "ggml-cuda", "llama_model_load", "llama_init_from_model", "llama_new_context", "llm_load_", "load_tensors:", "llama runner"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// extractNCCL reads NCCL's CUDA failure: the device from its log prefix
// and the size from the calloc that failed.
func extractNCCL(sc *scan, a anchor, rep *Report) {
	rep.Format = FormatOther
	rep.Framework = FrameworkOther
	if strings.Contains(sc.text, "torch") || strings.Contains(sc.text, "deepspeed") {
		rep.Framework = sc.torchish()
	}
	rep.Extra["kind"] = KindNCCL
	line := sc.lines[sc.lineOf(a.pos)].text
	if m := reNCCLDevice.FindStringSubmatch(line); m != nil {
		rep.Device = cudaDevice(m[1])
	}
	if m := reNCCLCalloc.FindStringSubmatch(sc.eventText(a)); m != nil {
		if n, ok := parseInt(m[1]); ok {
			rep.TriedToAllocateBytes = &n
		}
	}
}

// extractHost reads the host-memory failures: the OOM killer, a bare kill,
// Rust, C++, NumPy and Python allocators, DataLoader workers, Ollama's
// refusal.
func extractHost(sc *scan, a anchor, rep *Report) {
	rep.Format = FormatOther
	rep.Device = str("cpu")
	rep.Framework = FrameworkOther
	switch {
	case strings.Contains(sc.text, "torch"):
		rep.Framework = sc.torchish()
	case isTensorFlow(sc.text):
		// A host allocator failing under TensorFlow's own log lines.
		rep.Framework = FrameworkTensorFlow
	}
	ev := sc.eventText(a)
	switch a.kind {
	case kindOOMKiller, kindOOMKillerFollow, kindKilled, kindSIGKILL:
		rep.Extra["kind"] = KindOOMKilled
		if m := reKilledProcess.FindStringSubmatch(ev); m != nil {
			rep.Extra["process"] = m[2]
			if m := reAnonRSS.FindStringSubmatch(ev); m != nil {
				if n, ok := parseInt(strings.ReplaceAll(m[1], ",", "")); ok && n <= 1<<43 {
					rep.Extra["anon_rss_bytes"] = n << 10
				}
			}
		}
	case kindRustAlloc:
		rep.Extra["kind"] = KindRustAlloc
		if m := reRustAlloc.FindStringSubmatch(ev); m != nil {
			if n, ok := parseInt(m[1]); ok {
				rep.TriedToAllocateBytes = &n
			}
		}
	case kindBadAlloc:
		rep.Extra["kind"] = KindBadAlloc
	case kindNumpyMemory:
		rep.Extra["kind"] = KindNumpy
		if m := reNumpyAlloc.FindStringSubmatch(ev); m != nil {
			rep.TriedToAllocateBytes, _ = ptrSize(strings.TrimSuffix(m[1], "."), m[2])
		}
	case kindPyMemory:
		rep.Extra["kind"] = KindPythonMemory
	case kindDataLoader:
		rep.Framework = sc.torchish()
		rep.Extra["kind"] = KindDataLoaderKilled
		if m := reDataLoaderSig.FindStringSubmatch(ev); m != nil && m[1] != "Killed" {
			rep.Extra["signal"] = m[1]
		}
	case kindDataLoaderShm:
		rep.Framework = sc.torchish()
		rep.Extra["kind"] = KindDataLoaderShm
	case kindHostRequires:
		rep.Extra["kind"] = KindHostRequires
		rep.Extra["stack"] = StackOllama
		if m := reHostRequires.FindStringSubmatch(ev); m != nil {
			rep.TriedToAllocateBytes = sizeAt(m, 1)
			rep.FreeBytes = sizeAt(m, 3)
		}
	}
}

// hostPhase is where a host-memory kill happened, from what the paste
// shows around it: the checkpoint-loading progress bar, or nothing.
func hostPhase(sc *scan, a anchor) (string, string) {
	li := sc.lineOf(a.pos)
	for k := li; k >= 0 && k >= li-3; k-- {
		if reLoadingShards.MatchString(sc.lines[k].text) {
			return PhaseLoad, "the checkpoint was loading (\"Loading checkpoint shards\")"
		}
	}
	return PhaseUnknown, ""
}

// ggml function names that run at start-up (loading the weights, sizing
// the KV cache and compute buffers) or while generating.
var (
	reGGMLStartup = regexp.MustCompile(`\b(?:llama_model_load|load_tensors|llm_load_tensors|alloc_tensor_range|llama_kv_cache_init|llama_init_from_model|llama_new_context_with_model|llama_context|graph_reserve|sched_reserve|common_init_from_params|llama_init_from_gpt_params|load_model|llama_kv_cache_unified|llama_model_loader|init_from_params)\b`)
	reGGMLRuntime = regexp.MustCompile(`\b(?:llama_decode|llama_kv_cache_update\w*|update_slots|decode|encode_image_with_clip|launch_slot_with_task|process_token)\b`)
)

// ggmlReach is how many lines around a ggml failure its phase is read from.
const ggmlReach = 6

// ggmlPhase reads the phase from the ggml functions that log around the
// failure: start-up is the load phase (as vLLM's KV sizing is), decoding
// is generation.
func ggmlPhase(sc *scan, a anchor) (string, string) {
	li := sc.lineOf(a.pos)
	runtime := ""
	for k := max(0, li-2); k < len(sc.lines) && k <= li+ggmlReach; k++ {
		t := sc.lines[k].text
		if m := reGGMLStartup.FindString(t); m != "" {
			return PhaseLoad, "llama.cpp's " + m + " (start-up)"
		}
		if m := reGGMLRuntime.FindString(t); m != "" && runtime == "" {
			runtime = m
		}
	}
	if runtime != "" {
		return PhaseGenerate, "llama.cpp's " + runtime + " (while generating)"
	}
	return PhaseUnknown, ""
}

// readReport marks an OOM that a report reformats: ComfyUI's Error Report
// or a JSON error response of a serving API, so that format stays the
// message's and extra.kind says what wrapped it.
func readReport(sc *scan, a anchor, rep *Report) {
	if a.kind == kindReport || strings.Contains(sc.text, "# ComfyUI Error Report") || strings.Contains(sc.text, "**Exception Type:**") {
		rep.Extra["kind"] = KindComfyUIReport
		return
	}
	line := sc.lines[sc.lineOf(a.pos)].text
	if _, ok := rep.Extra["kind"]; !ok && jsonStringField.MatchString(line[:a.pos-sc.starts[sc.lineOf(a.pos)]]) {
		rep.Extra["kind"] = KindJSONResponse
	}
}

// jsonStringField is a JSON key whose string value holds the message
// ("error": "...", "message": "...", "detail": "...").
var jsonStringField = regexp.MustCompile(`"(?:error|message|detail|msg|warnings)"\s*:\s*\[?\s*"`)

// intOf reads a decimal count, for callers that need an int.
func intOf(s string) (int, bool) {
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n, err == nil
}

// ggmlBuffer says what the failed ggml buffer holds, from the lines of
// its event: the KV cache, the compute graph, or the weights.
func ggmlBuffer(sc *scan, a anchor) string {
	ev := strings.ToLower(sc.eventText(a))
	switch {
	case strings.Contains(ev, "kv cache") || strings.Contains(ev, "kv_cache_init") || strings.Contains(ev, "kv buffer"):
		return "kv"
	case strings.Contains(ev, "compute") || strings.Contains(ev, "gallocr") || strings.Contains(ev, "graph_reserve"):
		return "compute"
	case strings.Contains(ev, "alloc_tensor_range") || strings.Contains(ev, "load_tensors") || strings.Contains(ev, "model buffer") || strings.Contains(ev, "llama_model_load"):
		return "weights"
	}
	return ""
}
