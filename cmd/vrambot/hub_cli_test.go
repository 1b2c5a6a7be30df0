package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
)

const hubOnlyRepo = "vrambot-test/Hubonly-8B"

func newFakeHub(t *testing.T) *hubtest.Server {
	fake := hubtest.New(t)
	fake.Add(hubtest.Model{ID: hubOnlyRepo, Config: []byte(hubtest.Qwen3Config), Downloads: 3,
		Safetensors: &hub.Safetensors{Parameters: map[string]int64{"BF16": 8_190_735_360}, Total: 8_190_735_360}})
	fake.Add(hubtest.Model{ID: "vrambot-test/Gated-Model", Config: []byte(hubtest.Qwen3Config), Gated: true})
	fake.Add(hubtest.Model{ID: "vrambot-test/Garbage-Model", Config: []byte("<html>not json</html>")})
	return fake
}

// TestCLIHubModel: a model only on the Hub, answered through HF_ENDPOINT
// pointed at a fake Hub, and each Hub failure with its one-line message
// and exit status (docs/contracts.md §1: 2 for what the user can fix, 1 for a
// service that did not answer).
func TestCLIHubModel(t *testing.T) {
	fake := newFakeHub(t)
	closed := hubtest.New(t)
	closed.Close()
	env := map[string]string{"HF_ENDPOINT": fake.URL}
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"hub model", env, []string{"vram", "--json", hubOnlyRepo, "lora", "4090"}, 0, `"model": "` + hubOnlyRepo + `"`, ""},
		{"hub model by bare name", env, []string{"vram", "hubonly-8b", "inference", "h100"}, 0, "'hubonly-8b' read as " + hubOnlyRepo, ""},
		{"missing", env, []string{"vram", "vrambot-test/Nope", "lora"}, 2, "", "vrambot: unknown model 'vrambot-test/Nope': not in the catalog — looked up on the Hub: no model vrambot-test/Nope on the Hub"},
		{"gated, no token", env, []string{"vram", "vrambot-test/Gated-Model"}, 2, "", "is gated: set HF_TOKEN"},
		{"gated, token", map[string]string{"HF_ENDPOINT": fake.URL, "HF_TOKEN": hubtest.Token}, []string{"vram", "vrambot-test/Gated-Model"}, 0, "Gated-Model", ""},
		{"garbage JSON", env, []string{"vram", "vrambot-test/Garbage-Model"}, 2, "", "is not a JSON object"},
		{"unreachable, no size", map[string]string{"HF_ENDPOINT": closed.URL}, []string{"vram", "vrambot-test/Some-Model", "lora"}, 1, "", "cannot be reached (the connection was refused); give its size (e.g. 8b) or its config.json"},
		{"unreachable, size in the name", map[string]string{"HF_ENDPOINT": closed.URL}, []string{"vram", "someorg/Foo-8B-Instruct", "lora"}, 0, "estimated as a typical 8B model from the size in its name", ""},
		{"offline", map[string]string{"HF_ENDPOINT": fake.URL, "HF_HUB_OFFLINE": "1"}, []string{"vram", hubOnlyRepo + "x"}, 2, "", "HF_HUB_OFFLINE=1"},
		{"bad HF_ENDPOINT", map[string]string{"HF_ENDPOINT": "hub.example"}, []string{"vram", "7b"}, 2, "", "HF_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.env, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stdout %.400q\nstderr %q\nwant %q / %q", stdout, stderr, tt.stdout, tt.stderr)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("not one line: %q", stderr)
			}
			if strings.Contains(stdout+stderr, hubtest.Token) {
				t.Error("HF_TOKEN printed")
			}
		})
	}
	var sawToken bool
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, hubOnlyRepo+"x/resolve/main/config.json") {
			t.Error("HF_HUB_OFFLINE=1 called the Hub")
		}
		sawToken = sawToken || r.Authorization == "Bearer "+hubtest.Token
	}
	if !sawToken {
		t.Error("HF_TOKEN was not sent as a bearer token")
	}
}

// TestCLIHubTimeout: the CLI waits 3 s for the Hub, then answers from the
// size in the name.
func TestCLIHubTimeout(t *testing.T) {
	fake := newFakeHub(t)
	fake.SetDelay(time.Minute)
	start := time.Now()
	code, stdout, stderr := runCLI(t, map[string]string{"HF_ENDPOINT": fake.URL}, "", "vram", "someorg/Slow-13B", "inference")
	took := time.Since(start)
	if code != 0 || !strings.Contains(stdout, "did not answer in time: estimated as a typical 13B model") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if took < cliHubTimeout-100*time.Millisecond || took > cliHubTimeout+5*time.Second {
		t.Errorf("took %s, want about %s", took, cliHubTimeout)
	}
}

// TestCLIConfigFile: vram --config reads a local config.json; a file that
// is missing, too large or not a config is refused with exit status 2.
func TestCLIConfigFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Private-8B")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	big := filepath.Join(t.TempDir(), "big.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	for p, data := range map[string]string{path: hubtest.Qwen3Config, big: strings.Repeat(" ", hfconfig.MaxConfigBytes+1), bad: `{"hidden_size": 4096}`} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hubEnv := map[string]string{"HF_ENDPOINT": "http://127.0.0.1:1"} // never called
	code, stdout, stderr := runCLI(t, hubEnv, "", "vram", "--json", "--config", path, "inference", "h100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Workload struct {
			Model       string   `json:"model"`
			Params      int64    `json:"params"`
			Assumptions []string `json:"assumptions"`
		} `json:"workload"`
		Estimate struct {
			KVCacheBytes int64 `json:"kv_cache_bytes"`
		} `json:"estimate"`
		GPU struct {
			Key string `json:"key"`
		} `json:"gpu"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got.Workload.Model != "Private-8B" || got.Workload.Params < 8e9 || got.GPU.Key != "H100-SXM" || got.Estimate.KVCacheBytes <= 0 {
		t.Errorf("got %+v", got)
	}
	if code, stdout, _ := runCLI(t, hubEnv, hubtest.Qwen3Config, "vram", "--config", "-", "lora", "4090"); code != 0 || !strings.Contains(stdout, "config.json · LoRA") {
		t.Errorf("stdin config: exit %d %.200s", code, stdout)
	}
	if code, _, _ := runCLI(t, hubEnv, "", "vram", "--config", path); code != 0 {
		t.Errorf("config with no query: exit %d", code)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"vram", "--config", filepath.Join(dir, "missing.json"), "inference"}, "missing.json"},
		{[]string{"vram", "--config", big, "inference"}, fmt.Sprintf("larger than %d KiB", hfconfig.MaxConfigBytes>>10)},
		{[]string{"vram", "--config", bad, "inference"}, `config.json has no "num_hidden_layers"`},
		{[]string{"vram", "--config", path, "llama-2-7b"}, "two models given"},
	} {
		code, _, stderr := runCLI(t, hubEnv, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestCLIModels(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "", "models", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.Models) == 0 {
		t.Fatalf("models JSON: %v %.200s", err, stdout)
	}
	for _, key := range []string{"name", "id", "params", "active_params", "context", "source"} {
		if _, ok := res.Models[0][key]; !ok {
			t.Errorf("models[0] has no %q: %v", key, res.Models[0])
		}
	}
	if code, stdout, _ := runCLI(t, nil, "", "models", "llama"); code != 0 || !strings.Contains(stdout, "Llama-2-7B") || strings.Contains(stdout, "GPT-2") {
		t.Errorf("models llama: exit %d %.300s", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "", "models", "zzzqqq"); code != 2 || !strings.Contains(stderr, "no catalog model matches") {
		t.Errorf("no match: exit %d %q", code, stderr)
	}
	if code, _, _ := runCLI(t, nil, "", "models", "a", "b"); code != 2 {
		t.Errorf("two words: exit %d", code)
	}
}
