package memory

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// l318b is a Llama-3.1-8B full fine-tuning workload in pure bf16.
func l318b(t testing.TB) Workload {
	return Workload{Model: mustModel(t, "llama-3.1-8b"), Method: MethodFull, Precision: PrecisionBF16, Optimizer: OptimizerAdamW,
		Batch: 2, SeqLen: 8192, Checkpointing: CheckpointOff, Loss: LossStandard}
}

func hasNote(w Workload, sub string) bool {
	return slices.ContainsFunc(w.Assumptions, func(s string) bool { return strings.Contains(s, sub) })
}

// TestDefaultsAsTheToolsHaveThem pins Resolve's training defaults and that
// each is stated (docs/memory-model.md §6.6).
func TestDefaultsAsTheToolsHaveThem(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	tests := []struct {
		name     string
		w        Workload
		ckpt     Checkpointing
		loss     Loss
		sharding Sharding
		zero     int
		note     string
	}{
		{"QLoRA checkpoints", Workload{Model: m, Method: MethodQLoRA}, CheckpointFull, LossStandard, ShardingNone, 0, "prepare_model_for_kbit_training"},
		{"LoRA alone does not", Workload{Model: m, Method: MethodLoRA}, CheckpointOff, LossStandard, ShardingNone, 0, "checkpointing not given: off"},
		{"LoRA on torchtune's recipes", Workload{Model: m, Method: MethodLoRA, Framework: FrameworkTorchtune}, CheckpointFull, LossChunked, ShardingNone, 0, "as torchtune"},
		{"LoRA on Unsloth", Workload{Model: m, Method: MethodLoRA, Framework: FrameworkUnsloth}, CheckpointOffloaded, LossChunked, ShardingNone, 0, "Unsloth"},
		{"LoRA on axolotl", Workload{Model: m, Method: MethodLoRA, Framework: FrameworkAxolotl}, CheckpointFull, LossStandard, ShardingNone, 0, "axolotl"},
		{"LoRA on TRL", Workload{Model: m, Method: MethodLoRA, Framework: FrameworkTRL}, CheckpointFull, LossChunked, ShardingNone, 0, "SFTConfig"},
		{"LoRA on LLaMA-Factory", Workload{Model: m, Method: MethodLoRA, Framework: FrameworkLlamaFactory}, CheckpointFull, LossStandard, ShardingNone, 0, "LLaMA-Factory"},
		{"multi-GPU full fine-tuning shards with FSDP", Workload{Model: m, Method: MethodFull, GPUs: 8}, CheckpointOff, LossStandard, ShardingFSDP, 3, "FSDP full shard"},
		{"unless ddp says otherwise", Workload{Model: m, Method: MethodFull, GPUs: 8, Sharding: ShardingDDP}, CheckpointOff, LossStandard, ShardingDDP, 0, ""},
		{"or zero= does", Workload{Model: m, Method: MethodFull, GPUs: 8, ZeroStage: 2}, CheckpointOff, LossStandard, ShardingDeepSpeed, 2, ""},
		{"multi-GPU LoRA is DDP", Workload{Model: m, Method: MethodLoRA, GPUs: 4}, CheckpointOff, LossStandard, ShardingDDP, 0, "DDP"},
		{"but torchtune shards its base", Workload{Model: m, Method: MethodLoRA, GPUs: 4, Framework: FrameworkTorchtune}, CheckpointFull, LossChunked, ShardingFSDP, 3, "distributed LoRA recipes"},
		{"an explicit choice wins", Workload{Model: m, Method: MethodQLoRA, Checkpointing: CheckpointOff, Loss: LossChunked}, CheckpointOff, LossChunked, ShardingNone, 0, ""},
		{"GradCheckpointing alone is full", Workload{Model: m, Method: MethodFull, GradCheckpointing: true}, CheckpointFull, LossStandard, ShardingNone, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Resolve(tt.w)
			if w.Checkpointing != tt.ckpt || w.Loss != tt.loss || w.Sharding != tt.sharding || w.ZeroStage != tt.zero {
				t.Errorf("checkpointing %s, loss %s, sharding %s zero %d; want %s, %s, %s %d",
					w.Checkpointing, w.Loss, w.Sharding, w.ZeroStage, tt.ckpt, tt.loss, tt.sharding, tt.zero)
			}
			if w.GradCheckpointing != (w.Checkpointing != CheckpointOff) || w.ChunkedLoss != (w.Loss == LossChunked) {
				t.Errorf("derived fields disagree: %+v", w)
			}
			if tt.note != "" && !hasNote(w, tt.note) {
				t.Errorf("no assumption mentions %q: %q", tt.note, w.Assumptions)
			}
			if again := Resolve(w); again.Checkpointing != w.Checkpointing || again.Sharding != w.Sharding || len(again.Assumptions) != len(w.Assumptions) {
				t.Errorf("Resolve is not idempotent: %+v", again)
			}
		})
	}
}

// TestSelectiveCheckpointingKeepsTheOpPolicy pins gc=selective to
// torchtitan's per-op policy for a Llama block: the block input, the 1st,
// 3rd, 5th and 7th matmul outputs (q, v, gate, down) and the attention
// output with its log-sum-exp.
func TestSelectiveCheckpointingKeepsTheOpPolicy(t *testing.T) {
	w := Resolve(l318b(t))
	m := w.Model
	h, q, kv, i := 4096.0, 4096.0, 1024.0, 14336.0
	want := 2*(h+q+kv+i+h+q) + 4*32
	if got := selectiveBytesPerToken(shapeAt(m, 0), regimeFor(PrecisionBF16), 1, 1); got != want {
		t.Errorf("selective keeps %.0f bytes per token per block, want %.0f", got, want)
	}
	acts := map[Checkpointing]int64{}
	for _, c := range checkpointings {
		w.Checkpointing = c
		acts[c] = Estimate(w).ActivationsBytes
	}
	if !(acts[CheckpointOff] > acts[CheckpointSelective] && acts[CheckpointSelective] > acts[CheckpointFull] && acts[CheckpointFull] > acts[CheckpointOffloaded]) {
		t.Errorf("activations off %d > selective %d > full %d > offloaded %d does not hold", acts[CheckpointOff], acts[CheckpointSelective], acts[CheckpointFull], acts[CheckpointOffloaded])
	}
	// With eager attention selective drops the s² scores (Megatron's
	// selective recompute); full recomputation keeps them in the one
	// block being recomputed.
	w.Attention = AttentionEager
	w.Checkpointing = CheckpointSelective
	eager := Estimate(w).ActivationsBytes
	w.Attention = AttentionFlash
	flash := Estimate(w).ActivationsBytes
	perBlockScores := float64(w.Batch) * 32 * float64(w.SeqLen*w.SeqLen) * 6
	if float64(eager-flash) > 1.01*perBlockScores {
		t.Errorf("selective with eager attention keeps %d more bytes than one block's scores (%.0f)", eager-flash, perBlockScores)
	}
}

func TestOptimizerInBackwardFreesGradients(t *testing.T) {
	w := l318b(t)
	before := Estimate(w)
	w.OptimizerInBackward = true
	after := Estimate(w)
	embedding := float64(128256 * 4096 * 2)
	if float64(after.GradientsBytes) != embedding || before.GradientsBytes != int64(2*8_030_261_248) {
		t.Errorf("gradients %d → %d bytes, want all 16 GB → the embedding's %.0f", before.GradientsBytes, after.GradientsBytes, embedding)
	}
}

func TestActivationOffloadKeepsBlocksInFlight(t *testing.T) {
	w := l318b(t)
	w.Checkpointing = CheckpointFull
	full := Estimate(w).ActivationsBytes
	w.ActivationOffload = true
	off := Estimate(w).ActivationsBytes
	input := float64(w.Batch*w.SeqLen) * 2 * 4096
	if got := float64(full - off); math.Abs(got-(32-offloadInFlightBlocks)*input) > 1 {
		t.Errorf("offloading saves %.0f bytes, want the %d block inputs not in flight = %.0f", got, 32-offloadInFlightBlocks, (32-offloadInFlightBlocks)*input)
	}
}

func TestChunkedLossShrinksLogits(t *testing.T) {
	w := l318b(t)
	std := Estimate(w).LogitsBytes
	w.Loss = LossChunked
	// One Liger chunk (16384 tokens / ceil(128256/4096) = 512 tokens), the
	// hidden states' gradient and, the head being trained, its gradient
	// accumulator.
	want := int64(512*128256*2 + 16384*4096*2 + 128256*4096*2)
	if chunked := Estimate(w).LogitsBytes; chunked != want || std != int64(2*8192*128256*10) {
		t.Errorf("logits standard %d (want b·s·V·10), chunked %d (want %d)", std, chunked, want)
	}
}

// TestFSDPShardsEverythingAndGathersBlocks pins FSDP full sharding: every
// state divided by the data-parallel GPUs, plus two gathered blocks and the
// root's embeddings in 16-bit and one block's unsharded gradients.
func TestFSDPShardsEverythingAndGathersBlocks(t *testing.T) {
	w := l318b(t)
	w.Precision = PrecisionMixedBF16
	w.GPUs, w.Sharding = 8, ShardingFSDP
	b := Estimate(w)
	m := w.Model
	psi := float64(m.Params)
	block := float64(m.LayerParams())
	root := float64(m.EmbeddingParams() + m.LMHeadParams())
	wantWeights := 4*psi/8 + (2*block*2 + root*2)
	wantGrads := 4*psi/8 + psi/32*(2+4)
	wantOptim := 8 * psi / 8
	for name, got := range map[string][2]float64{
		"weights": {float64(b.WeightsBytes), wantWeights}, "gradients": {float64(b.GradientsBytes), wantGrads}, "optimizer": {float64(b.OptimizerBytes), wantOptim},
	} {
		if !within(got[0], got[1], 0.01) {
			t.Errorf("%s %.3g bytes, want %.3g", name, got[0], got[1])
		}
	}
	w.Offload = OffloadParam
	off := Estimate(w)
	if off.OptimizerBytes != 0 || !within(float64(off.WeightsBytes), 2*block*2+root*2, 0.01) {
		t.Errorf("FSDP CPU offload keeps %d bytes of optimizer, %d of weights on the GPU", off.OptimizerBytes, off.WeightsBytes)
	}
}

func TestDDPKeepsABucketCopyOfTheGradients(t *testing.T) {
	w := l318b(t)
	one := Estimate(w)
	w.GPUs, w.Sharding = 4, ShardingDDP
	if four := Estimate(w); four.GradientsBytes != 2*one.GradientsBytes || four.WeightsBytes != one.WeightsBytes {
		t.Errorf("DDP gradients %d (one GPU %d), weights %d (%d)", four.GradientsBytes, one.GradientsBytes, four.WeightsBytes, one.WeightsBytes)
	}
}

// TestZeRO3AdaptersGetNoEmbeddingGradient: under ZeRO-3 the gathered
// gradient is the largest trainable tensor's, an adapter's for LoRA, not
// the frozen embedding's (issue 11: 2.0 GiB of "gradients" for <0.1 GiB of
// adapters).
func TestZeRO3AdaptersGetNoEmbeddingGradient(t *testing.T) {
	b := Estimate(Workload{ModelName: "llama-3.1-70b", Method: MethodQLoRA, GPUs: 2, ZeroStage: 3, Checkpointing: CheckpointFull})
	if b.GradientsBytes > 100<<20 {
		t.Errorf("QLoRA under ZeRO-3 books %d bytes of gradients", b.GradientsBytes)
	}
}

func TestDoRAAddsMagnitudeAndSavedOutputs(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	lora := Resolve(Workload{Model: m, Method: MethodLoRA, LoRATargets: "all", LoRARank: 16})
	dora := Resolve(Workload{Model: m, Method: MethodDoRA, LoRATargets: "all", LoRARank: 16})
	// q, k, v, o, gate, up, down out widths per block.
	perBlock := int64(4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096)
	if got := dora.TrainableParams - lora.TrainableParams; got != 32*perBlock {
		t.Errorf("DoRA adds %d parameters, want the magnitude vectors' %d", got, 32*perBlock)
	}
	if Estimate(dora).ActivationsBytes <= Estimate(lora).ActivationsBytes {
		t.Error("DoRA keeps no more activations than LoRA")
	}
}

func TestFrameworkNF4AndLoRADropout(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	bnb := Estimate(Workload{Model: m, Method: MethodQLoRA, LoRATargets: "all", Batch: 2, SeqLen: 2048, Checkpointing: CheckpointOff, Loss: LossStandard})
	tt := Estimate(Workload{Model: m, Method: MethodQLoRA, LoRATargets: "all", Batch: 2, SeqLen: 2048, Checkpointing: CheckpointOff, Loss: LossStandard, Framework: FrameworkTorchtune})
	if tt.WeightsBytes >= bnb.WeightsBytes || tt.ActivationsBytes >= bnb.ActivationsBytes {
		t.Errorf("torchtune's NF4 (double-quantised, input not saved, no LoRA dropout) is not lighter: weights %d vs %d, activations %d vs %d",
			tt.WeightsBytes, bnb.WeightsBytes, tt.ActivationsBytes, bnb.ActivationsBytes)
	}
}

func TestJobFLOPsByMethod(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	n := float64(m.ActiveParams())
	const tokens = 1e9
	full, formula := JobFLOPs(Workload{Model: m, Method: MethodFull, Checkpointing: CheckpointOff, Tokens: tokens})
	if !within(full, 6*n*tokens, 1e-9) || !strings.Contains(formula, "6N") {
		t.Errorf("full: %g (%s), want 6N", full, formula)
	}
	ckpt, _ := JobFLOPs(Workload{Model: m, Method: MethodFull, Checkpointing: CheckpointFull, Tokens: tokens})
	if !within(ckpt, 8*n*tokens, 1e-9) {
		t.Errorf("full with checkpointing: %g, want 8N", ckpt)
	}
	w := Resolve(Workload{Model: m, Method: MethodLoRA, Checkpointing: CheckpointOff, Tokens: tokens})
	lora, _ := JobFLOPs(w)
	if want := (4*n + 6*float64(w.TrainableParams)) * tokens; !within(lora, want, 1e-9) {
		t.Errorf("LoRA: %g, want 4N + 6A = %g", lora, want)
	}
	sel, _ := JobFLOPs(Workload{Model: m, Method: MethodFull, Checkpointing: CheckpointSelective, Tokens: tokens})
	if !(sel > full && sel < ckpt) {
		t.Errorf("selective %g not between no recompute %g and full recompute %g", sel, full, ckpt)
	}
	inf, _ := JobFLOPs(Workload{Model: m, Method: MethodInference, Tokens: tokens})
	if !within(inf, 2*n*tokens, 1e-9) {
		t.Errorf("inference: %g, want 2N", inf)
	}
	mix := mustModel(t, "mixtral-8x7b")
	moe, formula := JobFLOPs(Workload{Model: mix, Method: MethodFull, Checkpointing: CheckpointOff, Tokens: tokens})
	if !within(moe, 6*float64(mix.ActiveParams())*tokens, 1e-9) || mix.ActiveParams() >= mix.Params || !strings.Contains(formula, "active") {
		t.Errorf("MoE: %g (%s), want 6 × active parameters", moe, formula)
	}
	if f, _ := JobFLOPs(Workload{Model: m, Method: MethodFull}); f != 0 {
		t.Errorf("no tokens, %g FLOPs", f)
	}
}

func TestUtilisationByGPUClass(t *testing.T) {
	class := func(key string) Utilisation {
		g, ok := catalog.LookupGPU(key)
		if !ok {
			t.Fatalf("no GPU %s", key)
		}
		return UtilisationFor(g)
	}
	if class("h100").Class != "hopper" || class("a100").Class != "a100" || class("v100").Class != "volta-turing" || class("t4").Class != "volta-turing" {
		t.Error("datacenter classes misread")
	}
	for _, consumer := range []string{"4090", "3090", "l4", "a10g"} {
		if u := class(consumer); u.Share >= 0.40 {
			t.Errorf("%s at %.0f%%: consumer and GDDR cards reach far less than 40%%", consumer, 100*u.Share)
		}
	}
	for _, g := range catalog.GPUs() {
		if u := UtilisationFor(g); u.Share <= 0 || u.Share >= 1 || u.Source == "" {
			t.Errorf("%s: utilisation %+v", g.Key, u)
		}
	}
}

func TestErrorBandFor(t *testing.T) {
	for _, m := range []Method{MethodFull, MethodLoRA, MethodQLoRA, MethodInference} {
		b, ok := ErrorBandFor(m)
		if !ok || b.Cases < 5 || b.MedianAbsErrorPct <= 0 || b.P90AbsErrorPct < b.MedianAbsErrorPct || b.BorrowedFrom != "" {
			t.Errorf("%s: band %+v", m, b)
		}
		if !strings.Contains(b.Text(), "measured "+MethodLabel(m)+" runs") {
			t.Errorf("%s: %q", m, b.Text())
		}
	}
	if b, ok := ErrorBandFor(MethodDoRA); !ok || b.BorrowedFrom != MethodLoRA || !strings.Contains(b.Text(), "no measured DoRA run") {
		t.Errorf("DoRA band %+v %q", b, b.Text())
	}
}

// TestFSDPGradientAccumulation pins FSDP's gradient memory between syncs:
// under the HF Trainer, accelerate and Lightning, accumulated micro-batches
// keep every trainable gradient unsharded on every GPU (no_sync); a plain
// loop, torchtune and torchtitan reduce-scatter every micro-batch; Lightning's FSDP1
// FlatParameters give a LoRA block's frozen weights gradients too.
func TestFSDPGradientAccumulation(t *testing.T) {
	m, ok := catalog.LookupModel("llama-2-7b")
	if !ok {
		t.Fatal("llama-2-7b not in the catalog")
	}
	grads := func(method Method, fw Framework, ga int) float64 {
		w := Resolve(Workload{Model: m, Method: method, Precision: PrecisionBF16, Optimizer: OptimizerAdamW, Batch: 1, SeqLen: 1304,
			GPUs: 2, Sharding: ShardingFSDP, Checkpointing: CheckpointFull, Framework: fw, GradAccumSteps: ga})
		return float64(Estimate(w).GradientsBytes)
	}
	p := float64(m.Params)
	if g := grads(MethodFull, FrameworkHF, 1); g > 0.6*p*2 {
		t.Errorf("full FT syncing every micro-batch: %.1f GB of gradients, want about the half shard", g/1e9)
	}
	if a, b := grads(MethodFull, "", 8), grads(MethodFull, "", 1); a != b {
		t.Errorf("a plain PyTorch loop reduce-scatters every micro-batch: %.0f bytes with accumulation, %.0f without", a, b)
	}
	if g := grads(MethodFull, FrameworkHF, 8); g < p*2 {
		t.Errorf("full FT accumulating under no_sync: %.1f GB of gradients, want every gradient unsharded (%.1f GB)", g/1e9, p*2/1e9)
	}
	// sync-each-batch=on (accelerate's sync_each_batch; FSDP2 under
	// accelerate before 1.11) reduce-scatters every micro-batch.
	synced := Resolve(Workload{Model: m, Method: MethodFull, Precision: PrecisionBF16, Optimizer: OptimizerAdamW, Batch: 1, SeqLen: 1304,
		GPUs: 2, Sharding: ShardingFSDP, Checkpointing: CheckpointFull, Framework: FrameworkHF, GradAccumSteps: 8, SyncEachBatch: SwitchOn})
	if a, b := float64(Estimate(synced).GradientsBytes), grads(MethodFull, FrameworkHF, 1); a != b {
		t.Errorf("sync-each-batch=on: %.0f bytes of gradients with accumulation, want the %.0f of one micro-batch", a, b)
	}
	// CPU offload moves the reduce-scattered shards to the CPU, not what
	// accumulates unsharded between syncs.
	offloaded := func(ga int) float64 {
		w := Resolve(Workload{Model: m, Method: MethodFull, Precision: PrecisionBF16, Optimizer: OptimizerAdamW, Batch: 1, SeqLen: 1304,
			GPUs: 2, Sharding: ShardingFSDP, ZeroStage: 3, Offload: OffloadParam, Checkpointing: CheckpointFull, Framework: FrameworkHF, GradAccumSteps: ga})
		return float64(Estimate(w).GradientsBytes)
	}
	if g := offloaded(8); g < p*2 {
		t.Errorf("offloaded FSDP accumulating under no_sync: %.1f GB of gradients on the GPU, want every gradient unsharded (%.1f GB)", g/1e9, p*2/1e9)
	}
	if g := offloaded(1); g > 0.1*p*2 {
		t.Errorf("offloaded FSDP syncing every micro-batch: %.1f GB of gradients on the GPU, want about none", g/1e9)
	}
	if a, b := grads(MethodFull, FrameworkTorchtune, 8), grads(MethodFull, FrameworkTorchtune, 1); a != b {
		t.Errorf("torchtune reduce-scatters every micro-batch: %.0f bytes with accumulation, %.0f without", a, b)
	}
	if g := grads(MethodLoRA, FrameworkHF, 8); g > 1e9 {
		t.Errorf("LoRA under the HF stack accumulates only the adapters' gradients, got %.1f GB", g/1e9)
	}
	blocks := float64(m.MeanLayerParams()) * float64(m.NumLayers) * 2
	if g := grads(MethodLoRA, FrameworkLightning, 128); g < blocks {
		t.Errorf("Lightning's FSDP LoRA accumulating: %.1f GB of gradients, want the whole blocks' (%.1f GB)", g/1e9, blocks/1e9)
	}
	if g := grads(MethodLoRA, FrameworkLightning, 1); g < blocks/2 || g > blocks {
		t.Errorf("Lightning's FSDP LoRA syncing: %.1f GB of gradients, want the blocks' shard (%.1f GB)", g/1e9, blocks/2/1e9)
	}
}
