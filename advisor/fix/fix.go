// Package fix is the one fix catalogue (docs/style.md C.5, docs/contracts.md §6): every staged fix
// the bot can propose, with one id, one title, one cost and one snippet per
// framework, used by the OOM diagnosis (fixes for a cause seen in a paste)
// and the /vram planner (fixes for a workload that does not fit), so both
// name, render and serialise a fix the same way.
//
// Snippets that need numbers (a micro-batch, a model id, a dtype, a context
// length) are text/template sources with the named parameters of Params,
// filled by the planner with its values and by the diagnosis with the
// paste's (Make puts placeholders where a value is unknown). Adding a fix or
// a framework is adding data: a Def in defs.go, a row in frameworks.go.
package fix

// Level is a stage of docs/contracts.md §6, easiest first.
type Level int

// The stages of docs/contracts.md §6.
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

// Fix is one concrete change. ID, Title and Cost are the catalogue's;
// Detail is what the caller's numbers add ("micro-batch 2 × 4 steps").
// SavesBytes and TotalAfterBytes are per GPU and nil when the fix cannot be
// quantified (e.g. an OOM paste that does not describe its workload).
type Fix struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Name is the fix in a few words ("gradient checkpointing").
	Name            string `json:"-"`
	Detail          string `json:"detail,omitempty"`
	SavesBytes      *int64 `json:"saves_bytes"`
	TotalAfterBytes *int64 `json:"total_after_bytes"`
	Cost            string `json:"cost"`
	Snippet         string `json:"snippet,omitempty"`
	// SnippetLang is the fence language for rendering ("python", "bash", "json", "yaml", "text").
	SnippetLang string `json:"snippet_lang,omitempty"`
}

// Heading is the title with the detail, as a reply shows it.
func (f Fix) Heading() string {
	if f.Detail == "" {
		return f.Title
	}
	return f.Title + " — " + f.Detail
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
