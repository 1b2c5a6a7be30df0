package hfconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
)

// readQuant reads quantization_config into bytes per parameter per tensor
// group (docs/architectures.md §14; transformers quantizers/auto.py
// dispatches on quant_method the same way). An unknown method is noted and
// the weights are counted at the compute dtype.
func (r *reader) readQuant(q *config, m arch.Model) *arch.Quantization {
	// A switch, not a table of funcs: a call through a func value would
	// move the config to the heap on every read.
	var out *arch.Quantization
	switch method := quantMethod(q); method {
	case "fp8", "fbgemm_fp8":
		out = readFP8Quant(q, method)
	case "mxfp4":
		out = readMXFP4Quant(method)
	case "gptq", "awq", "autoround", "gptqmodel":
		out = readGPTQQuant(q, method)
	case "bitsandbytes", "bitsandbytes_4bit", "bitsandbytes_8bit":
		out = readBitsAndBytesQuant(q, method)
	case "compressed-tensors", "compressed_tensors":
		out = r.readCompressedQuant(q, m)
	case "modelopt":
		out = r.readModelOptQuant(q, m, method)
	case "eetq":
		out = readEETQQuant(method)
	case "exl2", "exl3":
		out = readExLlamaQuant(q, method)
	case "hqq":
		out = readHQQQuant(q, method)
	case "":
		r.note("quantization_config without quant_method: weights counted at 16-bit")
		return nil
	default:
		r.note("quantization_config quant_method %q: not a format vrambot sizes, weights counted at 16-bit", showValue(method))
		return nil
	}
	if out == nil {
		return nil
	}
	r.excludeGroups(q, m, out)
	return out
}

// quantMethod is quant_method, lower-cased, or the method a file without
// the key is written by.
func quantMethod(q *config) string {
	method := strings.ToLower(q.optString("", "quant_method"))
	if method == "" {
		// ModelOpt and llm-compressor files without the key.
		switch {
		case q.has("quant_algo"):
			method = "modelopt"
		case q.has("config_groups"):
			method = "compressed-tensors"
		}
	}
	return method
}

// readFP8Quant: FP8 e4m3 weights, with a float32 scale per block when
// weight_block_size gives one.
func readFP8Quant(q *config, method string) *arch.Quantization {
	b, desc := arch.FP8Bytes, "FP8 e4m3 weights with per-tensor or per-channel scales"
	if blk := q.ints("weight_block_size"); len(blk) == 2 && blk[0] > 0 && blk[1] > 0 {
		b = 1 + 4/float64(blk[0]*blk[1])
		desc = fmt.Sprintf("FP8 e4m3 weights with a float32 scale per %d×%d block", blk[0], blk[1])
	}
	out := arch.NewQuantization("fp8", method, b, arch.LinearGroups)
	out.Bits, out.Description = 8, desc
	return out
}

// readMXFP4Quant: MXFP4 experts.
func readMXFP4Quant(method string) *arch.Quantization {
	// transformers converts only the experts (integrations/mxfp4.py).
	out := arch.NewQuantization("mxfp4", method, arch.MXFP4Bytes, []arch.TensorGroup{arch.TensorExperts, arch.TensorMTP})
	out.Bits, out.GroupSize, out.Description = 4, 32, "MXFP4 experts (E2M1 with an E8M0 scale per 32: 4.25 bits); attention, router, embeddings and head in 16-bit"
	return out
}

// readGPTQQuant: GPTQ, AWQ and AutoRound group-wise integer weights.
func readGPTQQuant(q *config, method string) *arch.Quantization {
	bits := q.optInt(4, "bits", "w_bit")
	group := defaultGroupSize
	if g := q.optFloat(defaultGroupSize, "group_size", "q_group_size"); g <= 0 {
		group = 0 // -1: one scale per output channel
	} else {
		group = q.optInt(defaultGroupSize, "group_size", "q_group_size")
	}
	out := arch.NewQuantization(fmt.Sprintf("int%d", bits), method, arch.GroupwiseIntBytes(bits, group, true), arch.LinearGroups)
	out.Bits, out.GroupSize = bits, group
	out.Description = fmt.Sprintf("%s %d-bit linear-layer weights, %s", strings.ToUpper(method), bits, groupLabel(group))
	if q.optBool(false, "lm_head") {
		out.BytesPerParam[arch.TensorLMHead] = out.BytesPerParam[arch.TensorAttention]
	}
	return out
}

// readBitsAndBytesQuant: bitsandbytes NF4/FP4 or LLM.int8 weights.
func readBitsAndBytesQuant(q *config, method string) *arch.Quantization {
	if !q.optBool(false, "load_in_4bit", "_load_in_4bit") && method != "bitsandbytes_4bit" {
		out := arch.NewQuantization("int8", "bitsandbytes", arch.Int8Bytes, arch.LinearGroups)
		out.Bits, out.Description = 8, "bitsandbytes LLM.int8 linear-layer weights"
		return out
	}
	b, dq := arch.NF4Bytes, ""
	if q.optBool(false, "bnb_4bit_use_double_quant") {
		b, dq = arch.NF4DoubleQuantBytes, " with double quantisation"
	}
	kind := strings.ToUpper(q.optString("nf4", "bnb_4bit_quant_type"))
	out := arch.NewQuantization("nf4", "bitsandbytes", b, arch.LinearGroups)
	out.Bits, out.GroupSize, out.Description = 4, 64, fmt.Sprintf("bitsandbytes %s linear-layer weights%s", kind, dq)
	return out
}

// readCompressedQuant: llm-compressor's compressed-tensors, group by group
// where the groups differ, else its first Linear group.
func (r *reader) readCompressedQuant(q *config, m arch.Model) *arch.Quantization {
	if out := r.readCompressedGroups(q, m); out != nil {
		return out
	}
	return r.readCompressedTensors(q)
}

// readModelOptQuant: NVIDIA ModelOpt by quant_algo, or the config_groups
// of a file that names no algorithm.
func (r *reader) readModelOptQuant(q *config, m arch.Model, method string) *arch.Quantization {
	if q.sub("config_groups") != nil && !q.has("quant_algo") {
		return r.readCompressedQuant(q, m)
	}
	switch algo := strings.ToUpper(q.optString("", "quant_algo")); {
	case algo == "MIXED_PRECISION":
		// Per-module algorithms (quantized_layers), else the
		// config_groups NVIDIA's config.json writes beside them.
		out := r.readModelOptMixed(q, m)
		if out == nil {
			out = r.readCompressedGroups(q, m)
		}
		if out == nil {
			r.note("quantization_config quant_method modelopt with quant_algo MIXED_PRECISION names no module vrambot can place: weights counted at 16-bit")
		}
		return out
	case strings.Contains(algo, "NVFP4"):
		out := arch.NewQuantization("nvfp4", method, arch.NVFP4Bytes, arch.LinearGroups)
		out.Bits, out.GroupSize, out.Description = 4, 16, "NVIDIA ModelOpt NVFP4 linear-layer weights (4.5 bits)"
		return out
	case strings.Contains(algo, "FP8"):
		out := arch.NewQuantization("fp8", method, arch.FP8Bytes, arch.LinearGroups)
		out.Bits, out.Description = 8, "NVIDIA ModelOpt FP8 linear-layer weights"
		return out
	default:
		r.note("quantization_config quant_method modelopt with quant_algo %q: not a format vrambot sizes, weights counted at 16-bit", showValue(algo))
		return nil
	}
}

// readEETQQuant: EETQ int8 weights.
func readEETQQuant(method string) *arch.Quantization {
	out := arch.NewQuantization("int8", method, arch.Int8Bytes, arch.LinearGroups)
	out.Bits, out.Description = 8, "EETQ int8 linear-layer weights"
	return out
}

// readExLlamaQuant: ExLlamaV2/V3 at their mean bits per weight.
func readExLlamaQuant(q *config, method string) *arch.Quantization {
	bits := q.optFloat(4, "bits")
	out := arch.NewQuantization(method, method, bits/8, arch.LinearGroups)
	out.Description = fmt.Sprintf("ExLlama %s at %.2f bits per weight", method, bits)
	return out
}

// readHQQQuant: HQQ group-wise integer weights.
func readHQQQuant(q *config, method string) *arch.Quantization {
	bits := q.optInt(4, "nbits")
	group := q.optInt(64, "group_size")
	out := arch.NewQuantization(fmt.Sprintf("int%d", bits), method, arch.GroupwiseIntBytes(bits, group, true), arch.LinearGroups)
	out.Bits, out.GroupSize, out.Description = bits, group, fmt.Sprintf("HQQ %d-bit weights, %s", bits, groupLabel(group))
	return out
}

// excludeGroups keeps the tensor groups the config excludes from
// quantisation in 16-bit, marks the storage as the checkpoint's own and
// notes it.
func (r *reader) excludeGroups(q *config, m arch.Model, out *arch.Quantization) {
	excluded := excludedGroups(q, m.NumLayers)
	for _, g := range excluded {
		out.BytesPerParam[g] = 0
	}
	out.Source = arch.SourceCheckpointConfig
	msg := "pre-quantised checkpoint: " + out.Description
	if len(excluded) > 0 {
		names := make([]string, len(excluded))
		for i, g := range excluded {
			names[i] = g.String()
		}
		msg += " (kept in 16-bit: " + strings.Join(names, ", ") + ")"
	}
	r.note("%s", msg)
}

// defaultGroupSize is GPTQ's and AWQ's default group.
const defaultGroupSize = 128

func groupLabel(group int) string {
	if group <= 0 {
		return "one scale per output channel"
	}
	return fmt.Sprintf("group size %d", group)
}

// readCompressedTensors reads llm-compressor's config_groups: the weight
// bits, type and grouping of the first group that targets Linear layers
// (docs/architectures.md §14).
func (r *reader) readCompressedTensors(q *config) *arch.Quantization {
	groups := q.sub("config_groups")
	if groups == nil {
		r.note("compressed-tensors quantization_config without config_groups: weights counted at 16-bit")
		return nil
	}
	// The group that targets every Linear layer, or else the one naming
	// the most modules (mixed-precision files give each its own group).
	var g *config
	most := -1
	for _, name := range sortedKeys(groups.raw) {
		cand := groups.sub(name)
		if cand == nil || cand.sub("weights") == nil {
			continue
		}
		targets := cand.strings("targets")
		n := len(targets)
		if slices.Contains(targets, "Linear") || targets == nil {
			n = 1 << 30
		}
		if n > most {
			g, most = cand, n
		}
	}
	if len(groups.raw) > 1 && g != nil {
		r.note("the checkpoint mixes precisions (%d config_groups): sized by its widest group", len(groups.raw))
	}
	if g == nil {
		r.note("compressed-tensors quantization_config without weight settings: weights counted at 16-bit")
		return nil
	}
	w := g.sub("weights")
	bits, ok := weightBits(w)
	if !ok {
		r.note("compressed-tensors num_bits %d is no weight width: weights counted at 16-bit", bits)
		return nil
	}
	typ := strings.ToLower(w.optString("int", "type"))
	group := w.count(0, "group_size")
	strategy := strings.ToLower(w.optString("", "strategy"))
	format := strings.ToLower(q.optString("", "format"))
	var out *arch.Quantization
	switch {
	case typ == "float" && bits == 4 && (group == 32 || strings.Contains(strings.ToLower(g.optString(format, "format")), "mxfp4")):
		out = arch.NewQuantization("mxfp4", "compressed-tensors", arch.MXFP4Bytes, arch.LinearGroups)
		out.Description = "compressed-tensors MXFP4 linear-layer weights (4.25 bits)"
	case typ == "float" && bits == 4:
		out = arch.NewQuantization("nvfp4", "compressed-tensors", arch.NVFP4Bytes, arch.LinearGroups)
		out.Description = "compressed-tensors NVFP4 linear-layer weights (4.5 bits)"
	case typ == "float" && bits == 8:
		b := arch.FP8Bytes
		if blk := w.ints("block_structure"); strategy == "block" && len(blk) == 2 && blk[0]*blk[1] > 0 {
			b = 1 + 4/float64(blk[0]*blk[1])
		}
		out = arch.NewQuantization("fp8", "compressed-tensors", b, arch.LinearGroups)
		out.Description = "compressed-tensors FP8 linear-layer weights"
	default:
		if strategy != "group" {
			group = 0
		}
		out = arch.NewQuantization(fmt.Sprintf("int%d", bits), "compressed-tensors", arch.GroupwiseIntBytes(bits, group, !w.optBool(true, "symmetric")), arch.LinearGroups)
		out.Description = fmt.Sprintf("compressed-tensors %d-bit integer linear-layer weights (%s), %s", bits, firstNonEmpty(format, "pack-quantized"), groupLabel(group))
	}
	out.Bits, out.GroupSize = bits, group
	if q.has("kv_cache_scheme") {
		r.note("the checkpoint carries an FP8 KV-cache calibration (kv_cache_scheme): kv=fp8 suits it")
	}
	return out
}

// layerIndex finds a concrete layer number in a module pattern
// ("model.layers.3.self_attn*" → "3"): the first "layers." followed by
// digits and a "." or "*". It is called for every module of a per-module
// list (thousands in ModelOpt's), so it scans rather than runs a regexp.
func layerIndex(p string) (string, bool) {
	for rest := p; ; {
		i := strings.Index(rest, "layers.")
		if i < 0 {
			return "", false
		}
		rest = rest[i+len("layers."):]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > 0 && n < len(rest) && (rest[n] == '.' || rest[n] == '*') {
			return rest[:n], true
		}
	}
}

// excludedGroups maps the modules a checkpoint leaves unquantised
// (modules_to_not_convert, ignore, llm_int8_skip_modules,
// exclude_modules) onto tensor groups. A pattern for one layer counts
// towards its group, which is kept in 16-bit when at least half of the
// layers are listed (ModelOpt files list self_attn layer by layer).
func excludedGroups(q *config, layers int) []arch.TensorGroup {
	var patterns []string
	for _, k := range []string{"modules_to_not_convert", "ignore", "llm_int8_skip_modules", "exclude_modules", "ignored_layers"} {
		patterns = append(patterns, q.strings(k)...)
	}
	seen := map[arch.TensorGroup]bool{}
	perLayer := map[arch.TensorGroup]map[string]bool{}
	var out []arch.TensorGroup
	add := func(g arch.TensorGroup) {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	for _, p := range patterns {
		p = strings.ToLower(p)
		g, ok := patternGroup(p)
		if !ok {
			continue
		}
		if layer, ok := layerIndex(p); ok {
			if perLayer[g] == nil {
				perLayer[g] = map[string]bool{}
			}
			perLayer[g][layer] = true
			if 2*len(perLayer[g]) >= max(1, layers) {
				add(g)
			}
			continue
		}
		add(g)
	}
	return out
}

// patternGroup is the tensor group a module pattern names.
func patternGroup(p string) (arch.TensorGroup, bool) {
	switch {
	case strings.Contains(p, "norm"):
		return 0, false // norms (q_norm, input_layernorm) are never quantised
	case strings.Contains(p, "embed_vision") || strings.Contains(p, "vis") || strings.Contains(p, "multi_modal") || strings.Contains(p, "mm_projector"):
		return arch.TensorVision, true
	case strings.Contains(p, "embed"):
		return arch.TensorEmbedding, true
	case strings.Contains(p, "lm_head"):
		return arch.TensorLMHead, true
	case strings.Contains(p, "mtp"):
		return arch.TensorMTP, true
	case strings.Contains(p, "shared_expert"):
		return arch.TensorSharedExperts, true
	case strings.Contains(p, "router") || p == "gate" || strings.HasSuffix(p, ".gate") || strings.Contains(p, "score_correction"):
		return arch.TensorRouter, true
	case strings.Contains(p, "attn") || strings.Contains(p, "attention"):
		return arch.TensorAttention, true
	case strings.Contains(p, "expert"):
		return arch.TensorExperts, true
	}
	return 0, false
}
