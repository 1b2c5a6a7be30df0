package oom

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// oomPastes are the pastes of the golden tests, one per kind of diagnosis.
var goldenPastes = map[string]string{
	"pytorch-backward": "```\n" + `Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
  File "/opt/conda/lib/python3.11/site-packages/torch/_tensor.py", line 581, in backward
    torch.autograd.backward(
  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", line 825, in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
` + "```",
	"fragmentation": `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.08 GiB. GPU 0 has a total capacty of 22.20 GiB of which 687.12 MiB is free. Process 40666 has 21.53 GiB memory in use. Of the allocated memory 9.71 GiB is allocated by PyTorch, and 10.61 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.`,
	"vllm":          "vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
	"tf": `tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:

OOM when allocating tensor with shape[295,64,256,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
	 [[{{node batch_normalization_v2/cond/then/_0/FusedBatchNorm}}]]
`,
	"none": "RuntimeError: CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
}

func TestOOMGolden(t *testing.T) {
	for name, paste := range goldenPastes {
		t.Run(name, func(t *testing.T) {
			r := Diagnose(context.Background(), paste, Deps{}).Reply
			golden.Check(t, name+".txt", []byte(reply.Text(r)))
		})
	}
}

// pasteFiles are the pastes of testdata/pastes (SOURCES.md says where each
// comes from), one per reading the diagnosis makes of a whole paste.
var pasteFiles = []string{"leak", "vllm-startup", "llamacpp-12gb", "nccl", "oom-killer", "zero2", "cnn-eval",
	"trl-peft-lora", "deepspeed-init", "vllm-kv-instruct", "llamacpp-70b-q4", "rocm-lm-head", "mps-training", "trtllm-executor",
	"numba-cumemalloc", "vllm-cumem", "ddp-every-rank-full", "vllm-uneven-ranks", "sglang-request-slots", "ranks-on-gpu0", "trt-scratch", "rmm-spark-pool"}

func pasteFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pastes", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOOMPasteGolden pins the text and JSON replies to the pastes of
// testdata/pastes, with the offers of a fixed price book.
func TestOOMPasteGolden(t *testing.T) {
	for _, name := range pasteFiles {
		t.Run(name, func(t *testing.T) {
			a := Diagnose(context.Background(), pasteFixture(t, name), Deps{Offers: &fakeOffers{}})
			r := a.Reply
			golden.Check(t, name+".txt", []byte(reply.Text(r)))
			js, err := json.MarshalIndent(a.Result, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, name+".json", append(js, '\n'))
		})
	}
}

// TestOOMJSONShape checks the --json contract of docs/contracts.md §3: every
// report field at the top level with its JSON type, and the diagnosis.
func TestOOMJSONShape(t *testing.T) {
	b, err := json.Marshal(Diagnose(context.Background(), goldenPastes["fragmentation"], Deps{}).Result)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"detected", "framework", "format", "device", "tried_to_allocate_bytes", "total_capacity_bytes",
		"free_bytes", "allocated_by_framework_bytes", "reserved_by_framework_bytes", "reserved_unallocated_bytes",
		"process_in_use_bytes", "other_processes", "phase", "fragmentation_hint", "diagnosis"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q in %s", k, b)
		}
	}
	if m["reserved_by_framework_bytes"] != nil {
		t.Errorf("reserved_by_framework_bytes = %v, want null for the new format", m["reserved_by_framework_bytes"])
	}
	if procs, ok := m["other_processes"].([]any); !ok || len(procs) != 1 || procs[0] != float64(23117661471) {
		t.Errorf("other_processes = %v, want [23117661471] (bytes only, as the corpus index)", m["other_processes"])
	}
	diag, _ := m["diagnosis"].(map[string]any)
	causes, _ := diag["causes"].([]any)
	stages, _ := diag["stages"].([]any)
	if len(causes) == 0 || len(stages) == 0 {
		t.Fatalf("diagnosis has no causes or stages: %s", b)
	}
	if first, _ := causes[0].(map[string]any); first["id"] != "fragmentation" {
		t.Errorf("top cause = %v, want fragmentation (10.61 GiB reserved but unallocated)", first["id"])
	}
}

// oomFakeOffers returns fixed offers with enough memory and records the
// requirement it was asked for.
type fakeOffers struct {
	asked []pricing.Requirement
}

func (f *fakeOffers) FindOffers(_ context.Context, req pricing.Requirement) ([]pricing.Offer, []string) {
	f.asked = append(f.asked, req)
	all := []pricing.Offer{
		{Provider: "vast", InstanceType: "1x RTX 4090", GPU: "GeForce RTX 4090", GPUCount: 1, GPUMemoryBytes: 24 << 30, PricePerHourUSD: 0.35, PricePerGPUHourUSD: 0.35, Region: "us", AsOf: "2026-01-21", Source: "test"},
		{Provider: "lambda", InstanceType: "gpu_1x_a100", GPU: "A100 80GB", GPUCount: 1, GPUMemoryBytes: 80 << 30, PricePerHourUSD: 1.79, PricePerGPUHourUSD: 1.79, Region: "us-east-1", AsOf: "2026-01-21", Source: "test"},
	}
	var fit []pricing.Offer
	for _, o := range all {
		if o.GPUMemoryBytes >= req.MemoryPerGPUBytes {
			fit = append(fit, o)
		}
	}
	return fit, []string{"prices: test book"}
}

// TestOOMOffers checks that offers are asked for only when the diagnosis
// points at a bigger GPU, and then fit the need.
func TestOOMOffers(t *testing.T) {
	tests := []struct {
		name, paste string
		wantOffers  bool
	}{
		{"request over total", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 27.12 GiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 GiB is free. Of the allocated memory 1.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.", true},
		{"fragmentation only", goldenPastes["fragmentation"], false},
		{"no oom", goldenPastes["none"], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOffers{}
			a := Diagnose(context.Background(), tt.paste, Deps{Offers: f})
			r, res := a.Reply, a.Result
			if got := len(res.Offers) > 0; got != tt.wantOffers {
				t.Fatalf("offers = %v, want offers: %v", res.Offers, tt.wantOffers)
			}
			if !tt.wantOffers {
				return
			}
			if f.asked[0].MemoryPerGPUBytes <= 27<<30 {
				t.Errorf("asked for %d bytes per GPU, want more than the 27.12 GiB request", f.asked[0].MemoryPerGPUBytes)
			}
			if !slices.Contains(r.Context, "prices: test book") {
				t.Errorf("context %v lacks the offers' provenance", r.Context)
			}
		})
	}
}

// TestOOMNilOffers checks that a nil OfferFinder is fine.
func TestOOMNilOffers(t *testing.T) {
	a := Diagnose(context.Background(), "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 99.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 GiB is free.", Deps{})
	if a.Reply.Title == "" || a.Result.Offers != nil {
		t.Fatalf("reply %+v", a.Reply)
	}
}

// TestOOMAndVRAMNameFixesAlike is the acceptance of the one fix catalogue:
// an HF Trainer OOM in backward and the /vram plan for a workload that
// does not fit propose the same fixes under the same ids, and every id
// either side gives is a catalogue id.
func TestOOMAndVRAMNameFixesAlike(t *testing.T) {
	resultOf := Diagnose(context.Background(), "  File \"/opt/site-packages/transformers/trainer.py\", line 3782, in training_step\n    self.accelerator.backward(loss, **kwargs)\n"+
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.23 GiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but unallocated.", Deps{}).Result
	estimate, err := vram.Estimate(context.Background(), "7b lora bs=8 seq=4096 4090 framework=hf", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(stages []fix.Stage) map[string]fix.Fix {
		out := map[string]fix.Fix{}
		for _, s := range stages {
			for _, f := range s.Fixes {
				if _, ok := fix.Lookup(f.ID); !ok {
					t.Errorf("fix id %q is not in the catalogue", f.ID)
				}
				out[f.ID] = f
			}
		}
		return out
	}
	fromOOM, fromVRAM := ids(resultOf.Diagnosis.Stages), ids(estimate.Result.Stages)
	for _, id := range []string{fix.GradAccum, fix.GradCheckpointing} {
		o, inOOM := fromOOM[id]
		v, inVRAM := fromVRAM[id]
		if !inOOM || !inVRAM {
			t.Errorf("%s: in oom %v, in vram %v; want both (oom %v, vram %v)", id, inOOM, inVRAM, slices.Collect(maps.Keys(fromOOM)), slices.Collect(maps.Keys(fromVRAM)))
			continue
		}
		if o.Title != v.Title || o.Cost != v.Cost {
			t.Errorf("%s: oom says %q (%s), vram %q (%s)", id, o.Title, o.Cost, v.Title, v.Cost)
		}
	}
}

// TestOOMPasteAdvice asserts what each reading of a whole paste must give,
// whatever the wording of the reply.
func TestOOMPasteAdvice(t *testing.T) {
	fixesOf := func(res Result) map[string]fix.Fix {
		out := map[string]fix.Fix{}
		for _, s := range res.Diagnosis.Stages {
			for _, f := range s.Fixes {
				out[f.ID] = f
			}
		}
		return out
	}
	tests := []struct {
		paste      string
		firstCause string
		has, not   []string
		check      func(t *testing.T, res Result, fixes map[string]fix.Fix)
	}{
		{"leak", "memory-grows-across-steps", []string{fix.ItemForLoggedLosses, fix.MemorySnapshot, fix.FreeReferences}, []string{fix.InferenceMode}, nil},
		{"vllm-startup", "vllm-kv-cache", []string{fix.MaxModelLen, fix.BiggerGPU}, nil, func(t *testing.T, res Result, fixes map[string]fix.Fix) {
			// At most vLLM's estimate (37728) and within 20% of it.
			f := fixes[fix.MaxModelLen]
			if !strings.Contains(f.Snippet, "--max-model-len 32768") {
				t.Errorf("max-model-len snippet %q, want 32768 (<= 37728, >= 80%% of it)", f.Snippet)
			}
			// Never the class of GPU that just failed: vLLM had 24 GiB-class memory.
			if res.Diagnosis.NeedBytes < 30<<30 {
				t.Errorf("NeedBytes %d: a bigger GPU must hold the full 131072-token context", res.Diagnosis.NeedBytes)
			}
		}},
		{"llamacpp-12gb", "llama-cpp-buffers", []string{fix.LayerOffload, fix.MaxModelLen, fix.FP8KVCache, fix.NF4Weights}, []string{fix.ExpandableSegments, fix.GradAccum}, func(t *testing.T, res Result, fixes map[string]fix.Fix) {
			// A layer brings its weights and its KV cache (7.43 + 4 GiB over
			// 33 layers: 355 MiB); 11247 MiB free less 1 GiB of compute and
			// 512 MiB of margin hold 27 of them.
			if f := fixes[fix.LayerOffload]; !strings.Contains(f.Snippet, "-ngl 27") {
				t.Errorf("layer offload %q, want -ngl 27 (of 33 layers at 355 MiB with their KV cache, in 11247 MiB less compute and margin)", f.Snippet)
			}
			if f := fixes[fix.NF4Weights]; !strings.Contains(f.Snippet, "Q4_K_M.gguf") {
				t.Errorf("smaller quant %q", f.Snippet)
			}
			if res.Diagnosis.NeedBytes <= 11247<<20 {
				t.Errorf("NeedBytes %d is not more than the 11247 MiB that failed", res.Diagnosis.NeedBytes)
			}
		}},
		{"nccl", "nccl-buffers", []string{fix.NCCLBuffers}, []string{fix.BiggerGPU}, nil},
		{"oom-killer", "host-ram", []string{fix.MoreHostRAM}, []string{fix.GradAccum, fix.ExpandableSegments, fix.BiggerGPU}, nil},
		{"zero2", "activations-in-backward", []string{fix.Zero3, fix.GradCheckpointing}, []string{fix.Zero2, fix.ZeroOffload, fix.ParamOffload}, func(t *testing.T, res Result, fixes map[string]fix.Fix) {
			// The 13B ZeRO-2 job as read (batch 4 × 4096, no checkpointing)
			// estimates about three times the 80 GiB it held in backward:
			// the paste's numbers win and no fix carries the estimate's
			// savings (docs/oom-diagnosis.md §7).
			m := res.Diagnosis.Measured
			if m == nil || m.Trusted != "measurement" || res.Diagnosis.Sizing != nil {
				t.Fatalf("measured %+v, sizing %+v: want the measurement trusted over the estimate", m, res.Diagnosis.Sizing)
			}
			if f := fixes[fix.GradCheckpointing]; f.SavesBytes != nil {
				t.Errorf("checkpointing quantified from a set-aside estimate: %+v", f)
			}
			// Micro-batch 4 × 4 accumulation steps: a smaller micro-batch keeps the effective 16.
			if f := fixes[fix.GradAccum]; !strings.Contains(f.Snippet, `"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8`) {
				t.Errorf("grad-accum %q: want micro-batch 2 × 8 steps", f.Snippet)
			}
		}},
		{"cnn-eval", "eval-without-no-grad", []string{fix.InferenceMode, fix.SmallerEvalBatch}, []string{fix.FlashAttention, fix.ChunkedLoss, fix.LoRA, fix.MaxModelLen}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.paste, func(t *testing.T) {
			res := Diagnose(context.Background(), pasteFixture(t, tt.paste), Deps{Offers: &fakeOffers{}}).Result
			if len(res.Diagnosis.Causes) == 0 || res.Diagnosis.Causes[0].ID != tt.firstCause {
				t.Fatalf("causes %+v, want %s first", res.Diagnosis.Causes, tt.firstCause)
			}
			fixes := fixesOf(res)
			for _, id := range tt.has {
				if _, ok := fixes[id]; !ok {
					t.Errorf("fixes %v lack %s", slices.Collect(maps.Keys(fixes)), id)
				}
			}
			for _, id := range tt.not {
				if _, ok := fixes[id]; ok {
					t.Errorf("fixes %v include %s", slices.Collect(maps.Keys(fixes)), id)
				}
			}
			if tt.check != nil {
				tt.check(t, res, fixes)
			}
		})
	}
}

// TestOOMIssue23 pins what issue 23 asked of each case: the method and the
// engine read from the paste, the first fix the one that addresses where
// it failed, the device's idiom, the paste's own model id in the commands,
// and no sizing past three times the paste's capacity.
func TestOOMIssue23(t *testing.T) {
	cuda := []string{"nvidia-smi", "PYTORCH_CUDA_ALLOC_CONF", `autocast("cuda"`, "torch.cuda."}
	tests := []struct {
		paste, method, engine, where, first string
		has, not                            []string // in the whole reply text
	}{
		{"trl-peft-lora", "lora", "hf", "logits", fix.ChunkedLoss, []string{"Your step needed at least 25.9 GiB: 21.3 GiB held", "trainable params 3,833,856 of 8,194,569,216"}, []string{"ZeRO-3"}},
		{"deepspeed-init", "full", "hf", "optimizer-init", fix.Zero3, nil, []string{`{"bf16": {"enabled": true}}`, "where in the job it happened"}},
		{"vllm-kv-instruct", "inference", "vllm", "kv-cache-startup", fix.MaxModelLen, []string{"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768", "cannot close the gap alone: +1.2 GiB against the 11.3 GiB missing"}, []string{"vllm serve meta-llama/Llama-3.1-8B --"}},
		{"llamacpp-70b-q4", "inference", "llama.cpp", "kv-cache-startup", fix.LayerOffload, []string{"-ngl 40   #", "GGUF Q4_K_M"}, []string{"-ngl 47   #", "bf16"}},
		{"rocm-lm-head", "lora", "hf", "logits", fix.ChunkedLoss, nil, []string{"Run evaluation without autograd", "nvidia-smi", "PYTORCH_CUDA_ALLOC_CONF"}},
		{"mps-training", "full", "hf", "backward", fix.GradAccum, []string{`autocast("mps"`}, cuda},
		{"trtllm-executor", "inference", "tensorrt-llm", "kv-cache-startup", fix.LowerGPUMemoryUtil, nil, nil},
		{"numba-cumemalloc", "", "", "unknown", fix.FreeReferences, nil, nil},
		{"vllm-cumem", "", "vllm", "unknown", fix.LowerGPUMemoryUtil, nil, []string{"bigger share"}},
	}
	for _, tt := range tests {
		t.Run(tt.paste, func(t *testing.T) {
			a := Diagnose(context.Background(), pasteFixture(t, tt.paste), Deps{Offers: &fakeOffers{}})
			res, text := a.Result, reply.Text(a.Reply)
			j := res.Job
			if j == nil {
				t.Fatal("no job read")
			}
			if got := deref(j.Method); got != tt.method {
				t.Errorf("method %q, want %q", got, tt.method)
			}
			if got := deref(j.Engine); got != tt.engine {
				t.Errorf("engine %q, want %q", got, tt.engine)
			}
			if j.Where != tt.where {
				t.Errorf("where %q, want %q", j.Where, tt.where)
			}
			if first := leadOrder(res.Diagnosis); len(first) == 0 || first[0].ID != tt.first {
				t.Errorf("first fix %v, want %s", first, tt.first)
			}
			for _, s := range tt.has {
				if !strings.Contains(text, s) {
					t.Errorf("reply lacks %q", s)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(text, s) {
					t.Errorf("reply has %q", s)
				}
			}
			if s := res.Diagnosis.Sizing; s != nil && res.TotalCapacityBytes != nil && s.Estimate.TotalBytes > 3**res.TotalCapacityBytes {
				t.Errorf("sized at %d bytes on a %d-byte GPU", s.Estimate.TotalBytes, *res.TotalCapacityBytes)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
