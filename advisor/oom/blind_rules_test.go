package oom

import (
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
)

// TestBlindSetRules covers the rules the blind set's first run called for
// (internal/oomcorpus/blind/README.md): each case is a minimal paste of the
// wording the rule reads, so that the rule, not one paste, is what holds.
func TestBlindSetRules(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]any
	}{
		// A stripped worker prefix still names the stack.
		{"vllm v0 worker prefix names vllm", "(VllmWorkerProcess pid=4242) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 2 has a total capacity of 14.62 GiB of which 3.31 MiB is free.\n",
			map[string]any{"framework": "vllm", "format": "pytorch-new", "device": "cuda:2"}},
		{"vllm v1 engine core prefix names vllm", "(EngineCore_DP0 pid=77) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 22.05 GiB of which 100.00 MiB is free.\n",
			map[string]any{"framework": "vllm"}},
		{"a ray worker prefix does not", "(RayWorkerWrapper pid=1054, ip=10.0.0.2) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 22.05 GiB of which 100.00 MiB is free.\n",
			map[string]any{"framework": "pytorch"}},
		// TensorFlow's own output makes an XLA TPU report TensorFlow's.
		{"tf logger on a tpu hbm report", "ERROR:tensorflow:Error recorded from training_loop: From /job:worker/replica:0/task:0:\nCompilation failure: Ran out of memory in memory space hbm. Used 9.00G of 8.00G hbm. Exceeded hbm capacity by 1.00G.\n",
			map[string]any{"framework": "tensorflow", "format": "xla", "device": "tpu", "total_capacity_bytes": float64(8 << 30)}},
		{"tf job names on a tpu hbm report", "E1111 07:35:00.272763 140408571025152 error_handling.py:81] Closing session due to error From /job:worker/replica:0/task:0:\nCompilation failure: Ran out of memory in memory space hbm. Used 20.00G of 16.00G hbm. Exceeded hbm capacity by 4.00G.\n",
			map[string]any{"framework": "tensorflow"}},
		{"jax's vendored tensorflow path stays jax", "2022-10-15 18:07:41.780474: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:290] slow\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 9.08G of 7.48G hbm. Exceeded hbm capacity by 1.60G.\n",
			map[string]any{"framework": "jax"}},
		{"a host allocator under tensorflow's log", "INFO:tensorflow:Evaluation [3/10]\nterminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted\n",
			map[string]any{"framework": "tensorflow", "device": "cpu"}},
		{"a host allocator under jax's vendored tensorflow paths", "2022-10-15 18:07:41.780474: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:290] slow\nterminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
			map[string]any{"framework": "other", "device": "cpu"}},
		// Lua Torch7 prints the THC lines early PyTorch did.
		{"lua torch7 thc", "THCudaCheck FAIL file=/torch/extra/cutorch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory\n/torch/install/share/lua/5.1/cutorch/Tensor.lua:14: cuda runtime error (2) : out of memory at /torch/extra/cutorch/lib/THC/generic/THCStorage.cu:66\nstack traceback:\n\t[C]: in function 'resize'\n",
			map[string]any{"framework": "other", "extra": map[string]any{"kind": "thc-cuda-runtime-error-2"}}},
		{"pytorch thc stays pytorch", "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nRuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58\n",
			map[string]any{"framework": "pytorch"}},
		// torch 0.4 put no blank after the colon.
		{"cuda error without a blank", "RuntimeError: CUDA error:out of memory\n",
			map[string]any{"framework": "pytorch", "format": "other", "extra": map[string]any{"kind": "cuda-error-out-of-memory"}}},
		// CUDA's allocation error in a library's own wording.
		{"spconv's cuda error 2", "RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\ncuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.\n",
			map[string]any{"framework": "other", "extra": map[string]any{"kind": "cuda-error-out-of-memory"}}},
		{"cupy's cudaErrorMemoryAllocation", "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory\n",
			map[string]any{"extra": map[string]any{"kind": "cuda-error-out-of-memory"}}},
		// Rust's abort glued to a progress line that lost its line end.
		{"rust abort glued to a progress bar", " 42.0 MiB /  60.2 MiB ( 70 %)   8.0 MiB/s in  5s ETA:  2smemory allocation of 166442784 bytes failedsh: line 371: 18018 Aborted\n",
			map[string]any{"device": "cpu", "tried_to_allocate_bytes": float64(166442784), "extra": map[string]any{"kind": "rust-alloc-failed"}}},
		// An indented NumPy MemoryError is NumPy's, with its size.
		{"indented numpy memory error", "    MemoryError: Unable to allocate 201. GiB for an array with shape (2999, 2999, 2999) and data type int64\n",
			map[string]any{"tried_to_allocate_bytes": float64(201 << 30), "extra": map[string]any{"kind": "numpy-array-memory-error"}}},
		{"indented bare memory error stays python's", "    MemoryError\n",
			map[string]any{"extra": map[string]any{"kind": "python-memory-error"}}},
		// vLLM's V1 check reflowed onto several lines.
		{"vllm v1 check broken after a comma", "ValueError: To serve at least one request with the model's max seq len (1048576),\n22.5 GiB KV cache is needed, which is larger than the available KV cache memory (17.39 GiB).\nBased on the available memory, the estimated maximum model length is 810208.\n",
			map[string]any{"format": "vllm-kv", "phase": "load", "extra": map[string]any{"max_seq_len": 1048576, "kv_cache_needed_bytes": 24159191040, "kv_cache_available_bytes": 18672370319, "estimated_max_model_len": 810208}}},
		// Metal's failed command buffer with its reason on the next line,
		// short enough to stay a line of its own, or joined as a wrap.
		{"metal status 5 then out of memory", "ggml_metal_graph_compute: command buffer 6 failed with status 5\nout of memory\n",
			map[string]any{"device": "mps", "format": "other", "extra": map[string]any{"kind": "ggml-alloc-failed", "stack": "llama.cpp"}}},
		{"metal status 5 and error: out of memory", "ggml_metal_synchronize: error: command buffer 1 failed with status 5\nerror: out of memory\n",
			map[string]any{"device": "mps"}},
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

// TestBlindSetRulesNotOOM checks that the new rules do not read an OOM into
// what is not one.
func TestBlindSetRulesNotOOM(t *testing.T) {
	for name, text := range map[string]string{
		// Metal's status 5 is any error; this one is a device fault.
		"metal status 5 for another reason": "ggml_metal_graph_compute: command buffer 0 failed with status 5\nerror: Ignored (for causing prior/excessive GPU errors) (00000004:kIOAccelCommandBufferCallbackErrorSubmissionsIgnored)\n",
		"metal status 5 alone":              "ggml_metal_graph_compute: command buffer 0 failed with status 5\n",
		"cuda error 2 without memory":       "cuda failed with error 2 at kernel launch\n",
	} {
		t.Run(name, func(t *testing.T) {
			if r := Parse(text); r.Detected {
				t.Errorf("detected an OOM (%s, %v) in %q", r.Format, r.Extra, text)
			}
		})
	}
}

// TestBlindSetDiagnosis checks the diagnosis of the stacks the blind set's
// rules now name: TensorFlow on a TPU gets XLA's cause with Keras's knobs,
// not the GPU allocator's; a vLLM named only by its worker prefix gets
// vLLM's flags.
func TestBlindSetDiagnosis(t *testing.T) {
	tf := Parse("ERROR:tensorflow:Error recorded from training_loop: From /job:worker/replica:0/task:0:\nCompilation failure: Ran out of memory in memory space hbm. Used 12.34G of 8.00G hbm. Exceeded hbm capacity by 4.34G.\n")
	d := Diagnose(tf)
	if len(d.Causes) == 0 || d.Causes[0].ID != CauseJAXPrealloc {
		t.Errorf("TF on TPU: causes %v, want %s first", causeIDs(d), CauseJAXPrealloc)
	}
	ids := fixIDs(d)
	for _, no := range []string{fix.TFMemoryGrowth, fix.JAXMemFraction, fix.Zero3} {
		if slices.Contains(ids, no) {
			t.Errorf("TF on TPU: fixes %v include %s, which does not apply", ids, no)
		}
	}
	if tf.Stack != fix.FrameworkKeras {
		t.Errorf("TF on TPU: stack %q, want Keras snippets", tf.Stack)
	}

	v := Parse("(VllmWorkerProcess pid=4242) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 2 has a total capacity of 14.62 GiB of which 3.31 MiB is free.\n")
	if v.Stack != fix.FrameworkVLLM {
		t.Fatalf("vLLM worker: stack %q", v.Stack)
	}
	for _, s := range Diagnose(v).Stages {
		for _, f := range s.Fixes {
			if f.ID == fix.MaxModelLen && !strings.Contains(f.Snippet, "--max-model-len") {
				t.Errorf("vLLM worker: max-model-len snippet is not vLLM's flag: %q", f.Snippet)
			}
		}
	}
}
