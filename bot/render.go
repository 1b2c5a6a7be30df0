package bot

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/reply"
)

// Block Kit limits. slack-go validates only the 3,000-character text object,
// so every other limit is enforced here.
const (
	// maxBlocks: https://api.slack.com/reference/block-kit/blocks (50 in messages).
	maxBlocks = 50
	// maxSectionText: https://api.slack.com/reference/block-kit/blocks#section (text, 3,000 chars).
	maxSectionText = 3000
	// maxSectionFields and maxFieldText: same page (fields, 10 items of 2,000 chars).
	maxSectionFields = 10
	maxFieldText     = 2000
	// maxHeaderText: https://docs.slack.dev/reference/block-kit/blocks/header-block (150 chars, plain_text).
	maxHeaderText = 150
	// maxContextElements: https://docs.slack.dev/reference/block-kit/blocks/context-block (10 elements).
	maxContextElements = 10
	// maxContextText is the text length we allow per context element; the
	// block reference allows more, 2,000 keeps one element readable.
	maxContextText = 2000
	// maxActionElements: https://api.slack.com/reference/block-kit/blocks#actions (25 elements).
	maxActionElements = 25
	// maxButtonText and maxButtonValue: https://api.slack.com/reference/block-kit/block-elements#button
	// (text 75 chars, value 2,000 chars); action_id 255 chars.
	maxButtonText  = 75
	maxButtonValue = 2000
	maxActionID    = 255
	// maxMessageChars bounds the sum of all block text: Slack answers
	// msg_blocks_too_long at about 13.2k characters even when every block is
	// within its own limit (slackapi/bolt-js#2509). 12,000 leaves a margin.
	maxMessageChars = 12000
	// maxFallbackText bounds the notification text. Slack truncates at 40,000
	// (changelog 2018-04); a notification needs far less.
	maxFallbackText = 3000
)

// maxLeadBlocks bounds a reply's lead when its details go elsewhere (the
// thread, a button): a channel sees the verdict and what to do at a
// glance, never a wall (issue 12: a /vram reply in a channel is at most 12
// blocks).
const maxLeadBlocks = 12

// shortenedNote is appended when blocks had to be dropped to fit the limits.
const shortenedNote = "_Shortened to fit Slack's message limits._"

// shortenedLeadNote replaces it on a lead, whose details hold the rest.
const shortenedLeadNote = "_Shortened: the details have everything._"

// ellipsis marks text cut to fit a limit.
const ellipsis = "…"

// Blocks renders r as Block Kit blocks clamped to Slack's limits, plus the
// fallback text used for notifications and screen readers, as posted in a
// channel (details in the thread). User-derived text is escaped (& < >);
// our own mrkdwn markers are not.
func Blocks(r reply.Reply) (blocks []slack.Block, fallback string) {
	out := render(r, renderOptions{surface: surfaceChannel})
	return out.blocks, out.fallback
}

// surface is where a rendered reply is shown, which decides where its
// details go and which buttons it carries.
type surface int

const (
	// surfaceChannel: posted with chat.postMessage; the details follow in
	// its thread.
	surfaceChannel surface = iota
	// surfaceResponse: answered through response_url (often ephemeral,
	// which has no thread) or posted in a thread: the details are behind a
	// Details button.
	surfaceResponse
	// surfaceDetails: the details themselves.
	surfaceDetails
)

// renderOptions say how to render: the surface, and for a reply shown
// through response_url the store key of its details (the Details
// button's value; "" for no button).
type renderOptions struct {
	surface    surface
	detailsKey string
}

// rendered is a reply ready for Slack. shortened reports that content was
// dropped to fit, in which case channel posts attach the full text as a
// file (unless details hold it).
type rendered struct {
	blocks    []slack.Block
	fallback  string
	shortened bool
}

// renderPart is one block with its role in clamping: body blocks are dropped
// first (from the end), context blocks next; head and actions stay.
type renderPart struct {
	block slack.Block
	chars int
	role  partRole
}

type partRole int

const (
	roleHead partRole = iota
	roleBody
	roleActions
	roleContext
)

// Reply kinds the feedback buttons go on: answers a person asked for.
var feedbackKinds = map[string]bool{"vram": true, "oom": true}

// header is the header text: the verdict's mark and words, then the title.
func header(r reply.Reply) string {
	title := oneLine(r.Title)
	if v := r.Verdict; v != nil {
		lead := strings.TrimSpace(v.Band.Mark() + " " + oneLine(v.Text))
		switch {
		case lead == "":
		case title == "":
			title = lead
		case v.Text == "":
			title = lead + " " + title
		default:
			title = lead + " · " + title
		}
	}
	return title
}

func render(r reply.Reply, opts renderOptions) rendered {
	var parts []renderPart
	add := func(role partRole, b slack.Block, chars int) {
		parts = append(parts, renderPart{block: b, chars: chars, role: role})
	}

	if title := header(r); title != "" {
		text := truncateRunes(title, maxHeaderText)
		add(roleHead, slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, text, true, false)), runeLen(text))
	}
	// cut records text lost to a per-element limit.
	cut := false
	clip := func(text string, limit int) string {
		out := truncateEscaped(text, limit)
		cut = cut || out != text
		return out
	}
	var lead []string
	if b := r.Bar; b != nil {
		if line := b.Line(); line != "" {
			// The bar in a code span, so it lines up as it does in a terminal;
			// a code span cannot hold a backtick, so none may come from a mark.
			lead = append(lead, "`"+escape(strings.ReplaceAll(line, "`", "'"))+"`", mrkdwn(b.Legend()))
		}
	}
	if strings.TrimSpace(r.Summary) != "" {
		lead = append(lead, mrkdwn(r.Summary))
	}
	if len(lead) > 0 {
		text := clip(strings.Join(lead, "\n"), maxSectionText)
		add(roleHead, mrkdwnSection(text, nil), runeLen(text))
	}
	for start := 0; start < len(r.Fields); start += maxSectionFields {
		end := min(start+maxSectionFields, len(r.Fields))
		fields := make([]*slack.TextBlockObject, 0, end-start)
		chars := 0
		limit := groupLimit(maxFieldText, end-start)
		for _, f := range r.Fields[start:end] {
			text := clip("*"+mrkdwn(oneLine(f.Label))+"*\n"+mrkdwn(f.Value), limit)
			chars += runeLen(text)
			fields = append(fields, slack.NewTextBlockObject(slack.MarkdownType, text, false, false))
		}
		add(roleBody, slack.NewSectionBlock(nil, fields, nil), chars)
	}
	for _, s := range r.Sections {
		btn := buttonOf(s.Action)
		for i, chunk := range sectionChunks(s) {
			var accessory *slack.Accessory
			if i == 0 && btn != nil {
				accessory = slack.NewAccessory(btn)
			}
			add(roleBody, mrkdwnSection(chunk, accessory), runeLen(chunk))
		}
	}
	if b, chars := actionsBlock(replyActions(r, opts)); b != nil {
		add(roleActions, b, chars)
	}
	context := r.Context
	if r.Details != nil && opts.surface == surfaceChannel {
		context = append(slices.Clone(context), "Details in the thread.")
	}
	for start := 0; start < len(context); start += maxContextElements {
		end := min(start+maxContextElements, len(context))
		elems := make([]slack.MixedElement, 0, end-start)
		chars := 0
		limit := groupLimit(maxContextText, end-start)
		for _, c := range context[start:end] {
			text := clip(mrkdwn(c), limit)
			if strings.TrimSpace(text) == "" {
				continue
			}
			chars += runeLen(text)
			elems = append(elems, slack.NewTextBlockObject(slack.MarkdownType, text, false, false))
		}
		if len(elems) > 0 {
			add(roleContext, slack.NewContextBlock("", elems...), chars)
		}
	}

	limit, note := maxBlocks, shortenedNote
	if r.Details != nil && opts.surface != surfaceDetails {
		limit, note = maxLeadBlocks, shortenedLeadNote
	}
	parts, dropped := clamp(parts, limit, note)
	shortened := dropped || cut
	blocks := make([]slack.Block, 0, len(parts)+1)
	for _, p := range parts {
		blocks = append(blocks, p.block)
	}
	if shortened {
		blocks = append(blocks, noteBlock(note))
	}
	return rendered{blocks: blocks, fallback: fallbackText(r), shortened: shortened}
}

// replyActions are r's buttons on a surface: its own, Details where the
// details cannot go in a thread, and 👍/👎 on the answers people ask for.
func replyActions(r reply.Reply, opts renderOptions) []reply.Action {
	actions := slices.Clone(r.Actions)
	if opts.surface == surfaceDetails {
		return actions
	}
	if r.Details != nil && opts.detailsKey != "" {
		actions = append(actions, reply.Action{ID: reply.ActionDetails, Text: "Details", Value: opts.detailsKey})
	}
	if feedbackKinds[r.Kind] {
		actions = append(actions,
			reply.Action{ID: reply.ActionFeedbackUp, Text: "👍", Value: r.Kind},
			reply.Action{ID: reply.ActionFeedbackDown, Text: "👎", Value: r.Kind})
	}
	return actions
}

// groupLimit is the per-element text limit for a block of n elements: the
// element limit, lowered so one block holds at most maxSectionText
// characters and can never use up the whole message budget alone.
func groupLimit(elementLimit, n int) int {
	return max(min(elementLimit, maxSectionText/n), 40)
}

// clamp drops body blocks from the end, then context blocks, until the
// message (plus the note) fits the block count and text budget.
func clamp(parts []renderPart, maxParts int, note string) ([]renderPart, bool) {
	total := 0
	for _, p := range parts {
		total += p.chars
	}
	if len(parts) <= maxParts && total <= maxMessageChars {
		return parts, false
	}
	noteChars := runeLen(note)
	for len(parts)+1 > maxParts || total+noteChars > maxMessageChars {
		i := lastIndex(parts, roleBody)
		if i < 0 {
			i = lastIndex(parts, roleContext)
		}
		if i < 0 {
			break // head and actions alone are bounded well below the limits
		}
		total -= parts[i].chars
		parts = append(parts[:i], parts[i+1:]...)
	}
	return parts, true
}

func lastIndex(parts []renderPart, role partRole) int {
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].role == role {
			return i
		}
	}
	return -1
}

func noteBlock(note string) slack.Block {
	return slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false))
}

func mrkdwnSection(text string, accessory *slack.Accessory) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, accessory)
}

// sectionChunks renders one reply section as section texts of at most
// maxSectionText characters: the title and text split at line boundaries,
// bullet items, then each code block in its own fence.
func sectionChunks(s reply.Section) []string {
	var b strings.Builder
	if t := oneLine(s.Title); t != "" {
		b.WriteString("*" + mrkdwn(t) + "*\n")
	}
	if strings.TrimSpace(s.Text) != "" {
		b.WriteString(mrkdwn(s.Text))
		b.WriteString("\n")
	}
	for _, it := range s.Items {
		b.WriteString("• ")
		b.WriteString(mrkdwn(it))
		b.WriteString("\n")
	}
	var chunks []string
	if text := strings.TrimRight(b.String(), "\n"); text != "" {
		chunks = chunkText(text, maxSectionText)
	}
	for _, c := range s.Code {
		chunks = append(chunks, codeChunks(c.Text)...)
	}
	return chunks
}

// codeFence wraps code in a triple-backtick block on its own lines.
const codeFence = "```"

// codeChunks fences code in pieces that each fit a section. The code is
// split before the closing fence is added, so a cut never breaks a fence.
func codeChunks(code string) []string {
	code = strings.Trim(code, "\n")
	if strings.TrimSpace(code) == "" {
		return nil
	}
	code = breakBackticks(escape(code))
	budget := maxSectionText - 2*runeLen(codeFence) - 2
	var out []string
	for _, piece := range chunkText(code, budget) {
		out = append(out, codeFence+"\n"+piece+"\n"+codeFence)
	}
	return out
}

// breakBackticks puts zero-width spaces inside every run of three or more
// backticks so that no three are adjacent: code cannot close its fence
// early, whatever the length of the run ("```" becomes "`\u200b“", "````"
// "`\u200b“\u200b`"); shorter runs are left alone.
func breakBackticks(s string) string {
	if !strings.Contains(s, codeFence) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		n := len(s) - len(strings.TrimLeft(s, "`"))
		for k := range n {
			if n >= 3 && k%2 == 1 {
				b.WriteRune('\u200b')
			}
			b.WriteByte('`')
		}
		s = s[n:]
	}
	return b.String()
}

func actionsBlock(actions []reply.Action) (slack.Block, int) {
	if len(actions) == 0 {
		return nil, 0
	}
	elems := make([]slack.BlockElement, 0, min(len(actions), maxActionElements))
	chars := 0
	for _, a := range actions[:min(len(actions), maxActionElements)] {
		btn := buttonOf(&a)
		if btn == nil {
			continue
		}
		chars += runeLen(btn.Text.Text)
		elems = append(elems, btn)
	}
	if len(elems) == 0 {
		return nil, 0
	}
	return slack.NewActionBlock("", elems...), chars
}

// buttonOf is a's button, or nil when Slack would refuse it (and with it
// the whole message): no id, an id or value over its limit, no text.
func buttonOf(a *reply.Action) *slack.ButtonBlockElement {
	if a == nil || a.ID == "" || runeLen(a.ID) > maxActionID || runeLen(a.Value) > maxButtonValue {
		return nil
	}
	text := truncateRunes(oneLine(a.Text), maxButtonText)
	if text == "" {
		return nil
	}
	return slack.NewButtonBlockElement(a.ID, a.Value, slack.NewTextBlockObject(slack.PlainTextType, text, true, false))
}

// fallbackText is the message's top-level text: title and summary.
func fallbackText(r reply.Reply) string {
	parts := make([]string, 0, 2)
	if t := header(r); t != "" {
		parts = append(parts, t)
	}
	if s := strings.TrimSpace(r.Summary); s != "" {
		parts = append(parts, s)
	}
	text := strings.Join(parts, ": ")
	if text == "" {
		text = "vrambot"
	}
	return truncateEscaped(mrkdwn(text), maxFallbackText)
}

// escape replaces the three characters Slack treats as control characters
// in mrkdwn: https://api.slack.com/reference/surfaces/formatting#escaping
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mrkdwn makes text safe for a mrkdwn field outside a code block: escaped,
// and with no run of three backticks, so no field (a summary, a label, a
// context line) can open a code block that swallows what follows. Inline
// `code` (single backticks) keeps working.
func mrkdwn(s string) string { return breakBackticks(escape(s)) }

func escape(s string) string {
	return escaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// oneLine collapses whitespace runs (newlines included) to single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// truncateRunes cuts s to at most n runes, marking the cut with an ellipsis.
func truncateRunes(s string, n int) string {
	if runeLen(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + ellipsis
}

// truncateEscaped is truncateRunes for escaped text: it never leaves half
// an entity such as "&am" before the ellipsis.
func truncateEscaped(s string, n int) string {
	if runeLen(s) <= n {
		return s
	}
	cut := string([]rune(s)[:n-1])
	if amp := strings.LastIndexByte(cut, '&'); amp >= 0 && !strings.Contains(cut[amp:], ";") {
		cut = cut[:amp]
	}
	return cut + ellipsis
}

// chunkText splits s into pieces of at most limit runes, preferring line
// boundaries; a line longer than limit is cut (escape-safely) across pieces.
// It is linear in len(s): each line's length is counted once, and each cut
// walks only the runes it keeps.
func chunkText(s string, limit int) []string {
	var chunks []string
	var cur strings.Builder
	curLen := 0
	flush := func() {
		if curLen > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
			curLen = 0
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		n := runeLen(line)
		for n > limit {
			flush()
			head, runes := splitEscaped(line, limit)
			chunks = append(chunks, head)
			line, n = line[len(head):], n-runes
		}
		if curLen > 0 && curLen+1+n > limit {
			flush()
		}
		if curLen > 0 {
			cur.WriteByte('\n')
			curLen++
		}
		cur.WriteString(line)
		curLen += n
	}
	flush()
	return chunks
}

// maxEntity is the longest entity escape writes ("&amp;").
const maxEntity = len("&amp;")

// splitEscaped returns the longest prefix of s with at most limit runes
// (limit > maxEntity) that does not end inside an entity, and its rune
// count. It reads only the prefix.
func splitEscaped(s string, limit int) (string, int) {
	end, runes := len(s), 0
	for i := range s {
		if runes == limit {
			end = i
			break
		}
		runes++
	}
	head := s[:end]
	// An entity cut in two has its '&' within the last maxEntity-1 bytes
	// and no ';' after it.
	tail := head[max(0, len(head)-(maxEntity-1)):]
	if amp := strings.LastIndexByte(tail, '&'); amp >= 0 && !strings.Contains(tail[amp:], ";") {
		cut := len(head) - len(tail) + amp
		if cut > 0 {
			runes -= runeLen(head[cut:])
			head = head[:cut]
		}
	}
	return head, runes
}
