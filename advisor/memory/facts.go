package memory

import "github.com/vrambot/vrambot/advisor/arch"

// Architecture is what the estimate assumed about the model, so a reader
// can check it (vrambot vram --json: workload.architecture).
type Architecture struct {
	Family     string `json:"family"`               // decoder-only, encoder-only, encoder-decoder
	ModelType  string `json:"model_type,omitempty"` // config.json model_type
	Layers     int    `json:"layers"`
	HiddenSize int    `json:"hidden_size"`
	VocabSize  int    `json:"vocab_size"`
	// Attention is the cache per layer group (arch.AttentionGroup) with
	// its bytes per token at the workload's KV dtype.
	Attention []AttentionFacts `json:"attention"`
	// KVBytesPerToken is every attention layer's growth per token at the
	// workload's KV dtype, before any window binds.
	KVBytesPerToken int64 `json:"kv_bytes_per_token"`
	// StateBytesPerSequence is the linear-attention layers' fixed state.
	StateBytesPerSequence int64               `json:"state_bytes_per_sequence,omitempty"`
	Experts               *ExpertFacts        `json:"experts,omitempty"`
	ParamsByGroup         arch.ByGroup[int64] `json:"params_by_group"`
	MTPParams             int64               `json:"mtp_params,omitempty"`
	VisionParams          int64               `json:"vision_params,omitempty"`
	Quantization          *arch.Quantization  `json:"quantization,omitempty"`
	Source                string              `json:"source,omitempty"`
}

// AttentionFacts is one cache group.
type AttentionFacts struct {
	arch.AttentionGroup
	// BytesPerToken is one layer's growth per token at the KV dtype.
	BytesPerToken int64 `json:"bytes_per_token"`
}

// ExpertFacts is the mixture of experts.
type ExpertFacts struct {
	Routed      int `json:"routed"`
	Active      int `json:"active"`
	Width       int `json:"width"`                  // each routed expert's intermediate size
	SharedWidth int `json:"shared_width,omitempty"` // the shared expert(s) together
	MoELayers   int `json:"moe_layers"`
	DenseLayers int `json:"dense_layers"`
}

// DescribeArchitecture reads the facts off a resolved workload's model.
func DescribeArchitecture(w Workload) Architecture {
	m := w.Model
	elem := kvElemBytes(w.KVCacheDtype)
	a := Architecture{
		Family: m.Family, ModelType: m.ModelType, Layers: m.TotalLayers(), HiddenSize: m.HiddenSize, VocabSize: m.VocabSize,
		ParamsByGroup: m.ParamsByGroup(), VisionParams: m.VisionParams, Quantization: m.Quant, Source: m.Source,
		Attention: []AttentionFacts{},
	}
	a.MTPParams = a.ParamsByGroup[arch.TensorMTP]
	for _, g := range m.AttentionGroups() {
		per := int64(g.BytesPerToken(elem))
		a.Attention = append(a.Attention, AttentionFacts{AttentionGroup: g, BytesPerToken: per})
		a.KVBytesPerToken += int64(g.Layers) * per
		a.StateBytesPerSequence += int64(g.Layers) * g.StateBytes
	}
	for _, g := range m.Layers() {
		f := g.FFN
		if !f.IsMoE() {
			continue
		}
		if a.Experts == nil {
			a.Experts = &ExpertFacts{Routed: f.Experts, Active: f.ActiveExperts, Width: f.ExpertIntermediate, SharedWidth: f.SharedIntermediate}
		}
		a.Experts.MoELayers += g.Layers
	}
	if a.Experts != nil {
		a.Experts.DenseLayers = m.NumLayers - a.Experts.MoELayers
	}
	return a
}
