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
