package arch

import (
	"encoding/json"
	"math"
	"testing"
)

// Hand-built architectures from their config.json files
// (docs/architectures.md §3, §6, §7), with the published counts.
func deepseekV3() Model {
	mla := Attention{Kind: KindMLA, Heads: 128, HeadDim: 192, VHeadDim: 128, QLoRARank: 1536, KVLoRARank: 512, RopeDim: 64}
	moe := LayerGroup{Layers: 58, Attention: mla, Norms: 2,
		FFN: FFN{Experts: 256, ActiveExperts: 8, ExpertIntermediate: 2048, SharedIntermediate: 2048, ScoreBias: true}}
	return Model{
		Family: FamilyDecoderOnly, HiddenSize: 7168, NumLayers: 61, VocabSize: 129280, MLP: "swiglu", Norm: "rmsnorm",
		Groups: []LayerGroup{{Layers: 3, Attention: mla, FFN: FFN{Intermediate: 18432}, Norms: 2}, moe},
		MTP:    &MTP{LayerGroup: LayerGroup{Layers: 1, Attention: mla, FFN: moe.FFN, Norms: 2}, OwnEmbeddings: true},
	}
}

func qwen3Next() Model {
	moe := FFN{Experts: 512, ActiveExperts: 10, ExpertIntermediate: 512, SharedIntermediate: 512, SharedGate: true}
	full := Attention{Kind: KindFull, Heads: 16, KVHeads: 2, HeadDim: 256, OutputGate: true, QKNorm: QKNormHead}
	// conv state (2·16·128 + 32·128)·(4−1) + recurrent 32·128·128, bf16.
	lin := Attention{Kind: KindLinear, Heads: 16, LinearType: LinearGatedDeltaNet, LinearKeyHeads: 16, LinearValueHeads: 32,
		LinearKeyDim: 128, LinearValueDim: 128, ConvKernel: 4, StateBytes: (8192*3 + 32*128*128) * 2}
	return Model{
		Family: FamilyDecoderOnly, HiddenSize: 2048, NumLayers: 48, VocabSize: 151936, MLP: "swiglu", Norm: "rmsnorm",
		Groups: []LayerGroup{{Layers: 36, Attention: lin, FFN: moe, Norms: 2}, {Layers: 12, Attention: full, FFN: moe, Norms: 2}},
		MTP:    &MTP{LayerGroup: LayerGroup{Layers: 1, Attention: full, FFN: moe, Norms: 2}},
	}
}

func gptOSS20b() Model {
	attn := Attention{Kind: KindFull, Heads: 64, KVHeads: 8, HeadDim: 64, QKVBias: true, OutBias: true, Sinks: true}
	slide := attn
	slide.Kind, slide.Window = KindSliding, 128
	moe := FFN{Experts: 32, ActiveExperts: 4, ExpertIntermediate: 2880, Bias: true, RouterBias: true}
	return Model{
		Family: FamilyDecoderOnly, HiddenSize: 2880, NumLayers: 24, VocabSize: 201088, MLP: "swiglu", Norm: "rmsnorm",
		Groups: []LayerGroup{{Layers: 12, Attention: slide, FFN: moe, Norms: 2}, {Layers: 12, Attention: attn, FFN: moe, Norms: 2}},
	}
}

func withParams(m Model) Model { m.Params = m.ComputeParams(); return m }

func TestParamsOfGroupedModels(t *testing.T) {
	tests := []struct {
		name                  string
		m                     Model
		params, resident, act int64
	}{
		// docs/architectures.md §6: 671,026,419,200 + MTP = 684,489,845,504; active 37.55B.
		{"DeepSeek-V3", deepseekV3(), 684_489_845_504, 671_026_419_200, 37_552_297_472},
		// §3: runtime 79,674,391,296 + MTP 1,650,471,424; active 3,874,929,408.
		{"Qwen3-Next-80B-A3B", qwen3Next(), 81_324_862_720, 79_674_391_296, 3_874_929_408},
		// §7: 20,914,757,184 total, 4,187,440,704 active (incl. embedding).
		{"gpt-oss-20b", gptOSS20b(), 20_914_757_184, 20_914_757_184, 4_187_440_704},
	}
	for _, tt := range tests {
		m := withParams(tt.m)
		if m.Params != tt.params || m.ResidentParams() != tt.resident || m.ActiveParams() != tt.act {
			t.Errorf("%s: params %d resident %d active %d; want %d %d %d", tt.name, m.Params, m.ResidentParams(), m.ActiveParams(), tt.params, tt.resident, tt.act)
		}
		if got := m.ParamsByGroup().Total(); got != m.Params {
			t.Errorf("%s: groups add up to %d", tt.name, got)
		}
	}
}

func TestKVCacheBytes(t *testing.T) {
	const seq, batch = 32768, 4
	tests := []struct {
		name string
		m    Model
		want float64
	}{
		// MLA: (512 + 64) latent × 2 B × 61 layers per token.
		{"DeepSeek-V3", deepseekV3(), 576 * 2 * 61 * seq * batch},
		// 12 full layers × 2·2·256·2 B per token + 36 linear layers' fixed state.
		{"Qwen3-Next", qwen3Next(), 12*2*2*256*2*seq*batch + 36*(8192*3+32*128*128)*2*batch},
		// 12 full layers × 2·8·64·2 B per token, 12 sliding ones capped at 128 tokens.
		{"gpt-oss-20b", gptOSS20b(), 12*2048*seq*batch + 12*2048*128*batch},
	}
	for _, tt := range tests {
		if got := tt.m.KVCacheBytes(seq, batch, 2); got != tt.want {
			t.Errorf("%s: KV %.0f, want %.0f", tt.name, got, tt.want)
		}
	}
	// fp8 halves attention KV but not the linear layers' state.
	q := qwen3Next()
	if got, want := q.KVCacheBytes(seq, 1, 1), float64(12*2*2*256*seq+36*(8192*3+32*128*128)*2); got != want {
		t.Errorf("Qwen3-Next fp8: %.0f, want %.0f", got, want)
	}
	// A short sequence fits inside the window: every layer grows.
	if got, want := gptOSS20b().KVCacheBytes(100, 1, 2), float64(24*2048*100); got != want {
		t.Errorf("gpt-oss at 100 tokens: %.0f, want %.0f", got, want)
	}
}

func TestAttentionGroupsMergeLayersThatCacheAlike(t *testing.T) {
	g := deepseekV3().AttentionGroups()
	if len(g) != 1 || g[0].Kind != KindMLA || g[0].Layers != 61 || g[0].LatentDim != 576 || g[0].KVHeads != 1 {
		t.Errorf("DeepSeek-V3 groups: %+v", g)
	}
	g = qwen3Next().AttentionGroups()
	if len(g) != 2 || g[0].Kind != KindLinear || g[0].Layers != 36 || g[1].Kind != KindFull || g[1].KVHeads != 2 || g[1].HeadDim != 256 {
		t.Errorf("Qwen3-Next groups: %+v", g)
	}
}

func TestUniformModelIsOneGroup(t *testing.T) {
	// Llama-2-7B as a shape row: 6,738,415,616 parameters, 512 KiB/token.
	m := Model{Family: FamilyDecoderOnly, HiddenSize: 4096, NumLayers: 32, NumAttentionHeads: 32, NumKVHeads: 32, HeadDim: 128,
		IntermediateSize: 11008, VocabSize: 32000, MLP: "swiglu", Norm: "rmsnorm", Position: "rope"}
	m.Params = m.ComputeParams()
	if m.Params != 6_738_415_616 || m.ActiveParams() != m.Params || m.ResidentParams() != m.Params {
		t.Errorf("Llama-2-7B: %d params, %d active", m.Params, m.ActiveParams())
	}
	if got := m.KVCacheBytesPerToken(); got != 512<<10 {
		t.Errorf("KV/token %d", got)
	}
	if got := m.KVCacheBytes(4096, 2, 2); got != float64(512<<10)*4096*2 {
		t.Errorf("KV %.0f", got)
	}
}

func TestWeightBytesByGroup(t *testing.T) {
	m := withParams(gptOSS20b())
	m.Quant = NewQuantization("mxfp4", "mxfp4", MXFP4Bytes, []TensorGroup{TensorExperts})
	w := m.WeightBytesByGroup(2)
	p := m.ParamsByGroup()
	if w[TensorExperts] != float64(p[TensorExperts])*MXFP4Bytes || w[TensorAttention] != 2*float64(p[TensorAttention]) {
		t.Errorf("weights by group %v", w)
	}
	// docs/architectures.md §7: the 20b checkpoint is ~13.76 GB.
	if got := w.Total(); math.Abs(got-13.76e9)/13.76e9 > 0.01 {
		t.Errorf("gpt-oss-20b MXFP4 weights %.3g bytes, want ~13.76e9", got)
	}
}

func TestByGroupJSON(t *testing.T) {
	var b ByGroup[float64]
	b[TensorExperts] = 0.53125
	data, err := json.Marshal(b)
	if err != nil || string(data) != `{"experts":0.53125}` {
		t.Fatalf("%s, %v", data, err)
	}
	var back ByGroup[float64]
	if err := json.Unmarshal(data, &back); err != nil || back != b {
		t.Errorf("round trip: %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"nope":1}`), &back); err == nil {
		t.Error("unknown group accepted")
	}
}

func TestGroupwiseIntBytes(t *testing.T) {
	// docs/architectures.md §14: 4-bit g128 with zero points ≈ 0.52 B.
	if got := GroupwiseIntBytes(4, 128, true); math.Abs(got-0.5195) > 0.001 {
		t.Errorf("int4 g128 = %.4f", got)
	}
	if got := GroupwiseIntBytes(8, 0, false); got != 1 {
		t.Errorf("int8 per-channel = %.4f", got)
	}
}
