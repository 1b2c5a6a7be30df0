package serving

import (
	"math"
	"testing"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

const gibF = float64(1 << 30)

// TestUniformLayout is the worked example of docs/vllm-kv.md §7: Qwen3-8B
// in bf16 (36 layers, 8 KV heads of 128), 53.7 GiB for the cache, block 16:
// ≈24,440 blocks (24,439 exactly), ≈391,000 tokens, 9.55 requests of
// 40,960 tokens.
func TestUniformLayout(t *testing.T) {
	specs := []kvSpec{{kind: arch.KindFull, layers: 36, tokenBytes: 2 * 8 * 128 * 2}}
	l := newLayout(specs, 16, 8192)
	if l.page != 36*65536 {
		t.Fatalf("page %v, want 36 × 65,536", l.page)
	}
	blocks := l.numBlocks(53.7 * gibF)
	if blocks != 24439 {
		t.Errorf("blocks %d, want 24,439", blocks)
	}
	if got := l.tokens(blocks); got != 24439*16 {
		t.Errorf("tokens %d, want 24,439 × 16", got)
	}
	if got := l.concurrency(blocks, 40960); math.Abs(got-24439.0/2560) > 1e-9 {
		t.Errorf("concurrency %v, want 24,439 / 2,560", got)
	}
	// One request of 40,960 tokens needs 2,560 blocks of every layer.
	if got := l.neededBytes(40960); got != 2560*36*65536 {
		t.Errorf("needed %v", got)
	}
	// The largest request 1,000 blocks hold is 16,000 tokens.
	if got := l.maxLenThatFits(1000*l.page, 131072); got != 16000 {
		t.Errorf("max len %d, want 16,000", got)
	}
	if got := l.maxLenThatFits(l.page/2, 131072); got != 0 {
		t.Errorf("half a block fits %d tokens, want 0", got)
	}
}

// TestHybridGrouping follows vLLM's grouping heuristic (docs/vllm-kv.md §3).
func TestHybridGrouping(t *testing.T) {
	tests := []struct {
		name      string
		specs     []kvSpec
		groupSize int
		groups    []int
	}{
		// gemma-3-27b: 52 sliding + 10 full → groups of 10: 6 sliding + 1 full.
		{"gemma-3-27b", []kvSpec{{kind: arch.KindSliding, layers: 52, tokenBytes: 8192, window: 1024}, {kind: arch.KindFull, layers: 10, tokenBytes: 8192}}, 10, []int{6, 1}},
		// gpt-oss-20b: 12 + 12 → two groups of 12.
		{"gpt-oss-20b", []kvSpec{{kind: arch.KindSliding, layers: 12, tokenBytes: 2048, window: 128}, {kind: arch.KindFull, layers: 12, tokenBytes: 2048}}, 12, []int{1, 1}},
		// 10 + 14: the most is under 1.5× the fewest, so groups of 14.
		{"close counts", []kvSpec{{kind: arch.KindSliding, layers: 10, tokenBytes: 2048, window: 512}, {kind: arch.KindFull, layers: 14, tokenBytes: 2048}}, 14, []int{1, 1}},
	}
	for _, tt := range tests {
		l := newLayout(tt.specs, 16, 2048)
		if l.uniform || l.groupSize != tt.groupSize || len(l.groups) != len(tt.groups) {
			t.Errorf("%s: uniform %v, group size %d, groups %v; want %d, %v", tt.name, l.uniform, l.groupSize, l.groups, tt.groupSize, tt.groups)
			continue
		}
		for i := range tt.groups {
			if l.groups[i] != tt.groups[i] {
				t.Errorf("%s: groups %v, want %v", tt.name, l.groups, tt.groups)
			}
		}
	}
}

// TestHybridCapacity: a sliding layer keeps window − 1 + max_num_batched
// tokens (+1 block); blocks per request add up over groups, and "GPU KV
// cache size" is blocks per group times the block.
func TestHybridCapacity(t *testing.T) {
	specs := []kvSpec{{kind: arch.KindSliding, layers: 52, tokenBytes: 8192, window: 1024}, {kind: arch.KindFull, layers: 10, tokenBytes: 8192}}
	l := newLayout(specs, 16, 2048)
	if got := l.blocksPerRequest(specs[0], 131072); got != 193 {
		t.Errorf("sliding blocks per request %d, want cdiv(1023+2048, 16)+1 = 193", got)
	}
	if got := l.blocksPerRequest(specs[0], 1000); got != 64 {
		t.Errorf("short request: %d blocks, want cdiv(1000, 16)+1 = 64", got)
	}
	blocks := int64(70000)
	if got := l.tokens(blocks); got != 70000/7*16 {
		t.Errorf("tokens %d, want blocks / 7 groups × 16", got)
	}
	want := float64(blocks) / float64(6*193+8192)
	if got := l.concurrency(blocks, 131072); math.Abs(got-want) > 1e-9 {
		t.Errorf("concurrency %v, want %v", got, want)
	}
	// One request needs its real layers' blocks, not the padded groups'.
	if got, want := l.neededBytes(131072), float64(52*193+10*8192)*l.page; got != want {
		t.Errorf("needed %v, want %v", got, want)
	}
}

// TestStateLayout: a linear-attention (state) layer makes vLLM raise the
// attention block until one page holds a state, in multiples of 16.
func TestStateLayout(t *testing.T) {
	specs := []kvSpec{{kind: arch.KindFull, layers: 12, tokenBytes: 2 * 2 * 256 * 2}, {kind: arch.KindLinear, layers: 36, stateBytes: 1 << 20}}
	l := newLayout(specs, 16, 2048)
	if l.block%stateAlignment != 0 || float64(l.block)*specs[0].tokenBytes < specs[1].stateBytes {
		t.Errorf("block %d: a page of %v bytes does not cover the %v-byte state", l.block, float64(l.block)*specs[0].tokenBytes, specs[1].stateBytes)
	}
	if l.blocksPerRequest(specs[1], 1<<20) != 1 {
		t.Error("a state layer needs one block per request whatever its length")
	}
}

// TestKVSpecs: GQA heads are split by tensor parallelism (at least one per
// rank), MLA's latent is not, windows carry over.
func TestKVSpecs(t *testing.T) {
	llama, _ := catalog.LookupModel("llama-3.1-8b")
	for _, tt := range []struct {
		tp        int
		wantBytes float64
	}{{1, 2 * 8 * 128 * 2}, {2, 2 * 4 * 128 * 2}, {8, 2 * 1 * 128 * 2}, {16, 2 * 1 * 128 * 2}} {
		s := kvSpecs(llama, tt.tp, llama.NumLayers, 2)
		if len(s) != 1 || s[0].layers != 32 || s[0].tokenBytes != tt.wantBytes {
			t.Errorf("tp=%d: %+v, want 32 layers of %v bytes", tt.tp, s, tt.wantBytes)
		}
	}
	mla := arch.Model{Name: "mla", HiddenSize: 2048, NumLayers: 4, VocabSize: 100, Groups: []arch.LayerGroup{{Layers: 4, Attention: arch.Attention{Kind: arch.KindMLA, Heads: 16, HeadDim: 192, VHeadDim: 128, KVLoRARank: 512, RopeDim: 64}}}}
	for _, tp := range []int{1, 4} {
		if s := kvSpecs(mla, tp, 4, 2); len(s) != 1 || s[0].tokenBytes != 576*2 {
			t.Errorf("MLA tp=%d: %+v, want 576 × 2 bytes per layer on every rank", tp, s)
		}
	}
	for _, c := range []struct {
		dtype string
		dense float64
		want  float64
	}{{KVFP8, 2, 1}, {KVAuto, 2, 2}, {KVAuto, 4, 4}, {KVFP16, 4, 2}, {KVQ8, 2, 34.0 / 32}} {
		if got := kvElemBytes(c.dtype, c.dense); got != c.want {
			t.Errorf("kvElemBytes(%q, %v) = %v, want %v (auto is the model's dtype)", c.dtype, c.dense, got, c.want)
		}
	}
}

// TestWeightShares: tensor parallelism splits everything but norms,
// routers and MLA's latent projections; KV heads fewer than tp are
// replicated.
func TestWeightShares(t *testing.T) {
	llama, _ := catalog.LookupModel("llama-3.1-8b")
	one := weightsPerGPU(llama, 2, 1, 1, catalog.GPU{})
	if want := float64(llama.Params)*2 + rotaryCacheBytes(llama, 2); math.Abs(one-want) > 1 {
		t.Errorf("tp=1 weights %v, want params × 2 + rotary cache %v", one, want)
	}
	two := weightsPerGPU(llama, 2, 2, 1, catalog.GPU{})
	if r := (two - rotaryCacheBytes(llama, 2)) / (one - rotaryCacheBytes(llama, 2)); r < 0.5 || r > 0.501 {
		t.Errorf("tp=2 holds %.4f of the weights, want just over half (replicated norms)", r)
	}
	// 16 ranks of a model with 8 KV heads replicate them: more than 1/16.
	if attentionShare(llama, 16) <= 1.0/16 {
		t.Errorf("attention share at tp=16 %v, want above 1/16", attentionShare(llama, 16))
	}
	mla := arch.Model{Name: "mla", HiddenSize: 2048, NumLayers: 4, VocabSize: 100, Groups: []arch.LayerGroup{{Layers: 4, Norms: 2, Attention: arch.Attention{Kind: arch.KindMLA, Heads: 16, HeadDim: 192, VHeadDim: 128, KVLoRARank: 512, RopeDim: 64}, FFN: arch.FFN{Intermediate: 4096}}}}
	if s := attentionShare(mla, 4); s <= 0.25 || s >= 1 {
		t.Errorf("MLA attention share at tp=4 %v, want between 1/4 and 1 (replicated latent projections)", s)
	}
	// Pipeline stages: the first holds the embedding, the last the head.
	st := stages(llama, 2)
	if len(st) != 2 || st[0].layers != 16 || !st[0].first || !st[1].last {
		t.Errorf("stages %+v", st)
	}
	odd := stages(arch.Model{NumLayers: 27}, 2)
	if odd[0].layers != 14 || odd[1].layers != 13 {
		t.Errorf("27 layers over 2 stages: %+v, want 14 + 13 (vLLM's get_pp_indices)", odd)
	}
}

func TestRoundContext(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{37728, 32768}, {26608, 25600}, {122080, 121856}, {16000, 15360}, {8192, 8192}, {900, 900}} {
		if got := RoundContext(tt.in); got != tt.want {
			t.Errorf("RoundContext(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestVersions(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want Generation
	}{{"", GenerationV1}, {"0.6.4", GenerationV0}, {"v0", GenerationV0}, {"0.8.0", GenerationV1}, {"0.10.1", GenerationV1}, {"junk", GenerationV1}} {
		if got := GenerationOf(tt.v); got != tt.want {
			t.Errorf("GenerationOf(%q) = %s, want %s", tt.v, got, tt.want)
		}
	}
	if !versionBefore("0.5.3", 0, 5, 4) || versionBefore("0.5.4", 0, 5, 4) || versionBefore("1.0", 0, 5, 4) {
		t.Error("versionBefore")
	}
}

// TestMXFP4Padding: each MXFP4 MoE backend pads gpt-oss's experts as its
// create_weights does (Triton on Hopper, Marlin elsewhere, FlashInfer on
// datacenter Blackwell).
func TestMXFP4Padding(t *testing.T) {
	oss, _ := catalog.LookupModel("gpt-oss-20b")
	gpu := func(name string) catalog.GPU {
		g, ok := catalog.LookupGPU(name)
		if !ok {
			t.Fatalf("no GPU %q", name)
		}
		return g
	}
	for _, c := range []struct {
		gpu  string
		tp   int
		want float64
	}{
		{"h100", 1, 16.0 / 15},                      // 2880 is a multiple of 64: the swizzle only
		{"h100", 4, 768.0 / 720 * 16 / 15},          // 720 → 768
		{"a100", 1, 2944.0 / 2880 * 3072 / 2880},    // Marlin: k % 128, n % 256
		{"l4", 2, 1536.0 / 1440 * 3072 / 2880},      // 1440 → 1536
		{"b200", 1, 3072.0 / 2880 * 3072 / 2880},    // FlashInfer: both to 256
		{"rtx5090", 1, 2944.0 / 2880 * 3072 / 2880}, // consumer Blackwell runs Marlin
	} {
		if got := mxfp4Padding(oss, c.tp, gpu(c.gpu)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s tp=%d: padding %.4f, want %.4f", c.gpu, c.tp, got, c.want)
		}
	}
	llama, _ := catalog.LookupModel("llama-3.1-8b")
	if got := mxfp4Padding(llama, 1, gpu("h100")); got != 1 {
		t.Errorf("a model without MXFP4 experts pads %v", got)
	}
}
