package oom

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Readers of the out-of-memory errors of CUDA programs that are not a
// framework's caching allocator: the driver API's own code as numba and
// CuPy raise it, CuPy's memory pool, TensorRT and TensorRT-LLM, vLLM's
// sleep-mode allocator and its negative KV budget (docs/oom-diagnosis.md §2).

// Kinds of these messages, for extra.kind.
const (
	KindCUDADriver = "cuda-driver-out-of-memory"
	KindCuPy       = "cupy-out-of-memory"
	KindTensorRT   = "tensorrt-out-of-memory"
	KindVLLMCumem  = "vllm-cumem-out-of-memory"
	KindRMM        = "rmm-out-of-memory"
)

// Stacks named in extra.stack by these readers.
const (
	StackTensorRTLLM = "tensorrt-llm"
	StackTensorRT    = "tensorrt"
)

// trtReach is how many bytes around a TensorRT error its own lines (the
// size it asked for, the executor's ledger) are read from.
const trtReach = 4096

var (
	reDriverCall = regexp.MustCompile(`Call to (\w+) results in CUDA_ERROR_OUT_OF_MEMORY|\b(cuMem\w+) failed: out of memory`)
	// CuPy v7+: "Out of memory allocating 25,600,000 bytes (allocated so
	// far: 3,635,267,072 bytes)"; before: "out of memory to allocate N
	// bytes (total M bytes)", where M is what the pool holds.
	reCuPyNew = regexp.MustCompile(`Out of memory allocating ([\d,]+) bytes \(allocated so far: ([\d,]+) bytes\)`)
	reCuPyOld = regexp.MustCompile(`out of memory to allocate (\d+) bytes \(total (\d+) bytes\)`)
	// reScriptGPU is the device a training script echoes before it starts
	// (Chainer's examples print "GPU: 0").
	reScriptGPU = regexp.MustCompile(`(?m)^GPU: (\d+)\s*$`)

	reTRTRequested = regexp.MustCompile(`Requested amount of GPU memory \((\d+) bytes\) could not be allocated`)
	reTRTTotal     = regexp.MustCompile(`Total GPU memory \(GiB\):\s*(\d+(?:\.\d+)?)`)
	reTRTFree      = regexp.MustCompile(`Free GPU memory before component creation attempt \(GiB\):\s*(\d+(?:\.\d+)?)`)
	reTRTComponent = regexp.MustCompile(`The following component could not be created:\s*([\w .-]{1,40}?)\s*$`)
	reTRTBuild     = regexp.MustCompile(`Engine building failed|trtllm-build|\bbuild\.py\b|\[GraphReduction\]|Building engine`)
	reNegativeKV   = regexp.MustCompile(`Available KV cache memory: (-\d+(?:\.\d+)?) (GiB|MiB)`)
	reTRTScratch   = regexp.MustCompile(`requires (\d+) bytes of scratch space, but only \d+ is available`)
	// TensorRT-LLM's own plugins and names in a TensorRT log.
	reTRTLLM = regexp.MustCompile(`(?i)tensorrt[-_]llm|trt-?llm|\bgpt_attention|GPTAttention`)

	// Spark RAPIDS sizes its pool in MiB and prints "MB"
	// (GpuDeviceManager.scala: bytes / 1024 / 1024).
	reRMMInitial = regexp.MustCompile(`Initial RMM allocation\((\d+(?:\.\d+)?) MB\) is larger than free memory\((\d+(?:\.\d+)?) MB\)`)
	reRMMGPU     = regexp.MustCompile(`RMM [A-Z]+ \d+(?:\.\d+)? MB on gpuId (\d+)`)
	reDriverCode = regexp.MustCompile(`\b(cu[A-Z]\w+)\(`)
)

// extractDriver reads the CUDA driver API's CUDA_ERROR_OUT_OF_MEMORY: the
// call that failed (cuMemAlloc asks for memory; cuInit and cuCtxCreate
// fail when the context itself does not fit).
func extractDriver(sc *scan, a anchor, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["kind"] = KindCUDADriver
	if m := reDriverCall.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
		rep.Extra["cuda_call"] = m[1] + m[2]
	}
}

// extractCuPy reads CuPy's pool error. Its "total" is what the pool held,
// never the GPU's capacity, so it stays in extra.
func extractCuPy(sc *scan, a anchor, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["kind"] = KindCuPy
	line := sc.lines[sc.lineOf(a.pos)].text
	if m := reCuPyNew.FindStringSubmatch(line); m != nil {
		if n, ok := intOf(m[1]); ok {
			rep.TriedToAllocateBytes = ptr64(int64(n))
		}
		if n, ok := intOf(m[2]); ok {
			rep.AllocatedByFrameworkBytes = ptr64(int64(n))
		}
	} else if m := reCuPyOld.FindStringSubmatch(line); m != nil {
		if n, ok := intOf(m[1]); ok {
			rep.TriedToAllocateBytes = ptr64(int64(n))
		}
		if n, ok := intOf(m[2]); ok {
			rep.Extra["cupy_pool_bytes"] = int64(n)
		}
	}
	if m := reScriptGPU.FindStringSubmatch(sc.text[max(0, a.pos-eventReach):a.pos]); m != nil {
		rep.Device = cudaDevice(m[1])
	}
}

// extractTensorRT reads TensorRT's and TensorRT-LLM's errors: the size
// TensorRT asked for, and the executor's ledger of the memory it had.
func extractTensorRT(sc *scan, a anchor, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["kind"] = KindTensorRT
	rep.Extra["stack"] = StackTensorRT
	if reTRTLLM.MatchString(sc.text) {
		rep.Extra["stack"] = StackTensorRTLLM
	}
	near := sc.text[max(0, a.pos-trtReach):min(len(sc.text), a.pos+trtReach)]
	if m := reTRTRequested.FindStringSubmatch(near); m != nil {
		if n, ok := parseInt(m[1]); ok {
			rep.TriedToAllocateBytes = &n
		}
	} else if m := reTRTScratch.FindStringSubmatch(near); m != nil {
		// "but only M is available" is the builder's pool, not the GPU.
		if n, ok := parseInt(m[1]); ok {
			rep.TriedToAllocateBytes = &n
		}
	}
	after := sc.text[a.pos:min(len(sc.text), a.pos+trtReach)]
	if m := reTRTTotal.FindStringSubmatch(after); m != nil {
		rep.TotalCapacityBytes, _ = ptrSize(m[1], "GiB")
	}
	if m := reTRTFree.FindStringSubmatch(after); m != nil {
		rep.FreeBytes, _ = ptrSize(m[1], "GiB")
	}
	for _, l := range strings.SplitN(after, "\n", 8) {
		if m := reTRTComponent.FindStringSubmatch(l); m != nil {
			rep.Extra["component"] = m[1]
			break
		}
	}
}

// extractVLLMNegativeKV reads vLLM V1's start-up log of a KV budget below
// zero: the weights and the profiled peak already exceed
// gpu_memory_utilization × the GPU (docs/vllm-kv.md §1).
func extractVLLMNegativeKV(sc *scan, a anchor, rep *Report) {
	rep.Framework = FrameworkVLLM
	rep.Format = FormatVLLMKV
	if m := reNegativeKV.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			unit := float64(gib)
			if m[2] == "MiB" {
				unit = 1 << 20
			}
			rep.Extra["kv_cache_available_bytes"] = int64(math.Round(v * unit))
		}
	}
}

// extractDriverCode reads the driver's out-of-memory code in a wording no
// other rule knows: the call that failed where the line names one.
func extractDriverCode(sc *scan, a anchor, _ string, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["kind"] = KindCUDADriver
	if m := reDriverCode.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
		rep.Extra["cuda_call"] = m[1]
	}
}

// extractRMM reads RAPIDS' memory manager: the pool it asked for and the
// free memory it found, from Spark RAPIDS' warning before the failure.
func extractRMM(sc *scan, a anchor, _ string, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["kind"] = KindRMM
	before := sc.text[max(0, a.pos-eventReach):a.pos]
	if m := reRMMInitial.FindStringSubmatch(before); m != nil {
		rep.TriedToAllocateBytes, _ = ptrSize(m[1], "MiB")
		rep.FreeBytes, _ = ptrSize(m[2], "MiB")
	}
	if m := reRMMGPU.FindStringSubmatch(before); m != nil {
		rep.Device = cudaDevice(m[1])
	}
}

func ptr64(n int64) *int64 { return &n }
