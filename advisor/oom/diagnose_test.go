package oom

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/internal/oomcorpus"
)

func fixIDs(d Diagnosis) []string {
	var ids []string
	for _, s := range d.Stages {
		for _, f := range s.Fixes {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

func causeIDs(d Diagnosis) []string {
	var ids []string
	for _, c := range d.Causes {
		ids = append(ids, c.ID)
	}
	return ids
}

const newForm = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. %sOf the allocated memory %s is allocated by PyTorch, and %s is reserved by PyTorch but unallocated."

func msg(tried, total, free, procs, alloc, unalloc string) string {
	return fmt.Sprintf(newForm, tried, total, free, procs, alloc, unalloc)
}

func TestDiagnose(t *testing.T) {
	tests := []struct {
		name       string
		paste      string
		firstCause string
		hasFixes   []string
		noFixes    []string
	}{
		{"fragmentation", msg("10.08 GiB", "22.20 GiB", "687.12 MiB", "", "9.71 GiB", "10.61 GiB"),
			CauseFragmentation, []string{fix.ExpandableSegments}, nil},
		// 1.30 GiB cached + 1.02 GiB free hold the 1.96 GiB request together,
		// neither alone: expandable segments first, then the GPU-full fixes.
		{"fragmentation at the edge", msg("1.96 GiB", "23.65 GiB", "1.02 GiB", "", "20.85 GiB", "1.30 GiB"),
			CauseFragmentation, []string{fix.ExpandableSegments, fix.GradAccum, fix.GradCheckpointing}, nil},
		// 1.30 GiB cached + 0.10 GiB free do not hold 1.96 GiB: no fragmentation.
		{"full, cache too small to matter", msg("1.96 GiB", "23.65 GiB", "100.00 MiB", "", "22.85 GiB", "1.30 GiB"),
			CauseGPUFull, []string{fix.GradAccum}, []string{fix.ExpandableSegments}},
		{"request over total", msg("27.12 GiB", "11.99 GiB", "0 bytes", "", "1.00 GiB", "0 bytes"),
			CauseRequestOverTotal, []string{fix.GradAccum, fix.BiggerGPU}, nil},
		{"absurd request", msg("13535.27 GiB", "79.14 GiB", "61.76 GiB", "", "14.34 GiB", "2.53 GiB"),
			CauseShapeBug, []string{fix.CheckShapes}, []string{fix.BiggerGPU}},
		{"other processes", msg("30.00 MiB", "79.32 GiB", "6.88 MiB", "Process 1 has 9.89 GiB memory in use. Process 2 has 35.03 GiB memory in use. Including non-PyTorch memory, this process has 10.58 GiB memory in use. ", "9.56 GiB", "534.22 MiB"),
			CauseOtherProcesses, []string{fix.KillOtherProcess}, nil},
		{"own process in a container", msg("3.39 GiB", "79.32 GiB", "2.40 GiB", "Process 105400 has 76.92 GiB memory in use. ", "73.28 GiB", "1.59 GiB"),
			CauseGPUFull, []string{fix.GradAccum}, []string{fix.KillOtherProcess}},
		{"sysmem fallback", msg("30.00 MiB", "11.00 GiB", "0 bytes", "", "16.98 GiB", "696.75 MiB"),
			CauseSharedMemory, []string{fix.SysmemFallback}, nil},
		{"allowed cap", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 255.98 GiB of which 244.65 GiB is free. 1.05 GiB allowed; Of the allocated memory 1017.01 MiB is allocated by PyTorch, and 54.99 MiB is reserved by PyTorch but unallocated.",
			CauseAllocatorCap, []string{fix.RaiseMemoryFraction}, nil},
		{"optimizer step", "  File \"/x/torch/optim/adamw.py\", line 440, in _single_tensor_adamw\n    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)\n" + msg("2.00 GiB", "15.78 GiB", "373.44 MiB", "", "14.10 GiB", "100.00 MiB"),
			CauseOptimizer, []string{fix.Optim8bit, fix.Zero2}, nil},
		// Nothing is left for the cache: an 8-bit cache cannot help, nor a
		// shorter context on V1; on V0 (its "# GPU blocks" line) it can.
		{"vllm no cache memory", "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
			CauseVLLM, []string{fix.GPUMemoryUtilization, fix.TensorParallel, fix.NF4Weights}, []string{fix.ExpandableSegments, fix.FP8KVCache, fix.MaxModelLen}},
		{"vllm v0 no cache memory", "INFO 02-26 10:00:00 worker.py:266] # GPU blocks: 0, # CPU blocks: 2048\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
			CauseVLLM, []string{fix.GPUMemoryUtilization, fix.MaxModelLen}, []string{fix.FP8KVCache}},
		{"tf", "ResourceExhaustedError: OOM when allocating tensor with shape[256,112,112,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[Node: InceptionV1/Conv2d_1a_7x7/Conv2D = Conv2D[T=DT_FLOAT]()]]",
			CauseTFPrealloc, []string{fix.TFMemoryGrowth, fix.MixedPrecision, fix.GradAccum}, []string{fix.InferenceMode, fix.FlashAttention}},
		{"jax", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
			CauseJAXPrealloc, []string{fix.JAXMemFraction}, []string{fix.TFMemoryGrowth}},
		{"host ram", "RuntimeError: [enforce fail at alloc_cpu.cpp:73] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 116813856768 bytes. Error code 12 (Cannot allocate memory)",
			CauseHostRAM, []string{fix.DataLoaderWorkers}, []string{fix.ExpandableSegments}},
		{"tf warning only", "2020-09-24 21:35:23.363348: W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
			CauseNotAFailure, nil, nil},
		{"raw cuda error", "RuntimeError: CUDA error: out of memory", CauseNoNumbers, []string{fix.CUDALaunchBlocking}, nil},
		{"sglang pool", "[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=2.10 GB, mem usage=20.45 GB.\n  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line 215, in init_memory_pool\n    raise RuntimeError(\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
			CauseSGLang, []string{fix.GPUMemoryUtilization, fix.MaxModelLen}, []string{fix.GradAccum}},
		{"vllm startup check", "ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
			CauseVLLMStartup, []string{fix.KillOtherProcess, fix.LowerGPUMemoryUtil}, []string{fix.GPUMemoryUtilization, fix.MaxModelLen}},
		{"oom killer at load", "Loading checkpoint shards:  50%|█████     | 1/2 [00:10<00:10, 10.00s/it]Killed", CauseHostRAM, []string{fix.MmapWeights}, []string{fix.GradAccum}},
		{"shm", "RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
			CauseSharedMemShm, []string{fix.SharedMemorySize}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.paste)
			if !r.Detected {
				t.Fatalf("not detected")
			}
			d := Diagnose(r)
			if len(d.Causes) == 0 || d.Causes[0].ID != tt.firstCause {
				t.Errorf("causes %v, want %s first", causeIDs(d), tt.firstCause)
			}
			ids := fixIDs(d)
			for _, f := range tt.hasFixes {
				if !slices.Contains(ids, f) {
					t.Errorf("fixes %v lack %s", ids, f)
				}
			}
			for _, f := range tt.noFixes {
				if slices.Contains(ids, f) {
					t.Errorf("fixes %v include %s", ids, f)
				}
			}
			checkStageOrder(t, d)
			for _, c := range d.Causes {
				if c.Evidence == "" || c.Title == "" {
					t.Errorf("cause without evidence: %+v", c)
				}
			}
		})
	}
}

// TestDiagnoseIdiom checks that snippets follow the stack in the paste.
func TestDiagnoseIdiom(t *testing.T) {
	hf := "  File \"/opt/site-packages/transformers/trainer.py\", line 3782, in training_step\n    self.accelerator.backward(loss, **kwargs)\n" +
		msg("2.00 GiB", "79.15 GiB", "1.23 GiB", "", "75.10 GiB", "1.35 GiB")
	r := Parse(hf)
	if r.Stack != fix.FrameworkHF || r.Phase != PhaseBackward {
		t.Fatalf("stack %q phase %q", r.Stack, r.Phase)
	}
	for _, s := range Diagnose(r).Stages {
		for _, f := range s.Fixes {
			if f.ID == fix.GradAccum && !strings.Contains(f.Snippet, "gradient_accumulation_steps") {
				t.Errorf("micro-batch snippet is not the HF Trainer one: %q", f.Snippet)
			}
		}
	}
}

// TestDiagnoseLoadKnownModel checks that a load OOM naming a catalog model
// states the estimated weights and asks for a GPU that holds them.
func TestDiagnoseLoadKnownModel(t *testing.T) {
	paste := "  File \"serve.py\", line 12, in <module>\n    model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-2-7b-hf\", torch_dtype=torch.bfloat16).to(\"cuda\")\n" +
		msg("172.00 MiB", "11.76 GiB", "85.12 MiB", "", "11.43 GiB", "0 bytes")
	r := Parse(paste)
	if r.Phase != PhaseLoad || r.ModelHint == nil {
		t.Fatalf("phase %q model hint %v", r.Phase, r.ModelHint)
	}
	d := Diagnose(r)
	var load *Cause
	for i := range d.Causes {
		if d.Causes[i].ID == CauseLoad {
			load = &d.Causes[i]
		}
	}
	if load == nil || !strings.Contains(load.Evidence, "weights alone are about") {
		t.Fatalf("causes %+v lack the weights estimate", d.Causes)
	}
	if d.NeedBytes < 12<<30 {
		t.Errorf("NeedBytes = %d, want at least the ~12.6 GiB of Llama-2-7B in bf16", d.NeedBytes)
	}
}

func TestDiagnoseNotDetected(t *testing.T) {
	d := Diagnose(Parse("hello"))
	if len(d.Causes) != 0 || len(d.Stages) != 0 {
		t.Errorf("diagnosis of nothing: %+v", d)
	}
	if d.Causes == nil || d.Stages == nil {
		t.Errorf("nil slices would marshal as null, not []: %+v", d)
	}
}

// TestDiagnosisFixesAreInTheCatalogue runs the diagnosis over every real
// paste and checks that each fix it proposes is the catalogue's, with the
// catalogue's title and level: `oom --json` and `vram --json` name one fix
// the same.
func TestDiagnosisFixesAreInTheCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, set := range []string{oomcorpus.Public, oomcorpus.Extra, oomcorpus.Blind, oomcorpus.Fresh2026} {
		for _, c := range oomcorpus.MustLoad(set) {
			for _, s := range Diagnose(Parse(c.Text)).Stages {
				for _, f := range s.Fixes {
					d, ok := fix.Lookup(f.ID)
					if !ok {
						t.Errorf("%s/%s: fix %q is not in the catalogue", set, c.File, f.ID)
						continue
					}
					if f.Title != d.Title || s.Level != d.Level {
						t.Errorf("%s/%s: fix %s titled %q at level %d, the catalogue says %q at %d", set, c.File, f.ID, f.Title, s.Level, d.Title, d.Level)
					}
					seen[f.ID] = true
				}
			}
		}
	}
	if len(seen) < 20 {
		t.Errorf("the corpus exercises only %d fixes: %v", len(seen), seen)
	}
}

// checkStageOrder asserts the stages' order: the lead stage for where the
// job failed, if any, then one stage per level, easiest first.
func checkStageOrder(t *testing.T, d Diagnosis) {
	t.Helper()
	lead := len(d.Stages) > 0 && strings.HasPrefix(d.Stages[0].Title, "First, for where it failed")
	for i, s := range d.Stages {
		after := i > 1 || i == 1 && !lead
		if s.Stage != i+1 || after && s.Level <= d.Stages[i-1].Level || len(s.Fixes) == 0 {
			t.Errorf("stage %d out of order or empty: %+v", i, s)
		}
	}
}
