package oom

import "testing"

// TestDriverRules covers the wordings of docs/oom-diagnosis.md §2, each a
// minimal paste of its message, so that the rule, not one paste, holds.
func TestDriverRules(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]any
	}{
		{"numba cuMemAlloc", "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY\n",
			map[string]any{"framework": "other", "format": "other", "extra": map[string]any{"kind": "cuda-driver-out-of-memory", "cuda_call": "cuMemAlloc"}}},
		{"numba cuInit", "CudaAPIError: [2] Call to cuInit results in CUDA_ERROR_OUT_OF_MEMORY\n",
			map[string]any{"extra": map[string]any{"kind": "cuda-driver-out-of-memory", "cuda_call": "cuInit"}}},
		{"cupy driver error", "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
			map[string]any{"extra": map[string]any{"kind": "cuda-driver-out-of-memory"}}},
		{"pycuda", "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory\n",
			map[string]any{"extra": map[string]any{"kind": "cuda-driver-out-of-memory", "cuda_call": "cuMemAlloc"}}},
		{"cupy v7 pool", "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 10,737,418,240 bytes).\n",
			map[string]any{"format": "other", "tried_to_allocate_bytes": float64(1 << 30), "allocated_by_framework_bytes": float64(10 << 30), "extra": map[string]any{"kind": "cupy-out-of-memory"}}},
		{"cupy v5 pool total is not the gpu", "GPU: 1\nException in main training loop: out of memory to allocate 163840000 bytes (total 1673061376 bytes)\n",
			map[string]any{"device": "cuda:1", "tried_to_allocate_bytes": float64(163840000), "total_capacity_bytes": nil, "extra": map[string]any{"kind": "cupy-out-of-memory", "cupy_pool_bytes": float64(1673061376)}}},
		{"xla keeps its own wording", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.\n",
			map[string]any{"format": "xla", "tried_to_allocate_bytes": float64(20029400304)}},
		{"tensorrt builder", "[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)\n[TRT] [W] Requested amount of GPU memory (24793579520 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n[TRT-LLM] [E] Engine building failed, please check the error log.\n",
			map[string]any{"phase": "load", "tried_to_allocate_bytes": float64(24793579520), "extra": map[string]any{"kind": "tensorrt-out-of-memory", "stack": "tensorrt-llm"}}},
		{"tensorrt-llm runtime", "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)\n",
			map[string]any{"extra": map[string]any{"kind": "tensorrt-out-of-memory", "stack": "tensorrt-llm"}}},
		{"tensorrt-llm executor", "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory.\n\nThe following component could not be created: KV cache\nTotal GPU memory (GiB): 140.06\nFree GPU memory before component creation attempt (GiB): 108.86\n",
			map[string]any{"phase": "load", "total_capacity_bytes": float64(150388279869), "free_bytes": float64(116887534961), "extra": map[string]any{"kind": "tensorrt-out-of-memory", "component": "KV cache"}}},
		{"vllm cumem", "CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:56\nCUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:57\n",
			map[string]any{"framework": "vllm", "extra": map[string]any{"kind": "vllm-cumem-out-of-memory"}}},
		{"vllm negative kv budget", "(EngineCore_DP0 pid=563) INFO 12-23 23:34:23 [gpu_worker.py:298] Available KV cache memory: -2.77 GiB\n(EngineCore_DP0 pid=563) ERROR 12-23 23:34:23 [core.py:708] EngineCore failed to start.\n",
			map[string]any{"framework": "vllm", "format": "vllm-kv", "phase": "load", "extra": map[string]any{"kv_cache_available_bytes": float64(-2974264852)}}},
		{"old ggml cuda error", "CUDA error 2 at /go/src/github.com/jmorganca/ollama/llm/llama.cpp/gguf/ggml-cuda.cu:9132: out of memory\ncurrent device: 0\n",
			map[string]any{"device": "cuda:0", "extra": map[string]any{"kind": "cuda-error-out-of-memory", "stack": "ollama"}}},
		// Wordings the fresh2026 holdout brought (scored once before these
		// rules; internal/oomcorpus/fresh2026/README.md), each written anew.
		{"keops driver call", "[KeOps] error: cuMemAlloc(&p_data, sizeof(TYPE *) * nargs) failed with error CUDA_ERROR_OUT_OF_MEMORY\n",
			map[string]any{"framework": "other", "format": "other", "extra": map[string]any{"kind": "cuda-driver-out-of-memory", "cuda_call": "cuMemAlloc"}}},
		{"curesult 2", "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103\n",
			map[string]any{"framework": "other", "extra": map[string]any{"kind": "cuda-driver-out-of-memory"}}},
		{"tensorrt request at error level", "[TRT] [E] Requested amount of GPU memory (2147483648 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n",
			map[string]any{"tried_to_allocate_bytes": float64(2147483648), "extra": map[string]any{"kind": "tensorrt-out-of-memory", "stack": "tensorrt"}}},
		{"tensorrt scratch space", "[TRT] [E] IBuilder::buildSerializedNetwork: Error Code 4: Internal Error (Internal error: plugin node model/layers/0/attention/PLUGIN_V2_GPTAttention_0 requires 68719476736 bytes of scratch space, but only 25769803776 is available.)\n",
			map[string]any{"phase": "load", "tried_to_allocate_bytes": float64(68719476736), "total_capacity_bytes": nil, "extra": map[string]any{"kind": "tensorrt-out-of-memory", "stack": "tensorrt-llm"}}},
		{"spark rapids pool", "21/03/02 10:00:01 WARN GpuDeviceManager: Initial RMM allocation(20480.0 MB) is larger than free memory(1024.0 MB)\n21/03/02 10:00:01 INFO GpuDeviceManager: Initializing RMM ARENA 20480.0 MB on gpuId 1\n21/03/02 10:00:02 ERROR GpuDeviceManager: Could not initialize RMM\n",
			map[string]any{"framework": "other", "device": "cuda:1", "tried_to_allocate_bytes": float64(20 << 30), "free_bytes": float64(1 << 30), "extra": map[string]any{"kind": "rmm-out-of-memory"}}},
		{"cudf allocation", "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory\n",
			map[string]any{"framework": "other", "extra": map[string]any{"kind": "rmm-out-of-memory"}}},
		{"sglang negative profile", "[2025-01-02 10:00:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=3.10 GB, mem usage=70.20 GB.\n[2025-01-02 10:00:01 TP0] max_total_tokens=65536 is larger than the profiled value -12000. Use the profiled value instead.\n",
			map[string]any{"phase": "load", "extra": map[string]any{"stack": "sglang"}}},
		{"sglang request slots", "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. self.req_to_token_pool.available_size()=0, num_reqs=4,\n",
			map[string]any{"framework": "other", "extra": map[string]any{"stack": "sglang", "kind": "sglang-request-slots"}}},
		{"a console that re-flows the message", "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 5.80 GiB of which 17.12 MiB is free. Including   \n                    non-PyTorch memory, this process has 5.08 GiB memory in use. Of the allocated memory 75.45 MiB is allocated by PyTorch, and 6.55 MiB is reserved by   \n                    PyTorch but unallocated.\n",
			map[string]any{"process_in_use_bytes": float64(5454608466), "reserved_unallocated_bytes": float64(6868173)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asJSONMap(t, Parse(tt.text))
			if got["detected"] != true {
				t.Fatalf("not detected: %v", got)
			}
			for k, want := range tt.want {
				if wantExtra, ok := want.(map[string]any); ok {
					gotExtra, _ := got[k].(map[string]any)
					for ek, ev := range wantExtra {
						if !jsonEqual(gotExtra[ek], ev) {
							t.Errorf("%s.%s: got %v, want %v", k, ek, gotExtra[ek], ev)
						}
					}
					continue
				}
				if !jsonEqual(got[k], want) {
					t.Errorf("%s: got %v, want %v", k, got[k], want)
				}
			}
		})
	}
}

// TestDriverRulesNotOOM checks the look-alikes these rules sit beside.
func TestDriverRulesNotOOM(t *testing.T) {
	for name, text := range map[string]string{
		"ggml pinned host memory falls back": "ggml_cuda_host_malloc: failed to allocate 349659.17 MiB of pinned memory: out of memory\nllm_load_tensors: offloaded 5/62 layers to GPU\n",
		"node heap limit":                    "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n",
		"tpu vmem":                           "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem. Used 32.42M of 16.00M vmem.\n",
		"tensorrt skips a tactic":            "[TRT] [W] Requested amount of GPU memory (1073741824 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n[TRT] [W] Skipping tactic 3 due to insufficient memory on requested size of 1073741824 detected for tactic 0x0000000000000004.\n",
		"cumem invalid argument":             "CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:119\n",
		"a positive kv budget":               "INFO 12-23 23:34:23 [gpu_worker.py:298] Available KV cache memory: 12.77 GiB\n",
		"cuda driver ok":                     "Call to cuMemAlloc results in CUDA_SUCCESS\n",
		"curesult 1 is an invalid value":     "[torch_memory_saver.cpp] CUresult error  result=1 file=csrc/torch_memory_saver.cpp func=cu_mem_map line=120\n",
		"sglang caps at its profile":         "[2025-01-02 10:00:01 TP0] max_total_tokens=131072 is larger than the profiled value 89012. Use the profiled value instead.\n",
		"rmm pool starts":                    "21/03/02 10:00:01 INFO GpuDeviceManager: Initializing RMM ARENA 20480.0 MB on gpuId 0\n",
		"tensorrt warns of a request":        "[12/01/2024-10:00:00] [TRT] [W] Requested amount of GPU memory (1024 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n",
	} {
		t.Run(name, func(t *testing.T) {
			if r := Parse(text); r.Detected {
				t.Errorf("detected an OOM (%s, %v) in %q", r.Format, r.Extra, text)
			}
		})
	}
}
