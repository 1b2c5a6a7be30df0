package arch

// Quantization is how a pre-quantised checkpoint stores its weights: bytes
// per parameter for each tensor group it quantises (scales and zero points
// included); groups left at 0 are stored at the compute dtype, which the
// workload's precision sets. Bytes per weight of each format:
// docs/architectures.md §14.
type Quantization struct {
	// Method is the storage: fp8, mxfp4, nvfp4, int4, int8, nf4, or a GGUF
	// type (q4_k_m).
	Method string `json:"method"`
	// Format is what the checkpoint calls it: the quant_method (fp8, gptq,
	// awq, compressed-tensors, bitsandbytes, modelopt) or "gguf".
	Format    string `json:"format,omitempty"`
	Bits      int    `json:"bits,omitempty"`
	GroupSize int    `json:"group_size,omitempty"`
	// BytesPerParam is per tensor group; 0 means not quantised.
	BytesPerParam ByGroup[float64] `json:"bytes_per_param"`
	// Source says where this came from: "config.json quantization_config",
	// "precision=awq", "the repo name".
	Source string `json:"source,omitempty"`
	// Description is a one-line reading for the reply, e.g. "FP8 e4m3
	// weights with a float32 scale per 128×128 block".
	Description string `json:"description,omitempty"`
}

// SourceCheckpointConfig is Quantization.Source for a format read from the
// checkpoint's own config.json, whose widths are then the checkpoint's (a
// quantised release may pad them).
const SourceCheckpointConfig = "config.json quantization_config"

// LinearGroups are the tensor groups weight-only quantisation methods
// (GPTQ, AWQ, FP8, bitsandbytes, compressed-tensors) convert: the linear
// layers inside the blocks. Embeddings, the output head, norms and routers
// stay at the compute dtype unless a format says otherwise.
var LinearGroups = []TensorGroup{TensorAttention, TensorMLP, TensorExperts, TensorSharedExperts, TensorMTP}

// Bytes per weight of the quantised formats (docs/architectures.md §14).
const (
	// FP8BlockBytes: one e4m3 byte plus a float32 scale per 128×128 block
	// (DeepSeek-V3, Qwen3-FP8: weight_block_size [128, 128]).
	FP8BlockBytes = 1 + 4.0/(128*128)
	// FP8Bytes: per-tensor or per-channel FP8 scales are negligible.
	FP8Bytes = 1.0
	// MXFP4Bytes: 32 E2M1 values in 16 bytes plus one E8M0 scale byte
	// (gpt-oss experts): 4.25 bits.
	MXFP4Bytes = 17.0 / 32
	// NVFP4Bytes: E2M1 plus an FP8 scale per 16 values (the float32 global
	// scale per tensor is negligible): 4.5 bits.
	NVFP4Bytes = 0.5 + 1.0/16
	// NF4Bytes: bitsandbytes 4-bit with one float32 absmax per 64 weights;
	// NF4DoubleQuantBytes with double quantisation (8-bit absmax plus a
	// float32 per 256 of them).
	NF4Bytes            = 0.5 + 4.0/64
	NF4DoubleQuantBytes = 0.5 + 1.0/64 + 4.0/(64*256)
	// Int8Bytes: LLM.int8 keeps a float32 scale per row, negligible.
	Int8Bytes = 1.0
)

// GroupwiseIntBytes is a GPTQ/AWQ/compressed-tensors integer weight: bits
// per weight plus, per group of groupSize weights, a 16-bit scale and (when
// asymmetric) a packed zero point of the same bits. groupSize ≤ 0 means one
// group per output row (per channel), whose overhead is negligible.
func GroupwiseIntBytes(bits, groupSize int, zeroPoint bool) float64 {
	b := float64(bits) / 8
	if groupSize > 0 {
		over := 2.0
		if zeroPoint {
			over += float64(bits) / 8
		}
		b += over / float64(groupSize)
	}
	return b
}

// NewQuantization is a scheme that stores the given groups at bytes per
// parameter.
func NewQuantization(method, format string, bytes float64, groups []TensorGroup) *Quantization {
	q := &Quantization{Method: method, Format: format}
	for _, g := range groups {
		q.BytesPerParam[g] = bytes
	}
	return q
}

// Quantises reports whether the scheme quantises group g.
func (q *Quantization) Quantises(g TensorGroup) bool { return q != nil && q.BytesPerParam[g] > 0 }

// WeightBytesByGroup is the weight bytes of each tensor group: the
// checkpoint's quantised bytes per parameter where it quantises the group,
// dense bytes per parameter (the compute dtype: 2 for bf16) elsewhere. The
// MTP group is included; engines that do not load it skip TensorMTP.
func (m Model) WeightBytesByGroup(dense float64) ByGroup[float64] {
	p := m.ParamsByGroup()
	s := m.paramScale()
	var out ByGroup[float64]
	for g, n := range p {
		b := dense
		if m.Quant.Quantises(TensorGroup(g)) {
			b = m.Quant.BytesPerParam[g]
		}
		out[g] = float64(n) * s * b
	}
	return out
}
