package oom

import (
	"regexp"
	"slices"
	"strings"
)

// kind is the message family an anchor belongs to; it decides format,
// framework and which extractor reads the numbers.
type kind int

const (
	kindTorch           kind = iota // "X out of memory. Tried to allocate", both forms
	kindTorchBare                   // "Tried to allocate 20.00 MiB (GPU 0; ..." with no prefix
	kindMPS                         // "MPS backend out of memory"
	kindCUDAError                   // "CUDA error: out of memory" (no numbers)
	kindTHC                         // THCudaCheck ... error=2 : out of memory
	kindTFTensor                    // "OOM when allocating tensor"
	kindTFDriver                    // "failed to allocate 2.12G (N bytes) from device: CUDA_ERROR_OUT_OF_MEMORY"
	kindPinnedHost                  // "failed to alloc N bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
	kindTFEigen                     // "EigenAllocator for GPU ran out of memory when allocating N"
	kindTFWarning                   // "Allocator (GPU_0_bfc) ran out of memory trying to allocate ... not a failure"
	kindXLA                         // "Out of memory while trying to allocate", "Failed to allocate request for"
	kindXLAHBM                      // "Ran out of memory in memory space hbm"
	kindXLAReserve                  // "Attempting to reserve 6.14G at the bottom of memory"
	kindCPU                         // DefaultCPUAllocator / posix_memalign
	kindVLLMKV                      // vLLM KV-cache sizing ValueErrors
	kindVLLMStartup                 // vLLM V1 "Free memory on device (...) on startup is less than desired"
	kindTGI                         // "Not enough memory to handle N prefill tokens"
	kindSGLang                      // "Not enough memory. Please try to increase --mem-fraction-static"
	kindCuBLAS                      // CUBLAS_STATUS_ALLOC_FAILED
	kindCuDNN                       // CUDNN_STATUS_ALLOC_FAILED
	kindDataLoader                  // "DataLoader worker (pid N) is killed by signal: Killed"
	kindHostKilled                  // Kubernetes OOMKilled
	kindTorchLimit                  // torch<=2.0 "Allocation on device 0 would exceed allowed memory. (out of memory)"
	kindAllocOnDevice               // torch's cudaMallocAsync OOM, its device index lost: "OutOfMemoryError: Allocation on device "
	kindReport                      // a report that reformats the error: ComfyUI's "**Exception Type:** torch.OutOfMemoryError"
	kindGGML                        // llama.cpp/ggml: "allocating N MiB on device 0: cudaMalloc failed: out of memory"
	kindGGMLFollow                  // ggml lines that follow one: "failed to allocate CUDA0 buffer of size N"
	kindLookAlike                   // a line that says "out of memory" about something else (host pinned memory a program falls back from, a JS heap): never an anchor, and no fallback reads it
	kindNCCL                        // NCCL_DEBUG: "NCCL WARN Cuda failure 'out of memory'"
	kindNCCLFollow                  // NCCL_DEBUG: "NCCL WARN Failed to CUDA calloc N bytes"
	kindOOMKiller                   // the Linux OOM killer: "Out of memory: Killed process 7899 (python)"
	kindOOMKillerFollow             // its other lines: "python invoked oom-killer", "oom-kill:constraint=..."
	kindKilled                      // a bare "Killed" from the shell: the process got SIGKILL, usually the OOM killer
	kindSIGKILL                     // torchrun: a worker that "failed (exitcode: -9)", i.e. SIGKILL
	kindRustAlloc                   // Rust's allocator abort: "memory allocation of N bytes failed"
	kindBadAlloc                    // C++: "terminate called after throwing an instance of 'std::bad_alloc'"
	kindNumpyMemory                 // NumPy: "_ArrayMemoryError: Unable to allocate 7.45 GiB for an array"
	kindPyMemory                    // Python's bare "MemoryError"
	kindDataLoaderShm               // "Unexpected bus error encountered in worker ... insufficient shared memory (shm)"
	kindHostRequires                // Ollama refusing a model: "model requires more system memory (X) than is available (Y)"
	kindCUDADriver                  // the driver API's CUDA_ERROR_OUT_OF_MEMORY as numba and CuPy raise it: "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY"
	kindCuPy                        // CuPy's memory pool: "out of memory to allocate N bytes (total M bytes)", "Out of memory allocating N bytes (allocated so far: M bytes)"
	kindTensorRT                    // TensorRT's "Error Code 2: OutOfMemory", TensorRT-LLM's "[TensorRT-LLM][ERROR] CUDA runtime error in ...: out of memory" and its executor's "insufficient GPU memory"
	kindVLLMCumem                   // vLLM's sleep-mode allocator: "CUDA Error: out of memory at .../cumem_allocator.cpp:56"
	kindVLLMNegativeKV              // vLLM V1 logging a negative KV budget: "Available KV cache memory: -2.77 GiB"
	kindRMM                         // RAPIDS' memory manager (cuDF, Spark RAPIDS): "Could not initialize RMM", "RMM failure at: ... out of memory"
	kindDriverCode                  // the driver's out-of-memory code in a wording not known here: "... failed with error CUDA_ERROR_OUT_OF_MEMORY", "CUresult error result=2"
	kindFallback                    // an error line saying "out of memory" in a wording not known here
)

// family groups the kinds whose lines belong to one event: ggml prints
// the failed cudaMalloc, then the buffer, then the load error; NCCL the CUDA
// failure, then the calloc; the OOM killer a header, a task table, then the
// kill. 0 for kinds that stand alone.
func (k kind) family() int {
	switch k {
	case kindGGML, kindGGMLFollow:
		return 1
	case kindNCCL, kindNCCLFollow:
		return 2
	case kindOOMKiller, kindOOMKillerFollow:
		return 3
	case kindNumpyMemory, kindPyMemory, kindRMM:
		// "MemoryError: Unable to allocate ... for an array" is both, as
		// cuDF's "MemoryError: std::bad_alloc: out_of_memory: RMM ...".
		return 4
	}
	return 0
}

// generic reports the kinds that read a line only when no known wording
// has: the fallback, and the driver's bare out-of-memory code (TF's
// "from device: CUDA_ERROR_OUT_OF_MEMORY" is its own kind).
func (k kind) generic() bool { return k == kindFallback || k == kindDriverCode }

// refines reports a kind that says more about a line than o does.
func (k kind) refines(o kind) bool {
	return (k == kindNumpyMemory || k == kindRMM) && o == kindPyMemory
}

// follow reports a kind that continues an event its family's head started.
func (k kind) follow() bool {
	return k == kindGGMLFollow || k == kindNCCLFollow || k == kindOOMKillerFollow
}

// Reach of an event: the lines a follow-up may sit after its head (or, for
// the OOM killer, before it: the kernel prints the task table first).
const (
	followReach     = 4
	oomKillerBefore = 400
	// mergeLook bounds how many neighbouring anchors are compared, so a
	// paste of thousands of messages on one line stays linear.
	mergeLook = 8
)

// strength orders anchors when choosing the OOM a paste is about: the TF
// allocator's "not a failure" warnings and TF's driver retries only count
// when nothing stronger is in the paste, and the generic fallback last.
func (k kind) strength() int {
	switch k {
	case kindFallback:
		return 0
	case kindTFWarning, kindKilled, kindSIGKILL:
		// Warnings and a bare kill count only when nothing says more.
		return 1
	case kindTFDriver, kindPinnedHost, kindReport:
		// A report's header gives way to the message it reformats.
		return 2
	}
	return 3
}

// anchorRule finds one message family: needle is a literal that a cheap
// scan looks for; re confirms it on the line and gives the message start.
// Needles start with a rare byte ("f memory", not "out of memory"):
// strings.Index jumps between occurrences of the first byte, so a common
// one makes the scan of a big log many times slower.
type anchorRule struct {
	needle string
	re     *regexp.Regexp
	kind   kind
}

// confirmedByNext holds the rules whose match counts only when what
// follows it on its line, or the next line, matches too: the words that
// say why a generic failure is a memory one.
var confirmedByNext = map[*regexp.Regexp]*regexp.Regexp{
	reMetalStatus: regexp.MustCompile(`^\s*(?:error: )?out of memory\b`),
}

// refutedNear holds the rules whose match does not count when its line,
// or the next, says it is a warning the program goes on from: TensorRT
// logs "Requested amount of GPU memory ... could not be allocated" at
// warning level when it skips a tactic, and at error level (or bare, as
// ChatRTX prints it) when the build fails.
var refutedNear = map[*regexp.Regexp]*regexp.Regexp{
	reTRTRequestedAnchor: regexp.MustCompile(`\[W\]|\bWARN(?:ING)?\b|Skipping tactic|\[TRT\] \[W`),
}

var reTRTRequestedAnchor = regexp.MustCompile(`Requested amount of GPU memory \(\d+ bytes\) could not be allocated`)

// nearHead holds the needles of lines that only ever follow a line another
// needle finds (ggml's load error after its failed buffer, NCCL's calloc
// after its CUDA failure, the OOM killer's header before its kill): a big
// paste is not scanned for them on their own, only inside the windows the
// others open. Every scan of a big paste costs a pass per needle.
var nearHead = map[string]bool{
	"unable to allocate": true, "buffer for kv": true, "compute buffers": true, "CUDA calloc": true, "oom-kill": true,
}

var anchorRules = []anchorRule{
	// Look-alikes first: they mark their line so that no later rule (the
	// fallback above all) reads it as an OOM. ggml's pinned host buffer
	// falls back to pageable memory and loading goes on (llama.cpp's
	// ggml_cuda_host_malloc logs it as a warning); V8's heap limit is the
	// JavaScript runtime's own cap, not the machine's memory.
	{"pinned memory", regexp.MustCompile(`failed to allocate\s+` + sizePattern + ` of pinned memory: out of memory`), kindLookAlike},
	{"JavaScript heap", regexp.MustCompile(`JavaScript heap out of memory`), kindLookAlike},
	// A TPU core's on-chip scratch (vmem, smem, cmem) overflowed by a
	// kernel's tiling, as Triton's shared memory is: not the device's HBM.
	{"f memory in memory space", regexp.MustCompile(`Ran out of memory in memory space (?:vmem|smem|cmem|sflag)\b`), kindLookAlike},
	{"f memory", regexp.MustCompile(`MPS backend out of memory`), kindMPS},
	{"f memory", regexp.MustCompile(`(?:\b(?:CUDA|HIP|XPU|NPU|MTIA|GPU)\s)?out of memory\.?\s*Tried to allocate`), kindTorch},
	{"Tried to allocate", regexp.MustCompile(`Tried to allocate\s+` + sizePattern + `\s*(?:\((?:GPU|NPU|XPU)\s+\d+;|\.\s*(?:GPU|XPU|NPU)\s+\d+ has a total)`), kindTorchBare},
	// torch 0.4 printed no blank after the colon ("CUDA error:out of memory").
	// ggml before 2024 wrote "CUDA error 2 at ggml-cuda.cu:9132: out of memory".
	{"f memory", regexp.MustCompile(`\b(?:CUDA|HIP|XPU)(?: driver)? error:\s*out of memory|\bCUDA error \d+ at [^\n]{1,300}?: out of memory`), kindCUDAError},
	{"f memory", regexp.MustCompile(`THCudaCheck FAIL[^\n]{0,200}error=2 : out of memory|cuda runtime error \(2\) : out of memory`), kindTHC},
	{"OOM when", regexp.MustCompile(`OOM when allocating tensor`), kindTFTensor},
	// TF2 eager ops that fail in the BFC allocator without naming a tensor:
	// "ResourceExhaustedError: failed to allocate memory [Op:AddV2]". The
	// needles skip the common first letter of "exhausted".
	{"xhausted", reTFAllocFailed, kindTFTensor},
	{"XHAUSTED", reTFAllocFailed, kindTFTensor},
	{"OUT_OF_MEMORY", regexp.MustCompile(`failed to allocate\s+` + sizePattern + `\s*(?:\(\d+ bytes\))?\s*from device: CUDA_ERROR_OUT_OF_MEMORY`), kindTFDriver},
	{"OUT_OF_MEMORY", regexp.MustCompile(`failed to alloc \d+ bytes on host: CUDA_ERROR_OUT_OF_MEMORY`), kindPinnedHost},
	{"f memory", regexp.MustCompile(`EigenAllocator for GPU ran out of memory when allocating`), kindTFEigen},
	{"f memory", regexp.MustCompile(`Allocator \(\w+\) ran out of memory trying to allocate`), kindTFWarning},
	// CuPy's pool error reads like XLA's but counts with commas and what
	// the pool holds ("25,600,000 bytes (allocated so far: ..."); XLA's
	// ends its byte count with a full stop. CuPy before v7 wrote "out of
	// memory to allocate N bytes (total M bytes)".
	{"f memory", regexp.MustCompile(`Out of memory allocating [\d,]+ bytes \(allocated so far: [\d,]+ bytes\)|\b[Oo]ut of memory to allocate \d+ bytes \(total \d+ bytes\)`), kindCuPy},
	{"f memory", regexp.MustCompile(`Out of memory (?:while trying to allocate|allocating)\s+\d+ bytes\.`), kindXLA},
	{"Failed to allocate request", regexp.MustCompile(`Failed to allocate request for`), kindXLA},
	// Only HBM is the device's memory: vmem, smem and cmem are a TPU core's
	// on-chip scratch, which a kernel's tiling overflows (as Triton's
	// shared memory), not the model.
	{"f memory", regexp.MustCompile(`Ran out of memory in memory space (?:hbm|HBM)\b`), kindXLAHBM},
	{"Attempting to reserve", regexp.MustCompile(`Attempting to reserve\s+` + sizePattern + ` at the bottom of memory`), kindXLAReserve},
	{"That was not possible", regexp.MustCompile(`Attempting to allocate\s+` + sizePattern + `\. That was not possible`), kindXLAReserve},
	{"DefaultCPUAllocator", regexp.MustCompile(`(?:\[enforce fail at [^\]]{0,300}\][^\n]{0,40})?DefaultCPUAllocator: (?:can't allocate memory|not enough memory)`), kindCPU},
	// The leading "[" is optional: a selection that starts at the message
	// clips it ("enforce fail at CPUAllocator.cpp:56] posix_memalign").
	{"x_memalign", regexp.MustCompile(`\[?enforce fail at CPUAllocator\.cpp:\d+\] posix_memalign`), kindCPU},
	{"KV cache", regexp.MustCompile(`larger than the maximum number of tokens that can be stored in KV cache|KV cache is needed, which is larger than the available KV cache memory|[Ii]nsufficient memory for (?:the )?KV cache`), kindVLLMKV},
	{"No available memory", regexp.MustCompile(`No available memory for the cache blocks`), kindVLLMKV},
	{"Not enough memory", regexp.MustCompile(`Not enough memory to handle \d+ (?:prefill|total) tokens`), kindTGI},
	{"Not enough memory", regexp.MustCompile(`Not enough memory\. Please try to increase --mem-fraction-static`), kindSGLang},
	// Only the failing check is an OOM: vLLM also logs "Free memory on
	// device (X/Y GiB) on startup." when the check passes. Newer builds
	// name the device ("on device cuda:1 (...)").
	{"Free memory on device", regexp.MustCompile(`Free memory on device (?:\w+:\d+ )?\([^()\n]{1,40}\) on startup is less than`), kindVLLMStartup},
	{"ALLOC_FAILED", regexp.MustCompile(`CUBLAS_STATUS_ALLOC_FAILED`), kindCuBLAS},
	{"ALLOC_FAILED", regexp.MustCompile(`CUDNN_STATUS_ALLOC_FAILED`), kindCuDNN},
	{"killed by signal", regexp.MustCompile(`DataLoader worker \(pid \d+\) is killed by signal: (?:Killed|Bus error)`), kindDataLoader},
	{"OOMKilled", regexp.MustCompile(`\bOOMKilled\b`), kindHostKilled},
	{"xceed allowed memory", regexp.MustCompile(`Allocation on device \d+ would exceed allowed memory`), kindTorchLimit},
	// torch's cudaMallocAsync backend (ComfyUI's default) prints the device
	// index as a char, so the message stops after "device ".
	{"Allocation on device", regexp.MustCompile(`(?:OutOfMemoryError:|!!! Exception during processing !!!|\*\*Exception Message:\*\*)\s*Allocation on device\s*(?:$|[^\s\d])`), kindAllocOnDevice},
	{"**Exception Type", regexp.MustCompile(`\*\*Exception Type:\*\*\s*(?:torch\.)?(?:cuda\.)?OutOfMemoryError\b`), kindReport},
	// llama.cpp / ggml (CUDA, ROCm through HIP, Vulkan, Metal, SYCL, CPU).
	{"f memory", regexp.MustCompile(`(?:allocating\s+` + sizePattern + ` on device \d+: )?\b(?:cuda|hip|mu)Malloc failed: out of memory`), kindGGML},
	{"Device memory allocation", regexp.MustCompile(`Device memory allocation of size \d+ failed`), kindGGML},
	// SYCL's and Metal's own wordings of a failed buffer.
	{"Bytes of memory on device", regexp.MustCompile(`can't allocate \d+ Bytes of memory on device`), kindGGML},
	{"failed to allocate buffer, size", regexp.MustCompile(`failed to allocate buffer, size =\s*` + sizePattern), kindGGML},
	{"buffer of size", regexp.MustCompile(`failed to allocate (?:\w+ )?buffer of size \d+`), kindGGMLFollow},
	{"unable to allocate", regexp.MustCompile(`unable to allocate (?:\w+ )?(?:backend )?buffer\b`), kindGGMLFollow},
	{"buffer for kv", regexp.MustCompile(`failed to allocate buffer for kv cache`), kindGGMLFollow},
	{"compute buffers", regexp.MustCompile(`failed to allocate compute (?:pp )?buffers`), kindGGMLFollow},
	{"ErrorOutOf", regexp.MustCompile(`\bErrorOutOf(?:Device|Host)Memory\b|kIOGPUCommandBufferCallbackErrorOutOfMemory`), kindGGMLFollow},
	// Metal's failed command buffer says only "status 5" (an error); in
	// 2024 llama.cpp printed why on the next line: "out of memory".
	{"failed with status", reMetalStatus, kindGGML},
	// NCCL says why in its NCCL_DEBUG lines (or, since 2.19, after "Last
	// error:" in the exception); the exception itself only says "unhandled
	// cuda error".
	{"f memory'", regexp.MustCompile(`Cuda failure (?:\d+ )?'out of memory'`), kindNCCL},
	{"CUDA calloc", regexp.MustCompile(`Failed to CUDA calloc (?:async )?\d+ bytes`), kindNCCLFollow},
	// Host memory.
	{"f memory: Kill", regexp.MustCompile(`(?:Memory cgroup out|Out) of memory: Kill(?:ed)? process \d+`), kindOOMKiller},
	{"total-vm", regexp.MustCompile(`\bKilled process \d+ \([^)\n]{0,64}\),? total-vm`), kindOOMKiller},
	{"oom-kill", regexp.MustCompile(`\binvoked oom-killer\b|\boom-kill:constraint=`), kindOOMKillerFollow},
	// A bare kill: the shell's "Killed" alone, glued to a tqdm bar
	// ("...3.37it/s]Killed"), or bash's job report.
	{"Killed", regexp.MustCompile(`^\s*Killed(?:: 9)?\s*$|(?:it/s|s/it)\]Killed|: line \d+:\s+\d+ Killed\s`), kindKilled},
	{"zsh: killed", regexp.MustCompile(`^zsh: killed\s`), kindKilled},
	{"(exitcode: -9)", regexp.MustCompile(`failed \(exitcode: -9\)`), kindSIGKILL},
	{"(SIGKILL)", regexp.MustCompile(`Signal 9 \(SIGKILL\) received by PID \d+`), kindSIGKILL},
	// 137 = 128 + SIGKILL: Docker compose, Kubernetes and IDEs report the kill this way.
	{"code 137", regexp.MustCompile(`(?:exited with code|exit code:?|Exit Code:)\s*137\b`), kindSIGKILL},
	// No word boundary before it: a progress bar redrawn with \r that lost
	// its line end glues its last word on ("ETA:  2smemory allocation of").
	{"memory allocation of", regexp.MustCompile(`memory allocation of \d+ bytes failed`), kindRustAlloc},
	{"std::bad_alloc", regexp.MustCompile(`instance of 'std::bad_alloc'|what\(\):\s+std::bad_alloc`), kindBadAlloc},
	{"Unable to allocate", regexp.MustCompile(`MemoryError: Unable to allocate\s+\d{1,15}\.?\d{0,9}\s?[KMGTP]?i?B for an array`), kindNumpyMemory},
	{"MemoryError", regexp.MustCompile(`^\s*MemoryError(?::|\s*$)`), kindPyMemory},
	{"Unexpected bus error", regexp.MustCompile(`Unexpected bus error encountered in worker\. This might be caused by insufficient shared memory`), kindDataLoaderShm},
	{"requires more system memory", regexp.MustCompile(`model requires more system memory \(` + sizePattern + `\) than is available \(` + sizePattern), kindHostRequires},
	// The CUDA driver API's own code, as numba's CudaAPIError and CuPy's
	// CUDADriverError name it (docs/oom-diagnosis.md §2).
	{"OUT_OF_MEMORY", regexp.MustCompile(`Call to \w+ results in CUDA_ERROR_OUT_OF_MEMORY|CUDADriverError: CUDA_ERROR_OUT_OF_MEMORY`), kindCUDADriver},
	{"f memory", regexp.MustCompile(`\bcuMem\w+ failed: out of memory`), kindCUDADriver},
	// TensorRT's builder and runtime, TensorRT-LLM's C++ runtime and its
	// PyTorch executor. A tactic TensorRT skips for want of memory ("[W]
	// Requested amount of GPU memory ... could not be allocated", "Skipping
	// tactic") is a warning the build goes on from, so it is no anchor.
	{"Code 2: OutOfMemory", regexp.MustCompile(`Error Code 2: OutOfMemory`), kindTensorRT},
	{"[TensorRT-LLM][ERROR]", regexp.MustCompile(`\[TensorRT-LLM\]\[ERROR\][^\n]{0,400}?\bout of memory\b`), kindTensorRT},
	{"insufficient GPU memory", regexp.MustCompile(`Executor creation failed due to insufficient GPU memory`), kindTensorRT},
	{"Requested amount of GPU memory", reTRTRequestedAnchor, kindTensorRT},
	// A plugin's workspace larger than the builder's memory pool: TensorRT
	// words it as an internal error, not as memory.
	{"of scratch space", regexp.MustCompile(`requires \d+ bytes of scratch space, but only \d+ is available`), kindTensorRT},
	{"f memory at", regexp.MustCompile(`CUDA Error: out of memory at \S*cumem_allocator\.cpp:\d+`), kindVLLMCumem},
	{"Available KV cache memory: -", regexp.MustCompile(`Available KV cache memory: -\d`), kindVLLMNegativeKV},
	// SGLang's profile left no tokens for the KV pool: a negative count is
	// its start-up refusal, a positive one only a cap it applies.
	{"profiled value -", regexp.MustCompile(`max_total_tokens=\d+ is larger than the profiled value -\d+`), kindSGLang},
	// RAPIDS' memory manager: its pool could not be created, or an
	// allocation from it failed (docs/oom-diagnosis.md §2).
	{"RMM", regexp.MustCompile(`Could not initialize RMM\b|\bRMM failure at:[^\n]{0,300}?(?:out of memory|[Mm]aximum pool size exceeded|pool size exceeds)`), kindRMM},
	{"out_of_memory", regexp.MustCompile(`\brmm::out_of_memory\b|out_of_memory: (?:RMM failure|CUDA error) at`), kindRMM},
	// The driver's own code in any wording: KeOps' "cuMemAlloc(...) failed
	// with error CUDA_ERROR_OUT_OF_MEMORY", torch_memory_saver's "CUresult
	// error result=2" (2 is CUDA_ERROR_OUT_OF_MEMORY in cuda.h).
	{"OUT_OF_MEMORY", regexp.MustCompile(`\bCUDA_ERROR_OUT_OF_MEMORY\b`), kindDriverCode},
	{"CUresult error", regexp.MustCompile(`CUresult error\s+result=2\b`), kindDriverCode},
	// The fallback wants an error marker in log style (an exception class,
	// ERROR, RESOURCE_EXHAUSTED, "failed"), so that prose about running
	// out of memory is not an OOM.
	{"f memory", regexp.MustCompile(`(?:\b[A-Z][\w.]*(?:Error|Exception)\b|\bERROR\b|\bFATAL\b|\bFatal\b|RESOURCE_EXHAUSTED|\bfailed\b|\bFAILED\b)[^\n]{0,80}?\b[Oo]ut of memory\b`), kindFallback},
	{"OutOfMemory", regexp.MustCompile(`\b[\w.]*OutOfMemoryError\b:`), kindFallback},
}

var reMetalStatus = regexp.MustCompile(`command buffer \d+ failed with status 5`)

var reTFAllocFailed = regexp.MustCompile(`(?:ResourceExhaustedError|Resource exhausted|RESOURCE_EXHAUSTED):? failed to allocate memory`)

// anchor is one OOM message found in the normalised text.
type anchor struct {
	pos  int // byte offset of the message start in the joined text
	kind kind
}

// findAnchors lists the OOM messages in text (normalised lines joined by
// \n), in order. A message quoted in source code (`raise ValueError("No
// available memory ...`) is not a message; a weaker anchor inside a
// stronger one's line is dropped.
func findAnchors(text string) []anchor {
	var found []anchor
	// specific holds the lines with an anchor of a known wording; the
	// fallback rules (last in anchorRules) skip them.
	specific := map[int]bool{}
	for _, r := range anchorRules {
		for off := 0; off < len(text); {
			i := strings.Index(text[off:], r.needle)
			if i < 0 {
				break
			}
			i += off
			ls, le := lineBounds(text, i)
			off = le + 1
			if r.kind.generic() && specific[ls] {
				continue
			}
			if r.kind == kindLookAlike {
				if r.re.MatchString(text[ls:le]) {
					specific[ls] = true
				}
				continue
			}
			next := confirmedByNext[r.re]
			for _, loc := range r.re.FindAllStringIndex(text[ls:le], -1) {
				if inSourceCode(text[max(ls, ls+loc[0]-sourceReach) : ls+loc[0]]) {
					continue
				}
				// The reason may follow on the line itself: the normaliser
				// joins a short line to a long one it takes for a wrap.
				if next != nil && !next.MatchString(text[ls+loc[1]:le]) && !next.MatchString(nextLine(text, le)) {
					continue
				}
				if w := refutedNear[r.re]; w != nil && (w.MatchString(text[ls:le]) || w.MatchString(nextLine(text, le))) {
					continue
				}
				found = append(found, anchor{pos: ls + loc[0], kind: r.kind})
				if !r.kind.generic() {
					specific[ls] = true
				}
			}
		}
	}
	slices.SortStableFunc(found, func(a, b anchor) int { return a.pos - b.pos })
	return mergeEvents(text, dedupeAnchors(text, found))
}

// mergeEvents keeps one anchor per event of the kinds that print several
// lines for one failure: a follow-up line near an earlier line of its
// family (ggml's buffer and load error after the failed cudaMalloc, NCCL's
// calloc after the CUDA failure), a second match of a family on one line,
// and the OOM killer's header or task table before its "Killed process"
// line. A follow-up alone is an event of its own.
func mergeEvents(text string, anchors []anchor) []anchor {
	lines := make([]int, len(anchors)) // line number of each anchor
	n, last := 0, 0
	for i, a := range anchors {
		n += strings.Count(text[last:a.pos], "\n")
		last = a.pos
		lines[i] = n
	}
	out := anchors[:0:0]
	outLines := []int{}
	for i, a := range anchors {
		f := a.kind.family()
		if f != 0 {
			dup := false
			for j := len(out) - 1; j >= max(0, len(out)-mergeLook) && lines[i]-outLines[j] <= followReach; j-- {
				if out[j].kind.family() == f && (a.kind.follow() || outLines[j] == lines[i] || a.kind == kindRMM && out[j].kind == kindRMM) {
					dup = true
					if outLines[j] == lines[i] && a.kind.refines(out[j].kind) {
						// The later match on the line reads more of it (an
						// indented "MemoryError: Unable to allocate ... for an
						// array" matches as a bare MemoryError first).
						out[j] = a
					}
					break
				}
			}
			if !dup && a.kind == kindOOMKillerFollow {
				for j := i + 1; j < min(len(anchors), i+1+mergeLook) && lines[j]-lines[i] <= oomKillerBefore; j++ {
					if anchors[j].kind == kindOOMKiller {
						dup = true
						break
					}
				}
			}
			if dup {
				continue
			}
		}
		out = append(out, a)
		outLines = append(outLines, lines[i])
	}
	return out
}

// dedupeAnchors keeps one anchor per message: a fallback match on a line
// that holds a specific anchor is the same message ("torch.OutOfMemoryError:
// CUDA out of memory" is both), and so is a bare "Tried to allocate" right
// after "CUDA out of memory.".
func dedupeAnchors(text string, found []anchor) []anchor {
	out := make([]anchor, 0, len(found))
	for i := 0; i < len(found); {
		ls, le := lineBounds(text, found[i].pos)
		j := i
		specific := false
		for j < len(found) && found[j].pos < le {
			specific = specific || found[j].kind != kindFallback
			j++
		}
		lastTorch := -1
		for _, a := range found[i:j] {
			switch {
			case a.kind == kindFallback && (specific || len(out) > 0 && out[len(out)-1].pos >= ls):
				continue
			case a.kind == kindTorchBare && lastTorch >= 0 && a.pos-lastTorch < 64:
				continue
			case a.kind == kindTorch:
				lastTorch = a.pos
			}
			out = append(out, a)
		}
		i = j
	}
	return out
}

// nextLine returns the line that starts after the line end le.
func nextLine(text string, le int) string {
	if le >= len(text) {
		return ""
	}
	_, end := lineBounds(text, le+1)
	return text[le+1 : end]
}

// lineBounds returns the start and end offsets of the line holding i.
func lineBounds(text string, i int) (int, int) {
	ls := strings.LastIndexByte(text[:i], '\n') + 1
	le := strings.IndexByte(text[i:], '\n')
	if le < 0 {
		return ls, len(text)
	}
	return ls, i + le
}

// sourceReach is how far before a match a `raise` is looked for.
const sourceReach = 200

// inSourceCode reports whether the text before a match on its line makes
// it a string literal in a raise statement rather than a printed message:
// a quote opened after "raise " is still open. A title such as `raise
// ValueError("No available memory ... " ValueError: No available memory`
// holds both, and the second is the message.
func inSourceCode(before string) bool {
	i := strings.LastIndex(before, "raise ")
	if i < 0 {
		return false
	}
	var quote byte
	for _, c := range []byte(before[i:]) {
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case c == quote:
			quote = 0
		}
	}
	return quote != 0
}

// primary picks the anchor the report is about: the first of the
// strongest kind present.
func primary(anchors []anchor) (anchor, bool) {
	best := -1
	for i, a := range anchors {
		if best < 0 || a.kind.strength() > anchors[best].kind.strength() {
			best = i
		}
	}
	if best < 0 {
		return anchor{}, false
	}
	return anchors[best], true
}
