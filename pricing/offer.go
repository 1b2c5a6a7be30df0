// Package pricing knows GPU offers and where they come from: sources, the
// cache in the store, and ranking against an advisor requirement. Network
// sources are never called on the path of a user request.
package pricing

// Offer is one rentable instance type. Sizes are per GPU. AsOf is the date
// (YYYY-MM-DD) the price was observed; Source says where it came from.
type Offer struct {
	Provider           string   `json:"provider"`
	InstanceType       string   `json:"instance_type"`
	GPU                string   `json:"gpu"` // catalog display name, e.g. "A100 80GB"
	GPUKey             string   `json:"-"`   // catalog key, e.g. "A100-80GB"
	GPUCount           int      `json:"gpu_count"`
	GPUMemoryBytes     int64    `json:"gpu_memory_bytes"`
	PricePerHourUSD    float64  `json:"price_per_hour_usd"`
	PricePerGPUHourUSD float64  `json:"price_per_gpu_hour_usd"`
	Spot               bool     `json:"spot"`
	Requested          bool     `json:"requested"`
	Region             string   `json:"region"`
	AsOf               string   `json:"as_of"`
	Source             string   `json:"source"`
	HoursToFinish      *float64 `json:"hours_to_finish"`
	CostToFinishUSD    *float64 `json:"cost_to_finish_usd"`
	// AgeDays is how many whole days before today the price was observed
	// (AsOf), and Stale that it is more than StaleAfterDays; both are set when
	// the book lists its offers (see Annotate).
	AgeDays int  `json:"age_days"`
	Stale   bool `json:"stale"`
	// ComponentOnly marks a price for the GPU alone (GCP's attachable GPUs):
	// it cannot be rented without a host VM, so it is never ranked.
	ComponentOnly bool `json:"component_only"`
	// GPUUsableBytes is what one GPU reports to CUDA/ROCm as total: the
	// figure a fit is judged against (catalog usable_bytes).
	GPUUsableBytes int64 `json:"gpu_usable_bytes"`
	// RankNote says why a ranked offer is there against the ranking's
	// preferences: a box with more GPUs than the plan needs, or a price older
	// than UnrankedAfterDays that is the only one for its GPU. Empty in
	// listings and for ordinary ranked offers.
	RankNote string `json:"rank_note,omitempty"`
}

// Requirement is what a workload needs from a GPU offer, per GPU.
type Requirement struct {
	MemoryPerGPUBytes int64 // the estimate's total_bytes (what nvidia-smi would show)
	GPUCount          int   // GPUs the plan needs (>= 1)
	NeedBF16          bool
	NeedFP8           bool
	RequestedGPU      string // catalog key of the GPU the user named, "" if none
	// TrainFLOPs is the job size in FLOPs (advisor/memory.JobFLOPs: by
	// method, checkpointing and active parameters); 0 means no cost to
	// finish.
	TrainFLOPs float64
	// Utilisation is the share of each GPU's dense TFLOPS the job reaches,
	// by catalog key (advisor/memory.UtilisationFor); a GPU missing from
	// it is taken at TrainingMFU.
	Utilisation map[string]float64
	// UtilisationNote says where Utilisation comes from, for the
	// provenance lines; empty means TrainingMFU's.
	UtilisationNote string
}

// SourceStatus is the state of one price source, as `prices --json` shows it.
type SourceStatus struct {
	Name      string  `json:"name"`
	FetchedAt string  `json:"fetched_at"` // RFC 3339
	Offers    int     `json:"offers"`
	Dropped   int     `json:"dropped,omitempty"` // rows whose GPU could not be mapped to the catalog
	Stale     bool    `json:"stale,omitempty"`   // last refresh failed; these are the last good offers
	Error     *string `json:"error"`
}
