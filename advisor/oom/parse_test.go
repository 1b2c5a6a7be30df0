package oom

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNotOOM checks texts that look like trouble but are not an OOM.
func TestNotOOM(t *testing.T) {
	tests := []struct{ name, text string }{
		{"device-side assert", "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"},
		{"index assert", "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"},
		{"nccl timeout", "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800011 milliseconds before timing out.\n"},
		{"nccl error", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"},
		{"nvidia-smi table", `+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   34C    P0             61W /  400W |   81037MiB /  81920MiB |      0%      Default |
+-----------------------------------------------------------------------------------------+
|    0   N/A  N/A     12345      C   python                                      81024MiB |
`},
		{"memory_summary", `|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |  10240 MiB |  12288 MiB |  40960 MiB |  30720 MiB |
`},
		{"chatter about an error", "I keep getting an error about out of memory with bs=64, any idea?"},
		{"chatter naming the exception", "anyone seen torch.OutOfMemoryError with FSDP? we get it on 8xA100"},
		{"chatter about memory", "does anyone know how much memory llama-3-8b needs for LoRA? I have a 24GB card and want to avoid running out"},
		{"chatter about expandable_segments", "tip: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, it helped with fragmentation for us"},
		{"memory stats log", "step 100 | loss 2.31 | max_memory_allocated 31.2 GiB | max_memory_reserved 33.0 GiB | lr 2e-5\n"},
		{"tqdm", "Epoch 1:  45%|████▌     | 450/1000 [02:13<02:43,  3.37it/s, loss=0.412, v_num=3]\r"},
		{"real-esrgan hint only", "Tile 1/4\nIf you encounter CUDA out of memory, try to set --tile with a smaller number.\n"},
		{"warning about memory", "UserWarning: To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach()\nWARNING: the memory usage is high (92%)\n"},
		{"killed without oom", "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\nKeyboardInterrupt\n"},
		{"shape error", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\n"},
		{"empty", ""},
		{"binary garbage", "\x00\x01\x02\xff\xfe\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"},
		{"invalid utf8", strings.Repeat("\xc3\x28\xa0\xa1", 1000)},
		{"cuda init", "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.text)
			if r.Detected {
				t.Errorf("detected an OOM (%s/%s) in %q", r.Format, r.Framework, tt.text)
			}
			if r.OtherProcesses == nil || r.Extra == nil {
				t.Errorf("nil slice or map would marshal as null: %+v", r)
			}
		})
	}
}

// TestVariants covers wordings and wrappers the public corpus lacks, from
// the corpus README's list of traps and the formats' source.
func TestVariants(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]any
	}{
		{
			name: "wrapped capacity and rank prefix",
			text: "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capac\nity of 79.15 GiB of which 1.23 GiB is free. Process 77 has 3.00 GiB memory in use. Including non-PyTorch memory, this process has 75.91 GiB memory in use. Of the allocated memory 72.00 GiB is allocated by PyTorch, with 512.00 MiB allocated in private pools (e.g., CUDA Graphs), and 3.40 GiB is reserved by PyTorch but unallocated.\n",
			want: map[string]any{"format": "pytorch-new", "device": "cuda:0", "total_capacity_bytes": 84986665370.0, "free_bytes": 1320702444.0, "other_processes": []any{3221225472.0}, "process_in_use_bytes": 81507741860.0},
		},
		{
			name: "lost newlines",
			text: "torch.AcceleratorError: CUDA error: out of memorySearch for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/ for more information.",
			want: map[string]any{"format": "other", "framework": "pytorch", "device": nil},
		},
		{
			name: "vllm v1 engine core prefix",
			text: "(EngineCore_DP0 pid=412) ERROR 08-12 10:01:02 [core.py:708] ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (8.50 GiB). Based on the available memory, the estimated maximum model length is 69632. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
			want: map[string]any{"format": "vllm-kv", "framework": "vllm", "phase": "load"},
		},
		{
			name: "jupyter json with literal ansi",
			text: `{"name": "OutOfMemoryError", "message": "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free.", "stack": "\u001b[0;31mOutOfMemoryError\u001b[0m Traceback"}`,
			want: map[string]any{"format": "pytorch-new", "tried_to_allocate_bytes": 20971520.0, "free_bytes": 3208643.0},
		},
		{
			name: "dataloader killed",
			text: "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed. \n",
			want: map[string]any{"device": "cpu", "format": "other"},
		},
		{
			name: "lightning forward inside optimizer closure",
			text: `Traceback (most recent call last):
  File "/x/lightning/pytorch/core/module.py", line 1306, in optimizer_step
    optimizer.step(closure=optimizer_closure)
  File "/x/torch/optim/optimizer.py", line 385, in step
    loss = closure()
  File "/x/lightning/pytorch/loops/optimization/automatic.py", line 146, in closure
    step_output = self._step_fn()
  File "/x/lightning/pytorch/loops/optimization/automatic.py", line 320, in _training_step
    training_step_output = call._call_strategy_hook(trainer, "training_step", *kwargs.values())
  File "/x/torch/nn/modules/module.py", line 1553, in _call_impl
    return forward_call(*args, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 512.00 MiB is free.
`,
			want: map[string]any{"phase": "forward"},
		},
		{
			name: "forward inside evaluate",
			text: "  File \"train.py\", line 10, in evaluate\n    out = model(x)\n  File \"/x/torch/nn/modules/module.py\", line 1553, in _call_impl\n    return forward_call(*args, **kwargs)\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 10.62 GiB already allocated; 832.00 KiB free; 10.66 GiB reserved in total by PyTorch)\n",
			want: map[string]any{"phase": "eval", "format": "pytorch-old", "free_bytes": 851968.0},
		},
		{
			name: "tpu allocate not possible",
			text: "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.50G. That was not possible. There are 1.02G free.\n",
			want: map[string]any{"format": "xla", "device": "tpu", "tried_to_allocate_bytes": 1610612736.0, "free_bytes": 1095216660.0},
		},
		{
			name: "tf eager op",
			text: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[32,512,512,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Conv2D]\n",
			want: map[string]any{"format": "tf-bfc", "phase": "forward", "device": "cuda:0"},
		},
		{
			name: "ipython 8 traceback",
			text: `---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
Cell In[12], line 5
      3 for batch in loader:
      4     optimizer.zero_grad()
----> 5     loss = model(**batch).loss
      6     loss.backward()
      7     optimizer.step()

File ~/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1518, in Module._wrapped_call_impl(self, *args, **kwargs)
   1516     return self._compiled_call_impl(*args, **kwargs)  # type: ignore[misc]
   1517 else:
-> 1518     return self._call_impl(*args, **kwargs)

OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 512.00 MiB is free.
`,
			want: map[string]any{"phase": "forward", "format": "pytorch-new"},
		},
		{
			name: "lost newlines with frames",
			text: `Traceback (most recent call last):  File "train.py", line 40, in <module>    loss.backward()  File "/x/torch/_tensor.py", line 581, in backward    torch.autograd.backward(torch.AcceleratorError: CUDA error: out of memorySearch for ` + "`cudaErrorMemoryAllocation'",
			want: map[string]any{"phase": "backward", "format": "other"},
		},
		{
			name: "loguru prefix",
			text: "ERROR | 2024-05-01 12:00:00 | autotrain.trainers.common:wrapper:120 - torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 93.06 MiB is free. Process 1 has 14.65 GiB memory in use. Of the allocated memory 13.99 GiB is allocated by PyTorch, and 524.78 MiB is reserved by PyTorch but unallocated.\n",
			want: map[string]any{"format": "pytorch-new", "other_processes": []any{15730317722.0}},
		},
		{
			name: "xla with bfc warning names the gpu",
			text: "2024-01-01 00:00:00.000000: W external/xla/xla/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate 12.51GiB (rounded to 13430882816)requested by op \njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 13430882816 bytes.\n",
			want: map[string]any{"format": "xla", "framework": "jax", "device": "cuda:0", "tried_to_allocate_bytes": 13430882816.0},
		},
		{
			name: "unknown wording falls back",
			text: "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n",
			want: map[string]any{"format": "other", "framework": "other", "tried_to_allocate_bytes": 4294967296.0},
		},
		{
			name: "vllm worker prefix",
			text: "(VllmWorker rank=0 pid=2211) ERROR 05-01 10:00:00 [multiproc_executor.py:470] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 300.00 MiB is free.\n(VllmWorker rank=0 pid=2211) ERROR 05-01 10:00:00 [multiproc_executor.py:470]   File \"/usr/local/lib/python3.12/dist-packages/vllm/worker/gpu_worker.py\", line 200, in determine_available_memory\n",
			want: map[string]any{"format": "pytorch-new", "framework": "vllm", "device": "cuda:0"},
		},
		{
			name: "message cut after the request",
			text: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU ",
			want: map[string]any{"format": "pytorch-new", "tried_to_allocate_bytes": 67108864.0, "device": nil},
		},
		{
			name: "slack link in hint",
			text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 1.00 MiB is free. See documentation for Memory Management  (<https://pytorch.org/docs/stable/notes/cuda.html#environment-variables|https://pytorch.org/docs/stable/notes/cuda.html#environment-variables>)",
			want: map[string]any{"format": "pytorch-new", "tried_to_allocate_bytes": 2097152.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asJSONMap(t, Parse(tt.text))
			if got["detected"] != true {
				t.Fatalf("not detected: %q", tt.text)
			}
			for k, want := range tt.want {
				if g := got[k]; !jsonEqual(g, want) {
					t.Errorf("%s: got %v, want %v", k, g, want)
				}
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		num, unit string
		want      int64
	}{
		{"2.26", "GiB", 2426656522},
		{"1024.00", "MiB", 1073741824},
		{"13535.27", "GiB", 14533385498132},
		{"448.00", "KiB", 458752},
		{"0", "bytes", 0},
		{"2.12", "G", 2276332667},
		{"768.00", "MB", 805306368},
		{"3206250496", "B", 3206250496},
	}
	for _, tt := range tests {
		if got, ok := parseSize(tt.num, tt.unit); !ok || got != tt.want {
			t.Errorf("parseSize(%q, %q) = %d, %v; want %d", tt.num, tt.unit, got, ok, tt.want)
		}
	}
	for _, bad := range [][2]string{{"1", "XB"}, {"99999999999999999999", "GiB"}, {"1e3", "GiB"}} {
		if _, ok := parseSize(bad[0], bad[1]); ok {
			t.Errorf("parseSize(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

// TestOccurrencesAndSecondError checks that repeats are counted and a
// different later OOM lands in extra.
func TestOccurrencesAndSecondError(t *testing.T) {
	one := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.\n"
	two := strings.Replace(one, "Tried to allocate 2.00 GiB", "Tried to allocate 4.00 GiB", 1)
	r := Parse(one + "\n" + one + "\n" + two)
	if r.Occurrences != 3 {
		t.Errorf("occurrences = %d, want 3", r.Occurrences)
	}
	if *r.TriedToAllocateBytes != 2<<30 {
		t.Errorf("fields not from the first OOM: tried %d", *r.TriedToAllocateBytes)
	}
	second, ok := r.Extra["second_error"].(map[string]any)
	if !ok || second["tried"] != int64(4<<30) {
		t.Errorf("second_error = %v", r.Extra["second_error"])
	}
}

// TestNativeVariants covers wordings of the non-Python families that the
// corpus holds no paste of.
func TestNativeVariants(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]any
	}{
		{"ggml metal buffer", "ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size = 4096.00 MiB\nllama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n",
			map[string]any{"device": "mps", "tried_to_allocate_bytes": float64(4 << 30), "phase": "load", "framework": "other"}},
		{"ggml sycl", "ggml_backend_sycl_buffer_type_alloc_buffer: can't allocate 4294967296 Bytes of memory on device\nalloc_tensor_range: failed to allocate SYCL0 buffer of size 4294967296\n",
			map[string]any{"device": "xpu:0", "tried_to_allocate_bytes": float64(4 << 30)}},
		{"macOS kill", "python train.py\nKilled: 9\n", map[string]any{"device": "cpu", "format": "other"}},
		{"zsh kill", "zsh: killed     python train.py\n", map[string]any{"device": "cpu"}},
		{"docker 137", "vllm-1 exited with code 137\n", map[string]any{"device": "cpu"}},
		{"cgroup oom killer", "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1kB, anon-rss:2048kB, file-rss:0kB", map[string]any{"device": "cpu"}},
		{"bad_alloc", "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)\n", map[string]any{"device": "cpu"}},
		{"tgi json", `{"error":"Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 22.05 GiB of which 1.00 GiB is free.","error_type":"generation"}`,
			map[string]any{"format": "pytorch-new", "phase": "generate", "device": "cuda:0"}},
		{"escaped json body", `{"detail": "Traceback (most recent call last):\n  File \"/app/serve.py\", line 9, in infer\n    out = model.generate(**inputs)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 22.05 GiB of which 512.00 MiB is free.\n"}`,
			map[string]any{"format": "pytorch-new", "phase": "generate", "tried_to_allocate_bytes": float64(1 << 30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := asJSONMap(t, Parse(tt.text))
			if got["detected"] != true {
				t.Fatalf("not detected: %v", got)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: got %v, want %v", k, got[k], v)
				}
			}
		})
	}
}
