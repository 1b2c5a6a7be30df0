package hfconfig

import "github.com/vrambot/vrambot/advisor/arch"

// visionParams counts the vision tower and its projector from
// vision_config (docs/architectures.md §4, §5, §8): exactly for the towers
// vrambot knows (SigLIP under Gemma 3, the Qwen2.5-VL and Qwen3-VL/Qwen3.5
// ViTs, Llama 4's, Pixtral under Mistral 3), as a generic ViT otherwise
// (noted).
func (r *reader) visionParams(top, v *config, m arch.Model) int64 {
	topType := top.optString("", "model_type")
	vt := v.optString("", "model_type")
	text := int64(m.HiddenSize)
	var n int64
	switch {
	case vt == "siglip_vision_model" || topType == "gemma3" || topType == "paligemma":
		v.defaults = siglipDefaults
		n = siglipParams(v)
		if topType == "gemma3" {
			// Gemma3MultiModalProjector: mm_input_projection_weight and mm_soft_emb_norm.
			h := int64(v.int("hidden_size"))
			n += h*text + h
		}
	case topType == "qwen2_5_vl" || vt == "qwen2_5_vl":
		n = qwen25ViTParams(v)
	case v.has("out_hidden_size") && v.has("depth"):
		n = qwen3ViTParams(v)
	case vt == "llama4_vision_model":
		n = llama4VisionParams(v, text)
	case vt == "pixtral":
		n = pixtralParams(v) + mistral3ProjectorParams(top, v, text)
	default:
		n = genericViTParams(v, text)
		r.note("vision tower (vision_config model_type %q) estimated as a generic ViT with a linear projector: %.2fB parameters", vt, float64(n)/1e9)
		return n
	}
	r.note("vision tower and projector: %.2fB parameters (weights only, no KV cache)", float64(n)/1e9)
	return n
}

// siglipDefaults are SiglipVisionConfig's (transformers
// models/siglip/configuration_siglip.py).
var siglipDefaults = map[string]any{"hidden_size": 768.0, "intermediate_size": 3072.0, "num_hidden_layers": 12.0,
	"num_channels": 3.0, "image_size": 224.0, "patch_size": 16.0}

// vit is the shape keys SigLIP/CLIP-style towers share.
type vit struct{ h, iv, layers, patch, patches, channels int64 }

func readViT(v *config) vit {
	t := vit{
		h: int64(v.int("hidden_size")), iv: int64(v.int("intermediate_size")), layers: int64(v.int("num_hidden_layers")),
		patch: int64(v.int("patch_size")), channels: int64(v.optInt(3, "num_channels")),
	}
	side := int64(v.int("image_size")) / max(t.patch, 1)
	t.patches = side * side
	return t
}

// block is one pre-LN encoder layer with biases: q, k, v, o, a two-layer
// MLP, two LayerNorms.
func (t vit) block() int64 {
	return 4*(t.h*t.h+t.h) + (t.h*t.iv + t.iv) + (t.iv*t.h + t.h) + 4*t.h
}

// siglipParams: patch conv with bias, learned positions, pre-LN blocks
// with biases, a post LayerNorm (docs/architectures.md §5).
func siglipParams(v *config) int64 {
	t := readViT(v)
	return t.channels*t.patch*t.patch*t.h + t.h + t.patches*t.h + t.layers*t.block() + 2*t.h
}

// qwen25ViTParams: Conv3d patches without bias, RMSNorm blocks with a
// fused qkv and a SwiGLU MLP with biases, the 2×2 patch merger
// (docs/architectures.md §4).
func qwen25ViTParams(v *config) int64 {
	h := int64(v.int("hidden_size"))
	iv := int64(v.int("intermediate_size"))
	l := int64(v.int("depth"))
	p := int64(v.optInt(14, "patch_size", "spatial_patch_size"))
	t := int64(v.optInt(2, "temporal_patch_size"))
	ch := int64(v.optInt(3, "in_chans", "in_channels"))
	mg := int64(v.optInt(2, "spatial_merge_size"))
	out := int64(v.int("out_hidden_size"))
	block := (h*3*h + 3*h) + (h*h + h) + (3*h*iv + 2*iv + h) + 2*h
	hm := h * mg * mg
	return ch*t*p*p*h + l*block + h + (hm*hm + hm) + (hm*out + out)
}

// qwen3ViTParams: the Qwen3-VL / Qwen3.5 ViT: Conv3d patches with bias,
// learned positions, LayerNorm blocks with a GELU MLP, the patch merger,
// and Qwen3-VL's deepstack mergers (one per deepstack_visual_indexes entry,
// normalised after the 2×2 shuffle).
func qwen3ViTParams(v *config) int64 {
	h := int64(v.int("hidden_size"))
	iv := int64(v.int("intermediate_size"))
	l := int64(v.int("depth"))
	p := int64(v.optInt(16, "patch_size"))
	t := int64(v.optInt(2, "temporal_patch_size"))
	ch := int64(v.optInt(3, "in_channels", "in_chans"))
	mg := int64(v.optInt(2, "spatial_merge_size"))
	out := int64(v.int("out_hidden_size"))
	pos := int64(v.count(0, "num_position_embeddings"))
	block := 4*h + (h*3*h + 3*h) + (h*h + h) + (h*iv + iv) + (iv*h + h)
	hm := h * mg * mg
	merger := (hm*hm + hm) + (hm*out + out)
	n := ch*t*p*p*h + h + pos*h + l*block + 2*h + merger
	n += int64(len(v.ints("deepstack_visual_indexes"))) * (2*hm + merger)
	return n
}

// llama4VisionParams: Llama4VisionModel (unfolded patch Linear, class
// token, learned positions, pre/post LayerNorm, LayerNorm blocks with
// biases, the pixel-shuffle MLP adapter) and the multi_modal_projector
// (docs/architectures.md §8).
func llama4VisionParams(v *config, text int64) int64 {
	t := readViT(v)
	ratio := v.optFloat(0.5, "pixel_shuffle_ratio")
	projIn := int64(v.int("projector_input_dim"))
	projOut := int64(v.int("projector_output_dim"))
	outDim := int64(v.optInt(int(projOut), "vision_output_dim"))
	shuffled := int64(float64(t.h) / (ratio * ratio))
	n := t.channels*t.patch*t.patch*t.h + t.h + (t.patches+1)*t.h + 4*t.h + t.layers*t.block()
	n += shuffled*projIn + projIn*projOut // adapter MLP, no biases
	return n + outDim*text                // projector Linear(vision_output_dim, hidden), no bias
}

// pixtralParams: PixtralVisionModel (patch conv without bias, RMSNorm,
// bias-free attention and gated MLP).
func pixtralParams(v *config) int64 {
	h := int64(v.int("hidden_size"))
	iv := int64(v.int("intermediate_size"))
	l := int64(v.int("num_hidden_layers"))
	p := int64(v.int("patch_size"))
	ch := int64(v.optInt(3, "num_channels"))
	block := 4*h*h + 3*h*iv + 2*h
	return ch*p*p*h + h + l*block
}

// mistral3ProjectorParams: Mistral3MultiModalProjector (RMSNorm, the
// spatial patch merger, a two-layer MLP to the text width).
func mistral3ProjectorParams(top, v *config, text int64) int64 {
	h := int64(v.int("hidden_size"))
	mg := int64(top.optInt(2, "spatial_merge_size"))
	n := h + h*mg*mg*h + h*text + text*text
	if top.optBool(false, "multimodal_projector_bias") {
		n += 2 * text
	}
	return n
}

// genericViTParams estimates an unknown tower as a ViT with biases and a
// linear projector to the text width.
func genericViTParams(v *config, text int64) int64 {
	h := int64(v.optInt(0, "hidden_size", "embed_dim", "width", "d_model"))
	l := int64(v.optInt(0, "num_hidden_layers", "depth", "num_layers", "layers"))
	if h <= 0 || l <= 0 {
		v.note("vision_config without hidden_size or num_hidden_layers: the vision tower is not counted")
		return 0
	}
	iv := int64(v.optInt(int(4*h), "intermediate_size"))
	if r := v.optFloat(0, "mlp_ratio"); r > 0 && !v.has("intermediate_size") {
		iv = int64(r * float64(h))
	}
	p := int64(v.optInt(14, "patch_size"))
	if p <= 0 {
		p = 14 // optInt has recorded the bad value: Read refuses the config
	}
	img := int64(v.optInt(0, "image_size"))
	t := vit{h: h, iv: iv, layers: l, patch: p, channels: 3}
	if img > 0 {
		t.patches = (img / p) * (img / p)
	}
	return t.channels*p*p*h + h + t.patches*h + l*t.block() + 2*h + h*text
}
