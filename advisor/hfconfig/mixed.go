package hfconfig

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/internal/errs"
)

// Checkpoints that quantise their modules differently (docs/architectures.md
// §14): ModelOpt's MIXED_PRECISION lists every quantised module with its
// own algorithm (quantized_layers: FP8 or MXFP8 attention, NVFP4 MLPs and
// experts), llm-compressor writes one config_group per scheme with the
// modules it targets, and DeepSeek-V4 stores its routed experts in FP4
// beside FP8 blocks (expert_dtype). Each is read into bytes per parameter
// per tensor group, weighting a group's modules by how many of its layers
// they cover.

// modelOptAlgoBytes is the bytes per weight of one ModelOpt quant_algo
// (modelopt/torch/export: the names hf_quant_config.json writes).
func modelOptAlgoBytes(algo string, group int) (float64, bool) {
	a := strings.ToUpper(algo)
	switch {
	case strings.Contains(a, "NVFP4"):
		return arch.NVFP4Bytes, true
	case strings.Contains(a, "MXFP4"):
		return arch.MXFP4Bytes, true
	case strings.Contains(a, "MXFP8"):
		// E4M3 with an E8M0 scale per 32 values.
		return 1 + 1.0/32, true
	case strings.Contains(a, "FP8_PB") || strings.Contains(a, "FP8_BLOCK"):
		return arch.FP8BlockBytes, true
	case strings.Contains(a, "FP8"):
		return arch.FP8Bytes, true
	case strings.Contains(a, "INT4") || strings.Contains(a, "W4A8_AWQ") || strings.Contains(a, "W4A16_AWQ"):
		if group <= 0 {
			group = defaultGroupSize
		}
		return arch.GroupwiseIntBytes(4, group, false), true
	case strings.Contains(a, "INT8") || strings.Contains(a, "W8A8"):
		return arch.Int8Bytes, true
	}
	return 0, false
}

// moduleGroup is the tensor group a quantised module's name belongs to:
// the excluded-module patterns' reading plus the dense MLP, which a
// quantised-module list names and an exclusion list never does.
func moduleGroup(name string) (arch.TensorGroup, bool) {
	p := strings.ToLower(name)
	if strings.Contains(p, "expert") || strings.Contains(p, "attn") || strings.Contains(p, "attention") {
		return patternGroup(p)
	}
	if strings.Contains(p, ".mlp.") || strings.Contains(p, "feed_forward") || strings.Contains(p, ".ffn.") || strings.HasSuffix(p, ".mlp") {
		if g, ok := patternGroup(p); ok && g != arch.TensorAttention {
			return g, true
		}
		return arch.TensorMLP, true
	}
	return patternGroup(p)
}

// groupTally accumulates, per tensor group, the bytes each quantised
// module stores and the layers the modules cover.
type groupTally struct {
	bytes  [arch.NumTensorGroups]map[float64]int
	layers [arch.NumTensorGroups]map[string]bool
	algos  [arch.NumTensorGroups][]string
}

func (t *groupTally) add(g arch.TensorGroup, b float64, name, algo string) {
	if t.bytes[g] == nil {
		t.bytes[g], t.layers[g] = map[float64]int{}, map[string]bool{}
	}
	t.bytes[g][b]++
	if layer, ok := layerIndex(strings.ToLower(name) + "."); ok {
		t.layers[g][layer] = true
	}
	if !slices.Contains(t.algos[g], algo) {
		t.algos[g] = append(t.algos[g], algo)
	}
}

// quantization is the tally as a scheme: each group at the count-weighted
// mean of its modules' bytes over the layers listed, 16-bit over the
// layers of that group the list leaves out.
func (t *groupTally) quantization(m arch.Model, format string) *arch.Quantization {
	q := &arch.Quantization{Method: "mixed", Format: format}
	have := tensorGroupLayers(m)
	var parts []string
	for g := range arch.NumTensorGroups {
		if len(t.bytes[g]) == 0 {
			continue
		}
		var sum float64
		var n int
		for b, c := range t.bytes[g] {
			sum += b * float64(c)
			n += c
		}
		b := sum / float64(n)
		if layers := len(t.layers[g]); layers > 0 && have[g] > layers {
			cover := float64(layers) / float64(have[g])
			b = cover*b + (1-cover)*2
		}
		q.BytesPerParam[g] = b
		parts = append(parts, fmt.Sprintf("%s %s", arch.TensorGroup(g), strings.Join(t.algos[g], "+")))
	}
	if len(parts) == 0 {
		return nil
	}
	q.Description = "mixed precision: " + strings.Join(parts, ", ")
	return q
}

// tensorGroupLayers is how many decoder layers hold each tensor group (the MTP
// module's copies aside).
func tensorGroupLayers(m arch.Model) [arch.NumTensorGroups]int {
	var n [arch.NumTensorGroups]int
	for _, g := range m.Layers() {
		if g.Attention.Kind != arch.KindNone {
			n[arch.TensorAttention] += g.Layers
		}
		f := g.FFN
		if f.Intermediate > 0 {
			n[arch.TensorMLP] += g.Layers
		}
		if f.IsMoE() {
			n[arch.TensorExperts] += g.Layers
			n[arch.TensorRouter] += g.Layers
		}
		if f.SharedIntermediate > 0 {
			n[arch.TensorSharedExperts] += g.Layers
		}
	}
	return n
}

// readModelOptMixed reads ModelOpt's MIXED_PRECISION quantized_layers
// (module name → {quant_algo, group_size}), as hf_quant_config.json and
// the config.json of NVIDIA's releases write it; nil when the list is
// absent or names no module vrambot can place.
func (r *reader) readModelOptMixed(q *config, m arch.Model) *arch.Quantization {
	layers := q.sub("quantized_layers")
	if layers == nil {
		return nil
	}
	var t groupTally
	skipped := map[string]bool{}
	for _, name := range sortedKeys(layers.raw) {
		spec := layers.sub(name)
		if spec == nil {
			continue
		}
		algo := spec.optString("", "quant_algo")
		b, ok := modelOptAlgoBytes(algo, spec.optInt(0, "group_size"))
		if !ok {
			skipped[strings.ToUpper(algo)] = true
			continue
		}
		if g, ok := moduleGroup(name); ok {
			t.add(g, b, name, strings.ToUpper(algo))
		}
	}
	for _, a := range sortedKeys(anySet(skipped)) {
		r.note("ModelOpt quant_algo %q in quantized_layers is not one vrambot sizes: those modules counted at 16-bit", showValue(a))
	}
	out := t.quantization(m, "modelopt")
	if out != nil {
		out.Description = "NVIDIA ModelOpt " + out.Description
	}
	return out
}

func anySet(s map[string]bool) map[string]any {
	out := make(map[string]any, len(s))
	for k := range s {
		out[k] = true
	}
	return out
}

// weightBits is a compressed-tensors weight scheme's num_bits (8 when
// unstated), and whether it is a width a weight can have (1 to 16 bits).
func weightBits(w *config) (int, bool) {
	bits := w.optInt(8, "num_bits")
	return bits, bits >= 1 && bits <= 16
}

// compressedGroupBytes is the bytes per weight of one compressed-tensors
// config group's weight scheme (its num_bits, type, strategy, group and
// block sizes), with its description.
func compressedGroupBytes(g *config, format string) (float64, string) {
	w := g.sub("weights")
	bits := w.optInt(8, "num_bits")
	typ := strings.ToLower(w.optString("int", "type"))
	group := w.count(0, "group_size")
	strategy := strings.ToLower(w.optString("", "strategy"))
	switch {
	case typ == "float" && bits == 4 && (group == 32 || strings.Contains(strings.ToLower(g.optString(format, "format")), "mxfp4")):
		return arch.MXFP4Bytes, "MXFP4"
	case typ == "float" && bits == 4:
		return arch.NVFP4Bytes, "NVFP4"
	case typ == "float" && bits == 8:
		if blk := w.ints("block_structure"); strategy == "block" && len(blk) == 2 && blk[0]*blk[1] > 0 {
			return 1 + 4/float64(blk[0]*blk[1]), "FP8 block"
		}
		return arch.FP8Bytes, "FP8"
	}
	if strategy != "group" {
		group = 0
	}
	return arch.GroupwiseIntBytes(bits, group, !w.optBool(true, "symmetric")), fmt.Sprintf("int%d", bits)
}

// targetPattern turns a compressed-tensors target ("re:.*mlp.*",
// "model.layers.0.mlp.down_proj", "Linear") into a module name to place.
var targetRegexp = regexp.MustCompile(`[\^$\\()\[\]|+?{}]`)

// readCompressedGroups reads a compressed-tensors quantization_config with
// several config_groups: each group's scheme for the tensor groups its
// targets name, and a group targeting "Linear" for every linear group
// the others leave; nil when no group places its targets (the caller then
// falls back to the widest group).
func (r *reader) readCompressedGroups(q *config, m arch.Model) *arch.Quantization {
	groups := q.sub("config_groups")
	if groups == nil || len(groups.raw) < 2 {
		return nil
	}
	format := strings.ToLower(q.optString("", "format"))
	var t groupTally
	var linear float64
	var linearName string
	for _, name := range sortedKeys(groups.raw) {
		g := groups.sub(name)
		if g == nil || g.sub("weights") == nil {
			continue
		}
		if _, ok := weightBits(g.sub("weights")); !ok {
			continue // no weight width: its modules stay at the compute dtype
		}
		b, desc := compressedGroupBytes(g, format)
		for _, target := range g.strings("targets") {
			if target == "Linear" {
				linear, linearName = b, desc
				continue
			}
			p := strings.TrimPrefix(target, "re:")
			p = targetRegexp.ReplaceAllString(p, "")
			if tg, ok := moduleGroup(p); ok {
				t.add(tg, b, target, desc)
			}
		}
	}
	out := t.quantization(m, "compressed-tensors")
	if out == nil && linear == 0 {
		return nil
	}
	if out == nil {
		out = &arch.Quantization{Method: "mixed", Format: "compressed-tensors", Description: "mixed precision:"}
	}
	if linear > 0 {
		for _, g := range arch.LinearGroups {
			if out.BytesPerParam[g] == 0 {
				out.BytesPerParam[g] = linear
			}
		}
		out.Description += fmt.Sprintf(" (the other linear layers %s)", linearName)
	}
	out.Description = "compressed-tensors " + out.Description
	return out
}

// expertDType applies DeepSeek-V4's expert_dtype: "fp4" stores the routed
// experts as FP4 (E2M1) with an E8M0 scale per 32 values beside the FP8
// blocks of everything else (the checkpoint's quantization_config names
// only the FP8 part; SGLang and vLLM load the experts as MXFP4).
func (r *reader) expertDType(top *config, q *arch.Quantization) *arch.Quantization {
	dt := strings.ToLower(top.optString("", "expert_dtype"))
	if dt != "fp4" && dt != "mxfp4" {
		return q
	}
	out := &arch.Quantization{Method: "mixed", Format: "fp8", Source: arch.SourceCheckpointConfig}
	if q != nil {
		c := *q
		out = &c
		out.Method = "mixed"
	}
	out.BytesPerParam[arch.TensorExperts] = arch.MXFP4Bytes
	out.Description = strings.TrimSpace(out.Description + "; routed experts FP4 with an E8M0 scale per 32 (expert_dtype fp4: 4.25 bits)")
	r.note("expert_dtype %q: the routed experts are stored in FP4 (4.25 bits with their scales)", dt)
	return out
}

// ReadQuantConfig reads a ModelOpt hf_quant_config.json ({"producer": …,
// "quantization": {"quant_algo": …, "quantized_layers": …,
// "exclude_modules": …}}) for a model read from its config.json: the
// storage it describes, with notes. It is the same reading as a
// config.json's quantization_config with quant_method modelopt.
func ReadQuantConfig(data []byte, m arch.Model) (*arch.Quantization, []string, error) {
	if len(data) > MaxConfigBytes {
		return nil, nil, errs.New(errs.Invalid, "hf_quant_config.json is %d bytes, more than any real one (at most %d)", len(data), MaxConfigBytes)
	}
	var raw map[string]any
	if err := json.Unmarshal(nonFiniteToNull(data), &raw); err != nil || raw == nil {
		return nil, nil, errs.New(errs.Invalid, "hf_quant_config.json is not a JSON object")
	}
	q, ok := raw["quantization"].(map[string]any)
	if !ok {
		return nil, nil, errs.New(errs.Invalid, "hf_quant_config.json has no \"quantization\" object")
	}
	spec := make(map[string]any, len(q)+1)
	for k, v := range q {
		spec[k] = v
	}
	spec["quant_method"] = "modelopt"
	r := &reader{}
	c := newConfig(spec, "quantization", &r.notes, &r.err)
	out := r.readQuant(c, m)
	if r.err != nil {
		return nil, nil, r.err
	}
	return out, r.notes, nil
}
