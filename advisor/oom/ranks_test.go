package oom

import (
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
)

// TestRankLeads covers the readings of the ranks and libraries a paste
// shows (ranks.go; the libraries' in lead.go), each on a paste written for
// its rule.
func TestRankLeads(t *testing.T) {
	torchOOM := func(gpu, alloc string) string {
		return "RuntimeError: CUDA out of memory. Tried to allocate 576.00 MiB (GPU " + gpu + "; 15.98 GiB total capacity; " + alloc + " already allocated; 0 bytes free; 15.84 GiB reserved in total by PyTorch)\n"
	}
	frames := "Traceback (most recent call last):\n  File \"/w/train.py\", line 80, in <module>\n    loss.backward()\n"
	loadFrames := "  File \"/w/finetune.py\", line 72, in <module>\n    model = AutoModelForCausalLM.from_pretrained(\n"
	held := "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB (GPU 0; 39.45 GiB total capacity; 4.00 GiB already allocated; 95.25 MiB free; 4.04 GiB reserved in total by PyTorch)\n"
	tests := []struct {
		name, text, first string
	}{
		{"every rank full and nothing sharded", frames + torchOOM("1", "15.83 GiB") + torchOOM("0", "15.83 GiB"), fix.Zero2},
		{"one rank full is a batch", frames + torchOOM("0", "15.83 GiB"), fix.GradAccum},
		{"ranks with uneven kv budgets",
			"(Worker_TP1 pid=11) INFO 12-10 03:24:48 [gpu_worker.py:298] Available KV cache memory: -2.10 GiB\n(Worker_TP0 pid=10) INFO 12-10 03:24:48 [gpu_worker.py:298] Available KV cache memory: 11.40 GiB\n(EngineCore_DP0 pid=9) ERROR 12-10 03:24:48 [core.py:708] EngineCore failed to start.\n",
			fix.KillOtherProcess},
		{"a negative budget on every rank", "(Worker_TP0 pid=10) INFO 12-10 03:24:48 [gpu_worker.py:298] Available KV cache memory: -2.10 GiB\n", fix.GPUMemoryUtilization},
		{"memory saver", "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103\n", fix.LowerGPUMemoryUtil},
		{"rmm pool above free", "21/03/02 10:00:01 WARN GpuDeviceManager: Initial RMM allocation(20480.0 MB) is larger than free memory(1024.0 MB)\n21/03/02 10:00:02 ERROR GpuDeviceManager: Could not initialize RMM\n", fix.KillOtherProcess},
		{"rmm pool full", "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory\n", fix.SmallerBatch},
		{"sglang request slots", "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. self.req_to_token_pool.available_size()=0, num_reqs=4,\n", fix.SmallerBatch},
		{"ranks loading onto gpu 0", "    w_4bit, quant_state = bnb.functional.quantize_4bit(w)\n" + loadFrames + "Traceback (most recent call last):\n" + loadFrames + held, fix.OneProcessPerGPU},
		{"one process beside another", "Traceback (most recent call last):\n" + loadFrames + held, fix.KillOtherProcess},
		{"a chained exception is one process", "Traceback (most recent call last):\n" + loadFrames + "ValueError: x\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n" + loadFrames + held, fix.KillOtherProcess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.text)
			if !r.Detected {
				t.Fatal("not detected")
			}
			d := Diagnose(r)
			checkStageOrder(t, d)
			if got := firstFixID(d); got != tt.first {
				t.Errorf("first fix %s (fixes %v, causes %v), want %s", got, fixIDs(d), d.Causes, tt.first)
			}
		})
	}
}
