// Package fix holds the staged-fix types shared by the planner (fixes for a
// workload that does not fit) and the OOM diagnosis (fixes for a cause seen
// in a paste), so both render and serialise the same way.
package fix

// Framework is the training or serving stack a snippet is written for.
type Framework string

// Frameworks a snippet can be written for; Unknown means "plain PyTorch is a
// safe default".
const (
	FrameworkUnknown   Framework = ""
	FrameworkPyTorch   Framework = "pytorch"
	FrameworkHF        Framework = "hf-trainer" // transformers Trainer / TRL / accelerate
	FrameworkLightning Framework = "lightning"
	FrameworkDeepSpeed Framework = "deepspeed"
	FrameworkKeras     Framework = "keras" // TensorFlow / Keras
	FrameworkJAX       Framework = "jax"
	FrameworkVLLM      Framework = "vllm"
)

// Level is a stage of DESIGN.md §5, easiest first.
type Level int

// The stages of DESIGN.md §5.
const (
	LevelFreeWins Level = 0 // inference_mode, .item(), expandable_segments, kill the other process
	LevelOneLiner Level = 1 // micro-batch + grad accumulation, autocast, checkpointing, SDPA
	LevelMethod   Level = 2 // LoRA, 8-bit/paged optimizers, chunked loss
	LevelConfig   Level = 3 // QLoRA, ZeRO/FSDP, offload, TP/PP
	LevelHardware Level = 4 // a GPU that fits
)

// Title is the human name of a stage.
func (l Level) Title() string {
	switch l {
	case LevelFreeWins:
		return "Free wins"
	case LevelOneLiner:
		return "One-line changes"
	case LevelMethod:
		return "Change the method"
	case LevelConfig:
		return "Change the configuration"
	case LevelHardware:
		return "Change the hardware"
	}
	return "Other"
}

// Fix is one concrete change. SavesBytes and TotalAfterBytes are per GPU and
// nil when the fix cannot be quantified (e.g. an OOM paste with no workload).
type Fix struct {
	ID              string `json:"id"`
	Title           string `json:"title"`
	SavesBytes      *int64 `json:"saves_bytes"`
	TotalAfterBytes *int64 `json:"total_after_bytes"`
	Cost            string `json:"cost"`
	Snippet         string `json:"snippet,omitempty"`
	// SnippetLang is the fence language for rendering ("python", "bash", "json", "yaml").
	SnippetLang string `json:"snippet_lang,omitempty"`
}

// Stage groups fixes of one Level. Stage is the 1-based position in the
// returned list (the JSON contract), Level the §5 difficulty.
type Stage struct {
	Stage int    `json:"stage"`
	Level Level  `json:"level"`
	Title string `json:"title"`
	Fixes []Fix  `json:"fixes"`
}

// Bytes returns a pointer to n, for the optional byte fields.
func Bytes(n int64) *int64 { return &n }
