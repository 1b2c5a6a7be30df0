package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIJobFile: vram --job reads a job as written, from a file or
// stdin, with the query words beside it; what is no job, too large or
// missing is refused with exit status 2.
func TestCLIJobFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	big := filepath.Join(dir, "big.yml")
	prose := filepath.Join(dir, "notes.txt")
	for p, data := range map[string]string{
		cfg:   "base_model: Qwen/Qwen3-8B\nadapter: qlora\nload_in_4bit: true\nmicro_batch_size: 2\nsequence_len: 2048\nlearning_rate: 0.0002\n",
		big:   strings.Repeat("# padding\n", 30000),
		prose: "remember to buy more GPUs",
	} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HF_HUB_OFFLINE": "1"}
	code, stdout, stderr := runCLI(t, env, "", "vram", "--json", "--job", cfg, "4090", "bs=4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Workload struct {
			Method string `json:"method"`
			Batch  int    `json:"batch"`
		} `json:"workload"`
		Job struct {
			Format  string `json:"format"`
			Read    []struct{ Key, Value, As string }
			Ignored []string `json:"ignored"`
			Unknown []string `json:"unknown"`
		} `json:"job"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got.Job.Format != "axolotl" || got.Workload.Method != "qlora" || got.Workload.Batch != 4 || len(got.Job.Read) == 0 || got.Job.Ignored[0] != "learning_rate" {
		t.Errorf("got %+v", got)
	}
	if code, stdout, _ := runCLI(t, env, "vllm serve Qwen/Qwen3-8B --max-model-len 8192", "vram", "--job", "-", "l4"); code != 0 || !strings.Contains(stdout, "vLLM") {
		t.Errorf("stdin job: exit %d %.300s", code, stdout)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"vram", "--job", filepath.Join(dir, "missing.yml")}, "missing.yml"},
		{[]string{"vram", "--job", big}, "larger than 256 KiB"},
		{[]string{"vram", "--job", prose}, "not a training config or launch command I know"},
		{[]string{"vram", "--job", cfg, "--config", cfg}, "--config and --job"},
		{[]string{"vram", "--job", cfg, "llama-2-7b", "bs=x"}, "bs"},
	} {
		code, _, stderr := runCLI(t, env, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
