package bot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/reply"
)

func vramFixture(query string) reply.Reply {
	return reply.Reply{
		Kind:    "vram",
		Title:   "llama-2-7b · LoRA · A100 80GB: fits (41.2 GiB of 79.2 GiB)",
		Summary: "Fits with 38.0 GiB headroom at bs=1, seq=2048. Query: `" + query + "`",
		Fields: []reply.Field{
			{Label: "Weights", Value: "12.6 GiB"},
			{Label: "Gradients", Value: "0.01 GiB"},
			{Label: "Optimizer", Value: "0.05 GiB"},
			{Label: "Activations", Value: "22.4 GiB"},
			{Label: "Logits", Value: "2.4 GiB"},
			{Label: "Overhead", Value: "3.7 GiB"},
		},
		Sections: []reply.Section{
			{Title: "If you need more room", Items: []string{
				"Stage 1 · gradient checkpointing: −18.9 GiB, ~30% slower",
				"Stage 2 · 8-bit AdamW: −0.04 GiB",
			}, Code: []reply.Code{{Lang: "python", Text: "model.gradient_checkpointing_enable()\ntrainer = Trainer(model, args=TrainingArguments(gradient_checkpointing=True))"}}},
			{Title: "Cheapest GPUs that fit", Items: []string{
				"*requested* A100 80GB · lambda gpu_1x_a100_sxm4 · $1.29/h · as of 2026-11-29",
				"L40S 48GB · runpod · $0.79/h · as of 2026-11-29",
			}},
		},
		Context: []string{"Assumed bf16 and AdamW (not given).", "Prices: embedded snapshot 2026-11-29."},
	}
}

func oomFixture() reply.Reply {
	return reply.Reply{
		Kind:    "oom",
		Title:   "CUDA OOM on cuda:0 during backward: 2.00 GiB requested, 1.23 GiB free",
		Summary: "The process holds 77.9 GiB of 79.2 GiB; 1.2 GiB is reserved but unallocated, so fragmentation is likely.",
		Fields: []reply.Field{
			{Label: "Tried to allocate", Value: "2.00 GiB"},
			{Label: "Free", Value: "1.23 GiB"},
			{Label: "In use (this process)", Value: "77.9 GiB"},
			{Label: "Reserved, unallocated", Value: "1.2 GiB"},
		},
		Sections: []reply.Section{
			{Title: "Likely cause", Text: "Activations of a large micro-batch in backward; allocator fragmentation (reserved > allocated + request)."},
			{Title: "Stage 0 · free wins", Items: []string{"Set `expandable_segments:True` to fight fragmentation"},
				Code: []reply.Code{{Lang: "bash", Text: "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}}},
			{Title: "Stage 1 · one-liners", Items: []string{"Halve the micro-batch and double gradient accumulation (same effective batch)"},
				Code: []reply.Code{{Lang: "python", Text: "args = TrainingArguments(per_device_train_batch_size=4, gradient_accumulation_steps=8)\nif loss < best and x > 0 and y & mask:\n    pass"}}},
		},
		Context: []string{"Parsed format: pytorch-new. Raw text is never stored."},
	}
}

func longFixture() reply.Reply {
	r := reply.Reply{Kind: "oom", Title: strings.Repeat("Very long title <with> & markup ", 10), Summary: "A reply far over Slack's limits."}
	for i := range 25 {
		r.Fields = append(r.Fields, reply.Field{Label: fmt.Sprintf("field %d", i), Value: strings.Repeat("v", 2100)})
	}
	for i := range 60 {
		r.Sections = append(r.Sections, reply.Section{
			Title: fmt.Sprintf("Section %d", i),
			Text:  strings.Repeat("line of text with <angle> & amp\n", 120),
			Code:  []reply.Code{{Text: strings.Repeat("x = 1  # ```\n", 400)}},
		})
	}
	for i := range 14 {
		r.Context = append(r.Context, fmt.Sprintf("context %d %s", i, strings.Repeat("c", 2500)))
	}
	r.Actions = []reply.Action{{ID: "a", Text: strings.Repeat("Button ", 20), Value: "v"}, {ID: "bad", Text: "too long value", Value: strings.Repeat("x", 2001)}}
	return r
}

// TestBlocksGolden pins the clamping of a reply far over every limit (the
// goldens of real replies are in golden_test.go).
func TestBlocksGolden(t *testing.T) {
	blocks, fallback := Blocks(longFixture())
	checkLimits(t, blocks, fallback)
	golden.Check(t, "long.json", marshalText(t, map[string]any{"text": fallback, "blocks": blocks}))
}

// marshalText is indented JSON without HTML escaping, as readable goldens.
func marshalText(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkLimits fails t unless blocks satisfy every Block Kit limit the
// renderer promises, and round-trips through slack-go's decoder.
func checkLimits(t testing.TB, blocks []slack.Block, fallback string) {
	t.Helper()
	if fallback == "" || utf8.RuneCountInString(fallback) > maxFallbackText {
		t.Errorf("fallback text length %d", utf8.RuneCountInString(fallback))
	}
	if len(blocks) == 0 || len(blocks) > maxBlocks {
		t.Fatalf("%d blocks", len(blocks))
	}
	total := 0
	text := func(o *slack.TextBlockObject, limit int) {
		t.Helper()
		if o == nil {
			return
		}
		n := utf8.RuneCountInString(o.Text)
		total += n
		if n == 0 || n > limit {
			t.Errorf("text object of %d chars (limit %d): %.60q", n, limit, o.Text)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("text object: %v", err)
		}
		// A text object is one fenced code block or holds no fence at all:
		// no field may open a block that swallows what follows.
		isCode := strings.HasPrefix(o.Text, codeFence+"\n") && strings.HasSuffix(o.Text, "\n"+codeFence) && strings.Count(o.Text, codeFence) == 2
		if o.Type == slack.MarkdownType && !isCode && strings.Contains(o.Text, codeFence) {
			t.Errorf("stray code fence: %.80q", o.Text)
		}
	}
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if b.Text.Type != slack.PlainTextType {
				t.Error("header is not plain_text")
			}
			text(b.Text, maxHeaderText)
		case *slack.SectionBlock:
			text(b.Text, maxSectionText)
			if b.Accessory != nil && b.Accessory.ButtonElement != nil {
				btn := b.Accessory.ButtonElement
				text(btn.Text, maxButtonText)
				if len(btn.Value) > maxButtonValue || btn.ActionID == "" {
					t.Errorf("accessory button %q: value of %d", btn.ActionID, len(btn.Value))
				}
			}
			if len(b.Fields) > maxSectionFields {
				t.Errorf("%d fields", len(b.Fields))
			}
			for _, f := range b.Fields {
				text(f, maxFieldText)
			}
		case *slack.ContextBlock:
			if n := len(b.ContextElements.Elements); n == 0 || n > maxContextElements {
				t.Errorf("%d context elements", n)
			}
			for _, e := range b.ContextElements.Elements {
				if o, ok := e.(*slack.TextBlockObject); ok {
					text(o, maxContextText)
				}
			}
		case *slack.ActionBlock:
			if n := len(b.Elements.ElementSet); n == 0 || n > maxActionElements {
				t.Errorf("%d action elements", n)
			}
			for _, e := range b.Elements.ElementSet {
				btn := e.(*slack.ButtonBlockElement)
				text(btn.Text, maxButtonText)
				if len(btn.Value) > maxButtonValue || btn.ActionID == "" {
					t.Errorf("button %q value %d chars", btn.ActionID, len(btn.Value))
				}
			}
		default:
			t.Errorf("unexpected block %T", b)
		}
	}
	if total > maxMessageChars {
		t.Errorf("%d characters of block text (limit %d)", total, maxMessageChars)
	}
	raw, err := json.Marshal(slack.Blocks{BlockSet: blocks})
	if err != nil {
		t.Fatal(err)
	}
	var back slack.Blocks
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("blocks do not decode: %v", err)
	}
}

func TestRenderShortened(t *testing.T) {
	tests := []struct {
		name      string
		r         reply.Reply
		shortened bool
	}{
		{"vram fits", vramFixture("7b"), false},
		{"oom fits", oomFixture(), false},
		{"long is shortened", longFixture(), true},
		{"51 small sections", reply.Reply{Title: "t", Sections: make([]reply.Section, 51)}, false},
		{"60 one-line sections", reply.Reply{Title: "t", Sections: manySections(60)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(tt.r, renderOptions{})
			if out.shortened != tt.shortened {
				t.Errorf("shortened = %v, want %v", out.shortened, tt.shortened)
			}
			checkLimits(t, out.blocks, out.fallback)
			last, _ := out.blocks[len(out.blocks)-1].(*slack.ContextBlock)
			noted := last != nil && last.ContextElements.Elements[0].(*slack.TextBlockObject).Text == shortenedNote
			if noted != tt.shortened {
				t.Errorf("shortened note present = %v", noted)
			}
		})
	}
}

func manySections(n int) []reply.Section {
	out := make([]reply.Section, n)
	for i := range out {
		out[i].Text = fmt.Sprintf("section %d", i)
	}
	return out
}

func TestEscaping(t *testing.T) {
	r := reply.Reply{
		Title:    "a <b> & c",
		Summary:  "<!channel> x & y <@U123>",
		Fields:   []reply.Field{{Label: "<l>", Value: "<v>&"}},
		Sections: []reply.Section{{Title: "<t>", Text: "1 < 2", Items: []string{"a>b"}, Code: []reply.Code{{Text: "if a < b && c > d:"}}}},
		Context:  []string{"<https://evil|click>"},
	}
	blocks, fallback := Blocks(r)
	raw := marshalText(t, blocks)
	for _, bad := range []string{"<!channel>", "<@U123>", "<https://evil", "a>b", "1 < 2", "a < b"} {
		if bytes.Contains(raw, []byte(bad)) || strings.Contains(fallback, bad) {
			t.Errorf("unescaped %q in output", bad)
		}
	}
	for _, good := range []string{"&lt;!channel&gt;", "x &amp; y", "if a &lt; b &amp;&amp; c &gt; d:", "*&lt;t&gt;*"} {
		if !bytes.Contains(raw, []byte(good)) {
			t.Errorf("missing %q in %s", good, raw)
		}
	}
	// Header is plain_text: shown as typed, not escaped.
	if h := blocks[0].(*slack.HeaderBlock); h.Text.Text != "a <b> & c" {
		t.Errorf("header = %q", h.Text.Text)
	}
}

func TestTruncateEscaped(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abc &amp; def", 7, "abc …"},
		{"abc &amp; def", 10, "abc &amp;…"},
		{"ééééé", 3, "éé…"},
	}
	for _, tt := range tests {
		if got := truncateEscaped(tt.in, tt.n); got != tt.want {
			t.Errorf("truncateEscaped(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestChunkText(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  []string
	}{
		{"a\nb\nc", 3, []string{"a\nb", "c"}},
		{"abcdef", 4, []string{"abcd", "ef"}},
		{"ab &amp; cd", 5, []string{"ab ", "&amp;", " cd"}},
		{"", 5, nil},
	}
	for _, tt := range tests {
		got := chunkText(tt.in, tt.limit)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("chunkText(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

// FuzzBlocks checks that any text in a reply renders within Slack's limits.
func FuzzBlocks(f *testing.F) {
	f.Add("title", "summary", "label", "value", "code ``` <x> & y", "ctx")
	f.Add(strings.Repeat("&", 200), strings.Repeat("<", 4000), "", "", strings.Repeat("\n", 5000), "")
	f.Add("t", "```", "```", "```", "```", "```0")
	f.Fuzz(func(t *testing.T, title, summary, label, value, code, ctx string) {
		r := reply.Reply{Title: title, Summary: summary, Kind: "vram",
			Verdict:  &reply.Verdict{Band: reply.BandTight, Text: ctx},
			Bar:      &reply.Bar{CapacityBytes: int64(len(code)), Capacity: label, Parts: []reply.BarPart{{Mark: value, Label: label, Value: summary, Bytes: int64(len(title))}}},
			Fields:   []reply.Field{{Label: label, Value: value}},
			Sections: []reply.Section{{Title: label, Text: summary, Items: []string{value}, Code: []reply.Code{{Text: code}}, Action: &reply.Action{ID: "apply-1", Text: label, Value: value}}},
			Context:  []string{ctx},
			Actions:  []reply.Action{{ID: "x", Text: title, Value: value}},
		}
		r.Details = &reply.Reply{Title: title, Sections: r.Sections, Context: r.Context}
		for _, opts := range []renderOptions{{surface: surfaceChannel}, {surface: surfaceResponse, detailsKey: "k"}, {surface: surfaceDetails}} {
			out := render(r, opts)
			if len(out.blocks) == 0 {
				continue // nothing printable: still a valid (text-only) message
			}
			checkLimits(t, out.blocks, out.fallback)
			if opts.surface != surfaceDetails && len(out.blocks) > maxLeadBlocks {
				t.Fatalf("a lead of %d blocks", len(out.blocks))
			}
		}
	})
}

func TestBreakBackticks(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a `b` c", "a `b` c"},
		{"``", "``"},
		{"```", "`\u200b``"},
		{"````", "`\u200b``\u200b`"},
		{"x ```` y ``` z", "x `\u200b``\u200b` y `\u200b`` z"},
	}
	for _, tt := range tests {
		got := breakBackticks(tt.in)
		if got != tt.want {
			t.Errorf("breakBackticks(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, codeFence) {
			t.Errorf("breakBackticks(%q) = %q still holds a fence", tt.in, got)
		}
	}
}

// TestEveryFieldKeepsFences: a fence in any text field is broken, so it
// cannot open a code block in Slack (FuzzBlocks once failed on a context
// text of "```0").
func TestEveryFieldKeepsFences(t *testing.T) {
	const fence = "```0 <b>"
	r := reply.Reply{
		Title: fence, Summary: fence,
		Fields:   []reply.Field{{Label: fence, Value: fence}},
		Sections: []reply.Section{{Title: fence, Text: fence, Items: []string{fence}, Code: []reply.Code{{Text: fence}}}},
		Context:  []string{fence},
		Actions:  []reply.Action{{ID: "x", Text: fence, Value: "v"}},
	}
	blocks, fallback := Blocks(r)
	checkLimits(t, blocks, fallback)
	if strings.Contains(fallback, codeFence) {
		t.Errorf("fallback %q holds a fence", fallback)
	}
}

// TestLongLineRendersInLinearTime renders a megabyte of "&" on one line
// (5 MB once escaped; 43 s when chunking was quadratic). The bound is far
// above the linear cost (tens of milliseconds) and far below the old one.
func TestLongLineRendersInLinearTime(t *testing.T) {
	r := reply.Reply{Title: "t", Sections: []reply.Section{{Text: strings.Repeat("&", 1<<20)}, {Code: []reply.Code{{Text: strings.Repeat("&`", 1<<19)}}}}}
	start := time.Now()
	blocks, fallback := Blocks(r)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("rendering took %v", d)
	}
	checkLimits(t, blocks, fallback)
}

func BenchmarkRenderLongLine(b *testing.B) {
	r := reply.Reply{Title: "t", Sections: []reply.Section{{Text: strings.Repeat("&", 1<<20)}}}
	for b.Loop() {
		Blocks(r)
	}
}

func TestSplitEscaped(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		head  string
	}{
		{"abcdef", 4, "abcd"},
		{"ab&amp;cd", 4, "ab"},
		{"ab&amp;cd", 7, "ab&amp;"},
		{"éééééé", 3, "ééé"},
		{"&amp;&amp;", 6, "&amp;"},
	}
	for _, tt := range tests {
		head, n := splitEscaped(tt.in, tt.limit)
		if head != tt.head || n != runeLen(head) {
			t.Errorf("splitEscaped(%q, %d) = %q, %d; want %q", tt.in, tt.limit, head, n, tt.head)
		}
	}
}
