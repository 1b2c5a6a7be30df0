// Package reply is the transport-neutral answer model: commands, digest and
// the OOM diagnosis build a Reply; bot/ renders it as Block Kit and the CLI
// as plain text (Text) or JSON (Reply.Result).
package reply

// Reply is one answer, independent of where it is shown. Text fields hold
// plain text in which `code` spans are allowed; renderers add emphasis and
// escaping. Result is the structured value printed by --json.
type Reply struct {
	Kind      string    `json:"kind"`    // "vram", "oom", "prices", "digest", "help", "error"
	Title     string    `json:"title"`   // one line, no markup
	Summary   string    `json:"summary"` // 1-3 lines; also the notification fallback text
	Fields    []Field   `json:"fields,omitempty"`
	Sections  []Section `json:"sections,omitempty"`
	Actions   []Action  `json:"actions,omitempty"`
	Context   []string  `json:"context,omitempty"` // assumptions, sources, data age
	Ephemeral bool      `json:"ephemeral,omitempty"`
	Result    any       `json:"-"`
}

// Field is a label/value pair (a breakdown line).
type Field struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Section is a titled block of text with optional code blocks and bullet items.
type Section struct {
	Title string   `json:"title,omitempty"`
	Text  string   `json:"text,omitempty"`
	Items []string `json:"items,omitempty"`
	Code  []Code   `json:"code,omitempty"`
}

// Code is a fenced code block.
type Code struct {
	Lang string `json:"lang,omitempty"`
	Text string `json:"text"`
}

// Action is a button; Value is an opaque payload the bot gets back.
type Action struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Value string `json:"value"`
}
