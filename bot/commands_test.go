package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackutilsx"

	"github.com/vrambot/vrambot/command/oom"
	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/internal/oomcorpus"
	"github.com/vrambot/vrambot/reply"
)

// realCommands adapts the command packages to Commands, as cmd/vrambot
// does (without offers: rendering and routing are under test here).
type realCommands struct{}

func (realCommands) VRAM(ctx context.Context, text string) (reply.Reply, error) {
	a, err := vram.Estimate(ctx, text, vram.Deps{})
	return a.Reply, err
}

// JobQuery and Job read jobs as cmd/vrambot's command set does (Jobs).
func (realCommands) JobQuery(text, words string) (string, bool) {
	q, _, err := vram.JobQuery(text, words)
	return q, err == nil
}

func (realCommands) Job(ctx context.Context, text, words string) (reply.Reply, error) {
	a, err := vram.EstimateJob(ctx, text, words, vram.Deps{})
	return a.Reply, err
}

func (realCommands) OOM(ctx context.Context, text string) (reply.Reply, OOMFacts) {
	a := oom.Diagnose(ctx, text, oom.Deps{})
	return a.Reply, OOMFacts{Detected: a.Result.Detected, Format: a.Result.Format}
}

type corpusEntry struct {
	File   string
	Format string
	Text   string
}

func loadOOMCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	var out []corpusEntry
	for _, c := range oomcorpus.MustLoad(oomcorpus.Public) {
		format, _ := c.Fields["format"].(string)
		out = append(out, corpusEntry{File: c.File, Format: format, Text: c.Text})
	}
	return out
}

// TestCorpusPastesEndToEnd pastes every public OOM case into a channel the
// way Slack delivers it (text escaped) and checks one valid threaded reply
// per case, the OOM metric by format, and silence for chatter.
func TestCorpusPastesEndToEnd(t *testing.T) {
	cases := loadOOMCorpus(t)
	// All pastes go to one channel at once: its queue holds them all, so a
	// slow machine answers late rather than posting the overflow notice (the
	// queue's bound has its own tests).
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) { d.Commands, c.ChannelQueue = realCommands{}, len(cases) })
	wantFormats := map[string]int{}
	for i, c := range cases {
		wantFormats[c.Format]++
		msg := message(slackutilsx.EscapeMessage(c.Text), "ts", fmt.Sprintf("1700001000.%06d", i))
		resp := ts.event(t, "EvCorpus"+c.File, msg)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", c.File, resp.StatusCode)
		}
		readAll(t, resp)
	}
	for i, chatter := range []string{
		"we ran out of coffee again",
		"memory use looks fine: 40 GB of 80 GB on the A100",
		"anyone seen <https://pytorch.org/docs/stable/notes/cuda.html|the CUDA notes>?",
	} {
		readAll(t, ts.event(t, fmt.Sprintf("EvChatter%d", i), message(chatter, "ts", fmt.Sprintf("1700002000.%06d", i))))
	}
	ts.idle(t)

	posts := ts.slack.Answered("chat.postMessage")
	threads := map[string]bool{}
	for _, p := range posts {
		threads[p.Args.Get("thread_ts")] = true
		var blocks slack.Blocks
		if err := json.Unmarshal([]byte(p.Args.Get("blocks")), &blocks); err != nil {
			t.Fatal(err)
		}
		checkLimits(t, blocks.BlockSet, p.Args.Get("text"))
	}
	if len(posts) != len(cases) || len(threads) != len(cases) {
		t.Errorf("%d replies in %d threads for %d pastes", len(posts), len(threads), len(cases))
	}
	for _, th := range []string{"1700002000.000000", "1700002000.000001", "1700002000.000002"} {
		if threads[th] {
			t.Errorf("chatter %s got a reply", th)
		}
	}
	metrics := scrape(t, ts)
	for format, n := range wantFormats {
		if want := fmt.Sprintf(`vrambot_ooms_parsed_total{format=%q} %d`, format, n); !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if got := len(ts.ooms.all()); got != len(cases) {
		t.Errorf("%d OOMs recorded for the digest, want %d", got, len(cases))
	}
}

// TestRealVRAMQueries runs /vram through the real command set.
func TestRealVRAMQueries(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(_ *Config, d *Deps) { d.Commands = realCommands{} })
	tests := []struct {
		query string
		share bool
	}{
		{"7b lora a100", true},
		{"llama-3-8b qlora bs=4 seq=4096 4090", true},
		{"mistral-7b inference 24gb", true},
		{"lama-7b lora a100", false},
		{"7b bs=banana", false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := decodeResponse(t, []byte(readAll(t, ts.slashCommand(t, tt.query))))
			if n := countButtons(got.Blocks, shareActionID); n != map[bool]int{true: 1, false: 0}[tt.share] {
				t.Errorf("%d share buttons (text %q)", n, got.Text)
			}
		})
	}
}
