package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/models"
)

// runCLI runs one invocation with the given environment and stdin.
func runCLI(t *testing.T, envVars map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := envVars[k]; return v, ok }
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb, lookup)
	return code, out.String(), errb.String()
}

func TestExitStatus(t *testing.T) {
	paste := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n"
	missing := filepath.Join(t.TempDir(), "missing.txt")
	tests := []struct {
		name    string
		env     map[string]string
		stdin   string
		args    []string
		want    int
		wantErr string // substring of stderr
	}{
		{"no command", nil, "", nil, 2, "usage"},
		{"unknown command suggests", nil, "", []string{"vrma"}, 2, "did you mean 'vrambot vram'"},
		{"help", nil, "", []string{"help"}, 0, ""},
		{"vram ok", nil, "", []string{"vram", "7b", "lora", "a100"}, 0, ""},
		{"vram json flag after query", nil, "", []string{"vram", "7b", "lora", "a100", "--json"}, 0, ""},
		{"vram no query", nil, "", []string{"vram"}, 2, "no query"},
		{"vram bad method", nil, "", []string{"vram", "7b", "lorra"}, 2, "lora"},
		{"vram negative batch", nil, "", []string{"vram", "7b", "bs=-4"}, 2, "bs"},
		{"vram unknown flag", nil, "", []string{"vram", "--jsn", "7b"}, 2, "jsn"},
		{"bad env names the variable", map[string]string{"VRAMBOT_TZ": "Nowhere/Land"}, "", []string{"vram", "7b"}, 2, "VRAMBOT_TZ"},
		{"oom from stdin", nil, paste, []string{"oom"}, 0, ""},
		{"oom no oom is success", nil, "hello world", []string{"oom", "-"}, 0, ""},
		{"oom missing file", nil, "", []string{"oom", missing}, 2, "missing.txt"},
		{"oom two files", nil, "", []string{"oom", "a", "b"}, 2, "2 files"},
		{"prices", nil, "", []string{"prices", "--gpu", "h100"}, 0, ""},
		{"prices bad gpu", nil, "", []string{"prices", "--gpu", "h1000"}, 2, "h1000"},
		{"prices bad memory", nil, "", []string{"prices", "--min-memory", "lots"}, 2, "min-memory"},
		{"digest dry run", nil, "", []string{"digest", "--dry-run"}, 0, ""},
		{"digest bad at", nil, "", []string{"digest", "--at", "yesterday"}, 2, "RFC 3339"},
		{"digest bad window", nil, "", []string{"digest", "--window", "-1h"}, 2, "window"},
		{"serve needs a token", nil, "", []string{"serve"}, 2, "SLACK_BOT_TOKEN"},
		{"manifest", map[string]string{"SLACK_APP_TOKEN": "xapp-1"}, "", []string{"manifest"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.env, tt.stdin, tt.args...)
			if code != tt.want {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.want, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr %q does not mention %q", stderr, tt.wantErr)
			}
			if tt.want == 2 && tt.args != nil && strings.Count(strings.TrimSpace(stderr), "\n") > 0 && tt.args[0] != "vrma" {
				t.Errorf("usage errors are one line, got %q", stderr)
			}
		})
	}
}

func TestVRAMJSONContract(t *testing.T) {
	code, out, stderr := runCLI(t, nil, "", "vram", "--json", "meta-llama/Llama-2-7b-hf", "lora", "rank=8", "targets=qv", "a100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"workload", "estimate", "gpu", "fits", "headroom_bytes", "stages", "offers"} {
		if _, ok := got[k]; !ok {
			t.Errorf("missing top-level %q", k)
		}
	}
	var w struct {
		Model           string `json:"model"`
		TrainableParams int64  `json:"trainable_params"`
	}
	if err := json.Unmarshal(got["workload"], &w); err != nil {
		t.Fatal(err)
	}
	if w.TrainableParams != 4194304 {
		t.Errorf("trainable_params = %d, want 4194304 (PEFT, Llama-2-7B r=8 q,v)", w.TrainableParams)
	}
}

func TestOOMJSONContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paste.txt")
	paste := "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.40 GiB already allocated; 12.44 MiB free; 6.52 GiB reserved in total by PyTorch)\n"
	if err := os.WriteFile(path, []byte(paste), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, nil, "", "oom", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got["detected"] != true || got["format"] != "pytorch-old" || got["tried_to_allocate_bytes"] != float64(20971520) {
		t.Errorf("got detected=%v format=%v tried=%v", got["detected"], got["format"], got["tried_to_allocate_bytes"])
	}
	if _, ok := got["diagnosis"].(map[string]any); !ok {
		t.Errorf("no diagnosis object")
	}
}

func TestPricesAndDigestJSON(t *testing.T) {
	code, out, stderr := runCLI(t, nil, "", "prices", "--json", "--min-memory", "80GiB")
	if code != 0 {
		t.Fatalf("prices exit %d: %s", code, stderr)
	}
	var prices struct {
		Offers  []map[string]any `json:"offers"`
		Sources []map[string]any `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &prices); err != nil || len(prices.Offers) == 0 || len(prices.Sources) == 0 {
		t.Fatalf("prices JSON: %v, %d offers, %d sources", err, len(prices.Offers), len(prices.Sources))
	}
	for _, o := range prices.Offers {
		if o["gpu_memory_bytes"].(float64) < 80*(1<<30)*0.99 {
			t.Errorf("offer below --min-memory: %v", o)
		}
	}

	code, out, stderr = runCLI(t, nil, "", "digest", "--json", "--dry-run", "--at", "2026-11-27T09:00:00Z")
	if code != 0 {
		t.Fatalf("digest exit %d: %s", code, stderr)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window", "gpus_seen", "near_oom", "idle_holding", "top_consumers", "oom_events", "suggestions", "data_quality"} {
		if _, ok := d[k]; !ok {
			t.Errorf("digest JSON lacks %q", k)
		}
	}
}

// TestDigestPricer checks the digest's prices come from the book: the
// cheapest fresh on-demand offer of the embedded snapshot for the GPU DCGM
// names (pricing's own tests cover the rules).
func TestDigestPricer(t *testing.T) {
	a, err := newApp(cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Lookup: func(string) (string, bool) { return "", false }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var p digest.Pricer = a.book
	usd, src, ok := p.PricePerGPUHour(context.Background(), "NVIDIA A100-SXM4-80GB")
	if !ok || usd <= 0 || !strings.Contains(src, "A100 80GB") || !strings.Contains(src, "as of") {
		t.Fatalf("A100 80GB: %v %q %v", usd, src, ok)
	}
	if _, _, ok := p.PricePerGPUHour(context.Background(), "Some Future GPU"); ok {
		t.Error("an unknown GPU got a price")
	}
}

// countingResolver is a LocalResolver that knows one model locally and
// counts the lookups that would go to the Hub.
type countingResolver struct{ hub int }

func (c *countingResolver) Resolve(_ context.Context, ref string) (models.Resolution, error) {
	if ref != "local/model-7b" {
		c.hub++
	}
	return models.Resolution{}, errors.New("unused")
}

func (c *countingResolver) ResolvesWithoutHub(_ context.Context, ref string) bool {
	return ref == "local/model-7b"
}

// TestOOMAnswersMakeNoHubRequest: the bot's OOM answer runs in a compute
// slot, so a job's model in the paste is resolved only from what needs no
// Hub request (issue 26: Hub I/O is not compute).
func TestOOMAnswersMakeNoHubRequest(t *testing.T) {
	r := &countingResolver{}
	res := withoutHub(r)
	if _, err := res.Resolve(context.Background(), "someone/hub-only-8b"); err == nil || errs.KindOf(err) != errs.Unavailable {
		t.Errorf("a Hub-only model: %v, want an Unavailable error", err)
	}
	res.Resolve(context.Background(), "local/model-7b")
	if r.hub != 0 {
		t.Errorf("%d lookups went to the Hub", r.hub)
	}
	paste := "```yaml\nbase_model: someone/hub-only-8b\nadapter: lora\nmicro_batch_size: 2\n```\n" +
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free.\n"
	rep, facts := commandSet{models: r}.OOM(context.Background(), paste)
	if !facts.Detected || r.hub != 0 {
		t.Errorf("detected %v, %d Hub lookups; want an answer and none", facts.Detected, r.hub)
	}
	if !strings.Contains(strings.Join(rep.Details.Context, " "), "not looked up on the Hub") {
		t.Errorf("the reply does not say the job's model was not looked up: %q", rep.Details.Context)
	}
}
