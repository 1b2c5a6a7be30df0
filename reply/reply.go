// Package reply is the transport-neutral answer model: commands, digest and
// the OOM diagnosis build a Reply; bot/ renders it as Block Kit and the CLI
// as plain text (Text); each command's structured result, which --json
// prints, travels beside its Reply (command/vram.Answer, command/oom.Answer).
//
// A reply is read in two parts. The lead (everything but Details) is what a
// channel sees: the verdict, a one-line picture of the memory, the few
// changes worth making with their snippets, the best offers and one line of
// assumptions. Details is the rest of the full answer: Slack puts it in the
// thread (or behind a button), the terminal prints it below the lead.
package reply

// Reply is one answer, independent of where it is shown. Text fields hold
// plain text in which `code` spans are allowed; renderers add emphasis and
// escaping.
type Reply struct {
	Kind    string `json:"kind"`    // "vram", "oom", "prices", "digest", "help", "error"
	Title   string `json:"title"`   // one line, no markup
	Summary string `json:"summary"` // 1-3 lines; also the notification fallback text
	// Verdict, when set, leads the reply: Slack shows it in the header
	// before the title.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Bar, when set, pictures the memory parts against the card.
	Bar      *Bar      `json:"bar,omitempty"`
	Fields   []Field   `json:"fields,omitempty"`
	Sections []Section `json:"sections,omitempty"`
	Actions  []Action  `json:"actions,omitempty"`
	Context  []string  `json:"context,omitempty"` // assumptions, sources, data age
	// Details is the rest of the full answer (the whole breakdown, every
	// fix and offer, every assumption), shown in the thread or below.
	Details   *Reply `json:"details,omitempty"`
	Ephemeral bool   `json:"ephemeral,omitempty"`
}

// Band is how a workload sits on its GPU.
type Band string

// Bands, as the estimator reports them (fits, tight, does not fit).
const (
	BandFits  Band = "fits"
	BandTight Band = "tight"
	BandNo    Band = "no"
)

// Mark is the band's sign, an emoji every Slack client and current terminal
// shows.
func (b Band) Mark() string {
	switch b {
	case BandFits:
		return "✅"
	case BandTight:
		return "⚠️"
	case BandNo:
		return "❌"
	}
	return ""
}

// Verdict is the band and its numbers in a few words: "fits 10.9 of 23.6
// GiB", "needs 27.6 of 23.6 GiB".
type Verdict struct {
	Band Band   `json:"band"`
	Text string `json:"text"`
}

// Field is a label/value pair (a breakdown line).
type Field struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Section is a titled block of text with optional code blocks and bullet
// items. Action, when set, is a button beside it (a fix's "Apply gc=on").
type Section struct {
	Title  string   `json:"title,omitempty"`
	Text   string   `json:"text,omitempty"`
	Items  []string `json:"items,omitempty"`
	Code   []Code   `json:"code,omitempty"`
	Action *Action  `json:"action,omitempty"`
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

// Action IDs the bot routes on: the commands that build a reply and the
// bot that answers its buttons agree on them here.
const (
	// ActionShare re-runs the /vram query in Value and posts it publicly.
	ActionShare = "share"
	// ActionApplyPrefix starts the IDs of the buttons that re-run a /vram
	// query with a fix applied ("apply-1"); Value is the query.
	ActionApplyPrefix = "apply-"
	// ActionEstimate runs the /vram query in Value (an OOM reply's
	// "Estimate this workload").
	ActionEstimate = "estimate"
	// ActionDetails shows a reply's Details.
	ActionDetails = "details"
	// ActionFeedbackUp and ActionFeedbackDown record 👍 and 👎; Value is
	// the reply's Kind.
	ActionFeedbackUp   = "feedback-up"
	ActionFeedbackDown = "feedback-down"
)
