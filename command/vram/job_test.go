package vram_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/reply"
)

// jobFile reads a job of the job package's tests (job/testdata/jobs).
func jobFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "job", "testdata", "jobs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var goldenJobs = []struct {
	name, file, words string
}{
	{"job-axolotl-4090", "own/axolotl-llama31-8b-qlora.yml", "4090"},
	{"job-vllm-h100", "own/vllm-serve-qwen3-8b.sh", "h100"},
	{"job-torchtune-override", "own/torchtune-llama31-8b-qlora.yaml", "4090 bs=8"},
	{"job-deepspeed-model", "own/deepspeed-zero3-offload.json", "llama-3.1-8b 4xa100"},
}

// TestEstimateJobGolden: the answer to a job as written, text and JSON.
func TestEstimateJobGolden(t *testing.T) {
	for _, tt := range goldenJobs {
		t.Run(tt.name, func(t *testing.T) {
			a, err := vram.EstimateJob(context.Background(), jobFile(t, tt.file), tt.words, vram.Deps{Offers: newVRAMOffers()})
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".txt", []byte(reply.Text(a.Reply)))
			js, err := json.MarshalIndent(a.Result, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".json", append(js, '\n'))
		})
	}
}

// TestJobJSONContract: --json --job adds job {format, read, ignored,
// unknown} to the vram object (docs/jobs.md §1), whose workload is the
// job's.
func TestJobJSONContract(t *testing.T) {
	a, err := vram.EstimateJob(context.Background(), jobFile(t, "own/axolotl-llama31-8b-qlora.yml"), "4090", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(a.Result)
	var got map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	j, ok := got["job"].(map[string]any)
	if !ok {
		t.Fatalf("no job object: %s", js)
	}
	if j["format"] != "axolotl" {
		t.Errorf("format %v", j["format"])
	}
	for _, k := range []string{"read", "ignored", "unknown"} {
		if _, ok := j[k].([]any); !ok {
			t.Errorf("job.%s is %T, want a list", k, j[k])
		}
	}
	first := j["read"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "value", "as"} {
		if _, ok := first[k].(string); !ok {
			t.Errorf("read item has no %s: %v", k, first)
		}
	}
	w := got["workload"].(map[string]any)
	if w["method"] != "qlora" || w["batch"] != 2.0 || w["seq_len"] != 4096.0 {
		t.Errorf("workload %v %v %v, want the job's qlora bs=2 seq=4096", w["method"], w["batch"], w["seq_len"])
	}
	for _, f := range job.Formats {
		if !strings.Contains(string(js), `"format":"axolotl"`) && f == job.Axolotl {
			t.Errorf("format names changed")
		}
	}
}

// TestEstimateJobOverrides: the query words win over the file, and the
// reply says which.
func TestEstimateJobOverrides(t *testing.T) {
	a, err := vram.EstimateJob(context.Background(), jobFile(t, "own/axolotl-llama31-8b-qlora.yml"), "4090 bs=4 seq=2048", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Workload.Batch != 4 || a.Result.Workload.SeqLen != 2048 {
		t.Errorf("bs %d seq %d, want the words' 4 and 2048", a.Result.Workload.Batch, a.Result.Workload.SeqLen)
	}
	text := reply.Text(a.Reply)
	for _, want := range []string{"Your words won: bs=4 over the file's micro_batch_size: 2", "seq=2048 over the file's sequence_len: 4096", "From your axolotl config: 14 keys read"} {
		if !strings.Contains(text, want) {
			t.Errorf("reply does not say %q:\n%s", want, text)
		}
	}
	if len(a.Result.Job.Overrides) != 2 {
		t.Errorf("overrides %+v", a.Result.Job.Overrides)
	}
}

// TestJobQuery: the job as query words, for another command to size.
func TestJobQuery(t *testing.T) {
	q, jr, err := vram.JobQuery(jobFile(t, "own/vllm-serve-qwen3-8b.sh"), "l40s")
	if err != nil {
		t.Fatal(err)
	}
	if q != "Qwen/Qwen3-8B inference l40s seq=32000 tp=2 kv=fp8 engine=vllm gpu-util=0.92" || jr.Format != "vllm" {
		t.Errorf("query %q format %s", q, jr.Format)
	}
	paste := jobFile(t, "own/axolotl-llama31-8b-qlora.yml") + "\nTraceback (most recent call last):\n  File \"train.py\", line 3\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB.\n"
	if q, _, err := vram.JobQuery(paste, ""); err != nil || !strings.HasPrefix(q, "NousResearch/Meta-Llama-3.1-8B qlora") {
		t.Errorf("a job with its traceback: %q, %v", q, err)
	}
}

// TestEstimateJobBadInput: each error is the user's to fix, with its
// message.
func TestEstimateJobBadInput(t *testing.T) {
	tests := []struct {
		name, text, words, want string
	}{
		{"no job", "hello there", "", "not a training config or launch command I know"},
		{"no model", jobFile(t, "own/deepspeed-zero3-offload.json"), "a100", "names no model"},
		{"bad words", jobFile(t, "own/axolotl-llama31-8b-qlora.yml"), "bs=lots", "bs"},
		{"yaml error", "base_model: x\n\tadapter: lora\n", "", "line 2, column 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vram.EstimateJob(context.Background(), tt.text, tt.words, vram.Deps{})
			if err == nil || !strings.Contains(errs.UserMessage(err), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if k := errs.KindOf(err); k != errs.Invalid {
				t.Errorf("kind %v, want invalid", k)
			}
			var je *job.Error
			if tt.name == "no job" && (!errors.As(err, &je) || !je.NotAJob) {
				t.Errorf("not a *job.Error saying no job: %v", err)
			}
		})
	}
}

// BenchmarkEstimateJob and BenchmarkEstimate answer the same workload
// from a job file and from its query: the difference is what reading the
// job adds (docs/jobs.md §5: under a millisecond).
func BenchmarkEstimateJob(b *testing.B) {
	text := jobFile(b, "own/axolotl-llama31-8b-qlora.yml")
	for b.Loop() {
		if _, err := vram.EstimateJob(context.Background(), text, "4090", vram.Deps{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEstimate(b *testing.B) {
	q, _, err := vram.JobQuery(jobFile(b, "own/axolotl-llama31-8b-qlora.yml"), "4090")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := vram.Estimate(context.Background(), q, vram.Deps{}); err != nil {
			b.Fatal(err)
		}
	}
}
