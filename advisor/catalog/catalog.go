// Package catalog holds the embedded GPU and model-architecture catalogs
// (data files with their sources) and name lookup with "did you mean".
package catalog

// GPU is one accelerator model as the estimator and the price ranking see it.
type GPU struct {
	Key           string   `json:"key"`  // canonical id, e.g. "A100-80GB", "H100-SXM", "RTX4090"
	Name          string   `json:"name"` // display name, e.g. "A100 80GB"
	Aliases       []string `json:"aliases,omitempty"`
	Vendor        string   `json:"vendor"`
	MemoryBytes   int64    `json:"memory_bytes"` // marketed capacity
	UsableBytes   int64    `json:"usable_bytes"` // what the card reports to CUDA/nvidia-smi as total
	BF16          bool     `json:"bf16"`
	FP8           bool     `json:"fp8"`
	DenseTFLOPS   float64  `json:"dense_tflops"` // dense bf16 (fp16 tensor where no bf16) TFLOPS
	BandwidthGBps float64  `json:"bandwidth_gbps"`
	Source        string   `json:"source"`
}

// Model is a transformer architecture from the catalog (or scaled from a size).
type Model struct {
	Name                  string `json:"name"`
	HFID                  string `json:"hf_id,omitempty"`
	Family                string `json:"family"` // decoder-only, encoder-only, encoder-decoder
	HiddenSize            int    `json:"hidden_size"`
	NumLayers             int    `json:"num_layers"`
	NumDecoderLayers      int    `json:"num_decoder_layers,omitempty"`
	NumAttentionHeads     int    `json:"num_attention_heads"`
	NumKVHeads            int    `json:"num_kv_heads"`
	HeadDim               int    `json:"head_dim"`
	IntermediateSize      int    `json:"intermediate_size"`
	VocabSize             int    `json:"vocab_size"`
	MaxPositionEmbeddings int    `json:"max_position_embeddings,omitempty"`
	TieWordEmbeddings     bool   `json:"tie_word_embeddings"`
	MLP                   string `json:"mlp"`
	NumExperts            int    `json:"num_experts,omitempty"`
	ExpertsPerToken       int    `json:"experts_per_token,omitempty"`
	SlidingWindow         int    `json:"sliding_window,omitempty"`
	Params                int64  `json:"params"`
	Source                string `json:"source,omitempty"`
	// Scaled is true when the architecture was made up from a size ("7b"), not read from the catalog.
	Scaled bool `json:"scaled,omitempty"`
}
