package serving

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
)

// kvElemBytes is the bytes of one cached K or V element of a KV dtype;
// auto is the model's dtype (vLLM and SGLang --kv-cache-dtype auto), dense
// bytes per element: 4 under --dtype float32.
func kvElemBytes(dtype string, dense float64) float64 {
	switch dtype {
	case KVFP8:
		return 1
	case KVInt8, KVQ8:
		// llama.cpp q8_0: 32 int8 values and one fp16 scale per block;
		// vLLM's int8 per-token-head scales are as small.
		return 34.0 / 32
	case KVQ4:
		return 18.0 / 32
	case KVFP16:
		return 2
	}
	if dense > 0 {
		return dense
	}
	return 2
}

// kvSpec is one kind of cache layer on one GPU, as vLLM's KVCacheSpec
// describes it (docs/vllm-kv.md §3): attention layers keep tokenBytes per
// token (per layer, this GPU's KV heads; MLA's latent in full on every
// rank), sliding and chunked layers at most a window of tokens, linear
// (state-space) layers a fixed stateBytes per sequence.
type kvSpec struct {
	kind       arch.LayerKind
	layers     int
	tokenBytes float64
	stateBytes float64
	window     int
}

// kvSpecs lists the cache layers of one GPU of a deployment with tensor
// parallelism tp at elem bytes per element, for a pipeline stage holding
// layers of the model's layers (each kind in proportion). vLLM gives every
// rank max(1, kv_heads/tp) KV heads.
func kvSpecs(m arch.Model, tp, layers int, elem float64) []kvSpec {
	var out []kvSpec
	frac := float64(layers) / float64(max(1, m.DecoderLayers()))
	for _, g := range m.AttentionGroups() {
		s := kvSpec{kind: g.Kind, layers: int(math.Round(float64(g.Layers) * frac)), window: g.Window}
		switch g.Kind {
		case arch.KindMLA:
			// The latent, and a sparse-attention indexer's FP8 keys
			// (docs/vllm-kv.md §9).
			s.tokenBytes = float64(g.LatentDim)*elem + float64(g.IndexBytes)
		case arch.KindLinear:
			s.stateBytes = float64(g.StateBytes) / float64(tp)
		default:
			heads := max(1, g.KVHeads/tp)
			s.tokenBytes = float64(heads*(g.HeadDim+g.VHeadDim)) * elem
		}
		if s.layers > 0 {
			out = append(out, s)
		}
	}
	return out
}

// kvLayout is how the engine lays its specs out in blocks.
type kvLayout struct {
	specs []kvSpec
	// block is the tokens per block of the attention specs (after vLLM
	// raises it to cover a state page); page the bytes of one block: of
	// every layer together in the uniform case, of one layer (the unified
	// page size of every group) for a hybrid model.
	block int
	page  float64
	// groups is vLLM's KV cache groups (hybrid manager): for each spec
	// how many groups of groupSize layers it fills. A single group of
	// layers is the plain case.
	groups    []int
	groupSize int
	// uniform is the single-kind case: one group, all layers together.
	uniform bool
	// mnbt is max_num_batched_tokens (sliding windows keep window−1 +
	// mnbt tokens).
	mnbt int
}

// stateAlignment is the token multiple vLLM aligns a hybrid model's
// raised attention block size to (the attention kernels' block
// alignment, docs/vllm-kv.md §5).
const stateAlignment = 16

// newLayout applies vLLM V1's grouping (get_kv_cache_groups,
// docs/vllm-kv.md §3): one group when all layers are of one kind; for a
// hybrid model page sizes are unified (the attention block raised until a
// page covers a state page) and layers are split by kind into groups of
// equal size: the fewest layers of any kind, or the most when the most are
// under 1.5× the fewest.
func newLayout(specs []kvSpec, block, mnbt int) kvLayout {
	l := kvLayout{specs: specs, block: block, mnbt: mnbt}
	oneKind := true
	var maxToken, maxState float64
	for _, s := range specs {
		oneKind = oneKind && s.kind == specs[0].kind
		maxToken = math.Max(maxToken, s.tokenBytes)
		maxState = math.Max(maxState, s.stateBytes)
	}
	if oneKind && maxState == 0 {
		l.uniform = true
		for _, s := range specs {
			l.page += float64(block) * s.tokenBytes * float64(s.layers)
		}
		l.groups = []int{1}
		return l
	}
	if maxState > 0 && maxToken > 0 {
		l.block = stateAlignment * int(math.Ceil(maxState/(stateAlignment*maxToken)))
		l.block = max(l.block, block)
	}
	l.page = math.Max(float64(l.block)*maxToken, maxState)
	lo, hi := math.MaxInt, 0
	for _, s := range specs {
		lo, hi = min(lo, s.layers), max(hi, s.layers)
	}
	l.groupSize = lo
	if float64(hi) < 1.5*float64(lo) {
		l.groupSize = hi
	}
	l.groups = make([]int, len(specs))
	for i, s := range specs {
		l.groups[i] = ceilDiv(s.layers, l.groupSize)
	}
	return l
}

// blocksPerRequest is the blocks one request of mml tokens takes in a
// layer of spec s (max_memory_usage_bytes / page size).
func (l kvLayout) blocksPerRequest(s kvSpec, mml int) int {
	b := l.specBlock(s)
	switch s.kind {
	case arch.KindLinear:
		return 1
	case arch.KindSliding:
		if s.window > 0 {
			return ceilDiv(min(s.window-1+l.mnbt, mml), b) + 1
		}
	case arch.KindChunked:
		if s.window > 0 {
			return ceilDiv(min(s.window+l.mnbt, mml), b)
		}
	}
	return ceilDiv(mml, b)
}

// specBlock is the tokens per block of a spec: attention specs whose
// token is smaller than the unified page's get proportionally more tokens
// per block (unify_kv_cache_spec_page_size).
func (l kvLayout) specBlock(s kvSpec) int {
	if l.uniform || s.tokenBytes <= 0 {
		return l.block
	}
	return max(l.block, int(l.page/s.tokenBytes))
}

// numBlocks is the blocks available bytes hold (get_num_blocks).
func (l kvLayout) numBlocks(available float64) int64 {
	if available <= 0 || l.page <= 0 {
		return 0
	}
	if l.uniform {
		return int64(available / l.page)
	}
	return int64(available / (l.page * float64(l.groupSize)))
}

// tokens is "GPU KV cache size": blocks per group times the smallest
// block size (_report_kv_cache_config).
func (l kvLayout) tokens(blocks int64) int64 {
	if l.uniform {
		return blocks * int64(l.block)
	}
	minBlock := math.MaxInt
	for _, s := range l.specs {
		if s.kind != arch.KindLinear {
			minBlock = min(minBlock, l.specBlock(s))
		}
	}
	if minBlock == math.MaxInt {
		minBlock = l.block
	}
	groups := 0
	for _, g := range l.groups {
		groups += g
	}
	return blocks / int64(max(1, groups)) * int64(minBlock)
}

// concurrency is "Maximum concurrency for mml tokens per request": the
// blocks over what one request takes in every group
// (get_max_concurrency_for_kv_cache_config).
func (l kvLayout) concurrency(blocks int64, mml int) float64 {
	var per int
	if l.uniform {
		per = l.blocksPerRequest(l.specs[0], mml)
	} else {
		for i, s := range l.specs {
			per += l.groups[i] * l.blocksPerRequest(s, mml)
		}
	}
	if per <= 0 {
		return 0
	}
	return float64(blocks) / float64(per)
}

// neededBytes is the cache one request of mml tokens needs on this GPU
// (_check_enough_kv_cache_memory: every layer's max_memory_usage_bytes).
func (l kvLayout) neededBytes(mml int) float64 {
	if l.uniform {
		return float64(l.blocksPerRequest(l.specs[0], mml)) * l.page
	}
	var n float64
	for _, s := range l.specs {
		n += float64(s.layers*l.blocksPerRequest(s, mml)) * l.page
	}
	return n
}

// maxLenThatFits is the longest request the available bytes hold
// (_estimate_max_model_len_from_groups: a binary search), at most upTo;
// 0 when not even one block fits.
func (l kvLayout) maxLenThatFits(available float64, upTo int) int {
	if available <= 0 || l.neededBytes(1) > available {
		return 0
	}
	lo, hi := 1, max(1, upTo)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if l.neededBytes(mid) <= available {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// bytesPerToken is the cache one more token adds on this GPU across its
// attention layers (linear layers add nothing).
func bytesPerToken(specs []kvSpec) float64 {
	var n float64
	for _, s := range specs {
		n += float64(s.layers) * s.tokenBytes
	}
	return n
}

// cacheBytes is the cache n sequences of seq tokens hold on this GPU,
// windows capped, states included (the memory of the load, not the pool).
func cacheBytes(specs []kvSpec, seq, n int) float64 {
	var b float64
	for _, s := range specs {
		per := s.stateBytes
		if s.kind != arch.KindLinear {
			t := seq
			if (s.kind == arch.KindSliding || s.kind == arch.KindChunked) && s.window > 0 {
				t = min(t, s.window)
			}
			per = float64(t) * s.tokenBytes
		}
		b += float64(s.layers) * per * float64(n)
	}
	return b
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}
