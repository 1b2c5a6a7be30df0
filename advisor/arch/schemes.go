package arch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AllGroups is every tensor group: GGUF files quantise the embeddings and
// the output head too (norms stay F32, which is negligible).
var AllGroups = []TensorGroup{TensorEmbedding, TensorLMHead, TensorAttention, TensorMLP, TensorExperts,
	TensorSharedExperts, TensorRouter, TensorVision, TensorMTP}

// ggufBitsPerWeight is the average bits per weight of each llama.cpp type
// over a whole model, as llama.cpp's tools/quantize/README.md measures them
// on meta-llama/Llama-3.1-8B (Q3_K_M from the same README's Llama 2 7B
// table); Q4_0/Q4_1/Q5_0/Q5_1 are their ggml block sizes (18, 20, 22, 24
// bytes per 32 weights). K-quant mixes give a few tensors more bits, so a
// model of another shape lands within a few percent of these.
var ggufBitsPerWeight = map[string]float64{
	"iq1_s": 2.0042, "iq1_m": 2.1460, "iq2_xxs": 2.3824, "iq2_xs": 2.5882, "iq2_s": 2.7403, "iq2_m": 2.9294,
	"iq3_xxs": 3.2548, "iq3_xs": 3.4977, "iq3_s": 3.6606, "iq3_m": 3.7628, "iq4_xs": 4.4597, "iq4_nl": 4.6818,
	"q2_k_s": 2.9697, "q2_k": 3.1593, "q3_k_s": 3.6429, "q3_k_m": 3.91, "q3_k_l": 4.2979,
	"q4_0": 4.5, "q4_1": 5.0, "q4_k_s": 4.6672, "q4_k_m": 4.8944,
	"q5_0": 5.5, "q5_1": 6.0, "q5_k_s": 5.5704, "q5_k_m": 5.7036, "q6_k": 6.5633, "q8_0": 8.5008,
}

// GGUFTypes lists the llama.cpp quantisation types Scheme knows, sorted.
func GGUFTypes() []string {
	return slices.Sorted(maps.Keys(ggufBitsPerWeight))
}

// Weight-only checkpoint formats a user can name (precision=awq); the
// group size is the one their tools default to (AutoAWQ, GPTQModel,
// llm-compressor: 128).
const defaultQuantGroup = 128

// SchemeNames are the checkpoint formats Scheme reads besides GGUF types.
var SchemeNames = []string{"fp8", "int4", "awq", "gptq", "mxfp4", "nvfp4"}

// Scheme is the storage of a checkpoint quantised with a named format, as
// a user states it (precision=awq, precision=q4_k_m): fp8 (one byte per
// weight, per-channel or 128×128-block scales), int4/awq/gptq (4-bit with a
// 16-bit scale and zero point per 128 weights), mxfp4 and nvfp4 (4-bit
// floats with shared scales) for the linear layers; GGUF types for every
// weight. For mxfp4 on a model whose checkpoint marks only its experts as
// MXFP4 (gpt-oss), the caller keeps the checkpoint's own reading.
func Scheme(name string) (*Quantization, bool) {
	name = strings.ToLower(name)
	var q *Quantization
	switch name {
	case "fp8":
		q = NewQuantization("fp8", "fp8", FP8Bytes, LinearGroups)
		q.Bits, q.Description = 8, "FP8 (e4m3) linear-layer weights"
	case "int4", "awq", "gptq":
		q = NewQuantization("int4", name, GroupwiseIntBytes(4, defaultQuantGroup, true), LinearGroups)
		q.Bits, q.GroupSize = 4, defaultQuantGroup
		q.Description = fmt.Sprintf("%s 4-bit linear-layer weights, group size %d (16-bit scale and 4-bit zero per group)", strings.ToUpper(name), defaultQuantGroup)
	case "mxfp4":
		q = NewQuantization("mxfp4", "mxfp4", MXFP4Bytes, LinearGroups)
		q.Bits, q.GroupSize, q.Description = 4, 32, "MXFP4 linear-layer weights (E2M1 with an E8M0 scale per 32: 4.25 bits)"
	case "nvfp4":
		q = NewQuantization("nvfp4", "nvfp4", NVFP4Bytes, LinearGroups)
		q.Bits, q.GroupSize, q.Description = 4, 16, "NVFP4 linear-layer weights (E2M1 with an FP8 scale per 16: 4.5 bits)"
	default:
		bpw, ok := ggufBitsPerWeight[name]
		if !ok {
			return nil, false
		}
		q = NewQuantization(name, "gguf", bpw/8, AllGroups)
		q.Description = fmt.Sprintf("GGUF %s, %.2f bits per weight on average (llama.cpp's measure on Llama-3.1-8B)", strings.ToUpper(name), bpw)
	}
	return q, true
}
