package bot

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/command/oom"
	"github.com/vrambot/vrambot/command/prices"
	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/internal/pricetest"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// The Block Kit goldens are the real commands' output (vram.Estimate,
// oom.Diagnose, prices.List, the digest, the errors users see) run
// through the renderer, so a change in any layer shows in review. Prices
// come from a fixed book: the real one's ages move with the calendar.

// goldenOffers is the fixed offer book of the golden replies
// (internal/pricetest).
var goldenOffers = &pricetest.Book{Offers: goldenOfferBook, Provenance: []string{"prices: embedded snapshot of 2026-11-29 (offline default)"}}

var goldenOfferBook = []pricing.Offer{
	{Provider: "vast", InstanceType: "1x RTX 4090", GPU: "GeForce RTX 4090", GPUKey: "RTX4090", GPUCount: 1, GPUMemoryBytes: 24564 << 20, PricePerHourUSD: 0.35, PricePerGPUHourUSD: 0.35, Region: "us", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "runpod", InstanceType: "RTX A6000", GPU: "RTX A6000", GPUKey: "RTXA6000", GPUCount: 1, GPUMemoryBytes: 48 << 30, PricePerHourUSD: 0.49, PricePerGPUHourUSD: 0.49, Region: "eu", AsOf: "2026-11-20", AgeDays: 11, Source: "embedded snapshot"},
	{Provider: "aws", InstanceType: "g6e.xlarge", GPU: "L40S", GPUKey: "L40S", GPUCount: 1, GPUMemoryBytes: 48 << 30, PricePerHourUSD: 1.861, PricePerGPUHourUSD: 1.861, Region: "us-east-1", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "lambda", InstanceType: "gpu_1x_a100_sxm4_80gb", GPU: "A100 80GB", GPUKey: "A100-80GB", GPUCount: 1, GPUMemoryBytes: 80 << 30, PricePerHourUSD: 1.79, PricePerGPUHourUSD: 1.79, Region: "us-east-1", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "lambda", InstanceType: "gpu_8x_h100_sxm5", GPU: "H100 80GB SXM", GPUKey: "H100-SXM", GPUCount: 8, GPUMemoryBytes: 80 << 30, PricePerHourUSD: 23.92, PricePerGPUHourUSD: 2.99, Region: "us-east-1", AsOf: "2026-10-01", AgeDays: 61, Stale: true, Source: "embedded snapshot"},
}

// goldenJobs answers jobs with the golden offers.
type goldenJobs struct{ realCommands }

func (goldenJobs) Job(ctx context.Context, text, words string) (reply.Reply, error) {
	a, err := vram.EstimateJob(ctx, text, words, vram.Deps{Offers: goldenOffers})
	return a.Reply, err
}

// goldenSource is a fixed price source for the prices listing.
type goldenSource struct{}

func (goldenSource) Name() string { return "embedded" }
func (goldenSource) Fetch(context.Context) (pricing.Fetched, error) {
	var offers []pricing.Offer
	for _, o := range goldenOfferBook {
		o.AgeDays, o.Stale = 0, false
		offers = append(offers, o)
	}
	return pricing.Fetched{Offers: offers}, nil
}

// goldenPastes are OOM pastes from command/oom/testdata/pastes (their
// SOURCES.md says where each comes from) and one PyTorch message.
func goldenPaste(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "command", "oom", "testdata", "pastes", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const pytorchBackward = "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n" +
	"  File \"/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py\", line 825, in _engine_run_backward\n" +
	"    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n" +
	"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. " +
	"Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but unallocated."

// goldenReply is one reply of the goldens and what is asserted about it.
type goldenReply struct {
	name string
	r    reply.Reply
	// vramLead: a /vram answer, whose lead is at most maxLeadBlocks blocks
	// with the verdict in its header.
	vramLead bool
}

func goldenReplies(t *testing.T) []goldenReply {
	t.Helper()
	ctx := context.Background()
	vramReply := func(q string) reply.Reply {
		t.Helper()
		a, err := vram.Estimate(ctx, q, vram.Deps{Offers: goldenOffers})
		if err != nil {
			t.Fatalf("Estimate(%q): %v", q, err)
		}
		return a.Reply
	}
	vramErr := func(q string) reply.Reply {
		t.Helper()
		_, err := vram.Estimate(ctx, q, vram.Deps{})
		if err == nil {
			t.Fatalf("VRAM(%q) did not fail", q)
		}
		return errorReply(errs.UserMessage(err))
	}
	oomReply := func(text string) reply.Reply { return oom.Diagnose(ctx, text, oom.Deps{Offers: goldenOffers}).Reply }
	// A job as a mention posts it: read by the bot (its words beside the
	// job, one of which is not used), answered with the golden offers.
	jobs := newTestServer(t, nil, nil, func(_ *Config, d *Deps) { d.Jobs = goldenJobs{} }).Server
	jobReply := func(file, text string) reply.Reply {
		t.Helper()
		p := jobs.planJob(text+" ```"+jobFile(t, file)+"```", nil, false)
		r, ok := jobs.jobReply(ctx, p)
		if !ok {
			t.Fatalf("job %s with %q not answered: %+v", file, text, r)
		}
		return r
	}
	notJob := jobs.jobRefusal(ctx, jobs.planJob("```print('hello')```", nil, false), jobRefusedTitle)
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{goldenSource{}}, goldenSource{},
		pricing.WithClock(func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }),
		pricing.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	listing, err := prices.List(ctx, book, prices.Query{MinMemoryBytes: 40 << 30})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "digest", "testdata", "story.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d digest.Digest
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("digest/testdata/story.json: %v", err)
	}
	threads := d.ThreadReplies()
	if len(threads) == 0 {
		t.Fatal("the story digest has no thread replies")
	}
	return []goldenReply{
		{"vram-lora-4090-does-not-fit", vramReply("llama-3.1-8b lora 4090"), true},
		{"vram-qlora-4090", vramReply("llama-3.1-8b qlora 4090"), true},
		{"vram-lora-a100-fits", vramReply("7b lora a100"), true},
		{"vram-full-70b-scale-out", vramReply("llama-3-70b full 4x a100"), true},
		{"vram-question", vramReply("can I finetune llama 3 8b on a 4090?"), true},
		{"vram-vllm-users-h100", vramReply("how many concurrent users can llama-3.1-8b serve on h100 at 8k context"), true},
		{"vram-vllm-does-not-start", vramReply("llama-3.1-70b engine=vllm l40s"), true},
		{"job-axolotl-qlora-4090", jobReply("axolotl/gemma-3-4b-qlora.yml", "4090 thanks!"), true},
		{"job-not-a-job", notJob, false},
		{"oom-pytorch-backward", oomReply(pytorchBackward), false},
		{"oom-zero2-names-its-model", oomReply(goldenPaste(t, "zero2")), false},
		{"oom-vllm-startup", oomReply(goldenPaste(t, "vllm-startup")), false},
		{"prices-40gib", listing.Reply, false},
		{"digest-story", d.Reply(), false},
		{"digest-story-thread", threads[0], false},
		{"error-unknown-model", vramErr("lama-3-8b lora 4090"), false},
		{"error-bad-value", vramErr("llama-3-8b lora bs=banana 4090"), false},
		{"help", usageReply("/vram"), false},
	}
}

// TestRepliesGolden renders each real reply as Slack gets it: posted in a
// channel (the lead, then its details in the thread) and answered through
// response_url (the lead with its Details button); every message passes
// Block Kit's limits, and a /vram lead is at most 12 blocks with the
// verdict in its header.
func TestRepliesGolden(t *testing.T) {
	for _, g := range goldenReplies(t) {
		t.Run(g.name, func(t *testing.T) {
			channel := render(g.r, renderOptions{surface: surfaceChannel})
			response := render(g.r, renderOptions{surface: surfaceResponse, detailsKey: "0123456789abcdef01234567"})
			out := map[string]any{
				"channel":  map[string]any{"text": channel.fallback, "blocks": channel.blocks},
				"response": map[string]any{"text": response.fallback, "blocks": response.blocks},
			}
			for _, m := range []rendered{channel, response} {
				checkLimits(t, m.blocks, m.fallback)
			}
			if g.r.Details != nil {
				details := render(*g.r.Details, renderOptions{surface: surfaceDetails})
				checkLimits(t, details.blocks, details.fallback)
				out["details"] = map[string]any{"text": details.fallback, "blocks": details.blocks}
				if n := countButtons(response.blocks, reply.ActionDetails); n != 1 {
					t.Errorf("the response has %d Details buttons", n)
				}
			}
			if g.vramLead {
				for _, m := range []rendered{channel, response} {
					if len(m.blocks) > maxLeadBlocks {
						t.Errorf("a /vram lead of %d blocks (at most %d)", len(m.blocks), maxLeadBlocks)
					}
					h, ok := m.blocks[0].(*slack.HeaderBlock)
					if !ok || g.r.Verdict == nil || !strings.HasPrefix(h.Text.Text, g.r.Verdict.Band.Mark()) {
						t.Errorf("the header does not lead with the verdict: %+v", m.blocks[0])
					}
				}
			}
			golden.Check(t, filepath.Join("replies", g.name+".json"), marshalText(t, out))
		})
	}
}

// TestBlockCounts pins how many blocks each reply kind takes as Slack
// gets it (testdata/block-counts.txt), and holds every message to Slack's
// block limit and every /vram lead to its own.
func TestBlockCounts(t *testing.T) {
	var lines []string
	for _, g := range goldenReplies(t) {
		lead := render(g.r, renderOptions{surface: surfaceChannel})
		line := g.name + ": " + strconv.Itoa(len(lead.blocks)) + " blocks"
		if n := len(lead.blocks); n > maxBlocks || g.vramLead && n > maxLeadBlocks {
			t.Errorf("%s: a lead of %d blocks", g.name, n)
		}
		if g.r.Details != nil {
			n := len(render(*g.r.Details, renderOptions{surface: surfaceDetails}).blocks)
			line += ", details " + strconv.Itoa(n)
			if n > maxBlocks {
				t.Errorf("%s: details of %d blocks (at most %d)", g.name, n, maxBlocks)
			}
		}
		lines = append(lines, line)
	}
	golden.Check(t, "block-counts.txt", []byte(strings.Join(lines, "\n")+"\n"))
}

// TestViewsGolden pins the forms and the Home tab, within the limits of
// views.
func TestViewsGolden(t *testing.T) {
	st := formState{Channel: "C1", ResponseURL: "https://hooks.slack.com/commands/T1/1/x"}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	views := map[string]any{
		"form-vram": vramForm(st),
		"form-oom":  oomForm(st),
		"home": homeView(homeFacts{now: at, oomsKnown: true,
			digest: &DigestHeadline{Headline: "12 GPUs seen: 1 near OOM, 2 idle while holding memory (14 GPU-hours, $25.06); 3 OOMs pasted in Slack.", At: at.Add(-2 * time.Hour), Channel: "C0GPU"},
			causes: map[string]int{"fragmentation": 2, "activations-in-backward": 1}}),
		"home-empty": homeView(homeFacts{now: at}),
	}
	for name, v := range views {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var view struct {
				Title  *slack.TextBlockObject `json:"title"`
				Submit *slack.TextBlockObject `json:"submit"`
				Blocks slack.Blocks           `json:"blocks"`
				Meta   string                 `json:"private_metadata"`
			}
			if err := json.Unmarshal(raw, &view); err != nil {
				t.Fatal(err)
			}
			if n := len(view.Blocks.BlockSet); n == 0 || n > maxViewBlocks {
				t.Errorf("%d blocks", n)
			}
			for _, o := range []*slack.TextBlockObject{view.Title, view.Submit} {
				if o != nil && runeLen(o.Text) > maxViewTitle {
					t.Errorf("title or submit %q over %d characters", o.Text, maxViewTitle)
				}
			}
			if len(view.Meta) > maxPrivateMeta {
				t.Errorf("private_metadata of %d characters", len(view.Meta))
			}
			golden.Check(t, filepath.Join("views", name+".json"), marshalText(t, v))
		})
	}
}

// TestModelOptionsAnswer: the typeahead's answer keeps Slack's option
// limits whatever the source gives, and always offers the name as typed.
func TestModelOptionsAnswer(t *testing.T) {
	s := &Server{deps: Deps{Models: fixedOptions{
		{Label: "Llama-3.1-8B (meta-llama/Llama-3.1-8B)", Value: "llama-3.1-8b"},
		{Label: strings.Repeat("x", 200), Value: "long-label"},
		{Label: "bad", Value: strings.Repeat("v", 200)},
	}}}
	var in interaction
	in.ActionID, in.Value = formModel, "llama"
	resp := s.suggestModels(context.Background(), in)
	if len(resp.Options) != 3 {
		t.Fatalf("%d options: %+v", len(resp.Options), resp.Options)
	}
	for _, o := range resp.Options {
		if runeLen(o.Text.Text) > maxOptionText || runeLen(o.Value) > maxOptionValue {
			t.Errorf("option %+v over the limits", o)
		}
	}
	if last := resp.Options[len(resp.Options)-1]; last.Value != "llama" {
		t.Errorf("the name as typed is not offered: %+v", last)
	}
	if _, ok := catalog.LookupModel(resp.Options[0].Value); !ok {
		t.Errorf("first option %q is not a catalog name", resp.Options[0].Value)
	}
}

type fixedOptions []ModelOption

func (f fixedOptions) ModelOptions(context.Context, string, int) []ModelOption { return f }

// BenchmarkRenderLead renders a /vram answer's lead and details.
func BenchmarkRenderLead(b *testing.B) {
	a, err := vram.Estimate(context.Background(), "llama-3-70b full 4x a100", vram.Deps{Offers: goldenOffers})
	if err != nil {
		b.Fatal(err)
	}
	r := a.Reply
	for b.Loop() {
		render(r, renderOptions{surface: surfaceResponse, detailsKey: "k"})
		render(*r.Details, renderOptions{surface: surfaceDetails})
	}
}
