package job

import (
	"strings"
	"testing"
)

// The three general rules the held-out split's misses showed
// (docs/jobs.md §6): a command line a terminal hard-wrapped, a manifest
// written by a heredoc in a script, bitsandbytes' int8 CPU offload.

// tuneLine is a tune run line longer than a terminal.
const tuneLine = "tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full batch_size=4 enable_activation_checkpointing=True compile=True"

// hardWrap cuts s every width columns, as a terminal's copy does.
func hardWrap(s string, width int) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	return b.String() + s + "\n"
}

// TestHardWrap reads command lines a terminal wrapped at a fixed column,
// at a space or inside a word, and keeps separate commands apart.
func TestHardWrap(t *testing.T) {
	const full = "Meta-Llama-3.1-8B-Instruct full bs=4 precision=bf16 optim=adamw gc=on gpus=2 framework=torchtune loss=chunked optim-in-bwd=off act-offload=off ga=1"
	tests := []struct {
		name, text, query string
	}{
		// Cut at column 80, the space at the end of the first line.
		{"80 columns at a space", hardWrap(tuneLine, 80), full},
		// The same with the paste's trailing spaces taken off.
		{"80 columns, trailing space lost", strings.ReplaceAll(hardWrap(tuneLine, 80), " \n", "\n"), full},
		// Cut at column 100 inside enable_activation_checkpointing, a prompt first.
		{"mid-token", hardWrap("$ "+tuneLine, 100), full},
		// Inside --config, then inside a value: three lines, a prompt first.
		{"mid-token twice", hardWrap("user@gpu-box:~/torchtune$ "+tuneLine+" gradient_accumulation_steps=8", 83),
			strings.Replace(full, "ga=1", "ga=8", 1)},
		{"value cut", "tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full batch_size=\n4 compile=True\n", full},
		// A line that runs a command is not the rest of the one before.
		{"two commands", tuneLine + "\ntune run lora_finetune_single_device --config llama3_1/8B_lora_single_device batch_size=8\n", full},
		{"then curl", "vllm serve Qwen/Qwen3-8B --max-model-len 8192 --gpu-memory-utilization 0.9 --port 8000\ncurl http://localhost:8000/v1/models\n",
			"Qwen/Qwen3-8B inference seq=8192 engine=vllm gpu-util=0.9"},
		{"then nvidia-smi", "vllm serve Qwen/Qwen3-8B --max-model-len 8192 --gpu-memory-utilization 0.9 --enforce-eager\nnvidia-smi\n",
			"Qwen/Qwen3-8B inference seq=8192 engine=vllm gpu-util=0.9"},
		{"then a variable", "vllm serve Qwen/Qwen3-8B --max-model-len 8192 --gpu-memory-utilization 0.9 --port 8000\nMODEL=Qwen/Qwen3-32B\n",
			"Qwen/Qwen3-8B inference seq=8192 engine=vllm gpu-util=0.9"},
		// A short line is no terminal's wrap: max_model_len=4 there sets a variable.
		{"short line", "vllm serve Qwen/Qwen3-8B --port 8000\nmax_model_len=4\n", "Qwen/Qwen3-8B inference engine=vllm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Read(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := j.Words().String(); got != tt.query {
				t.Errorf("query\n got %s\nwant %s\n%s", got, tt.query, render(j, nil))
			}
		})
	}
}

// isvcYAML is a KServe InferenceService on the Hugging Face runtime.
const isvcYAML = `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: huggingface-llama3
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      args:
        - --model_name=llama3
        - --model_id=meta-llama/Meta-Llama-3-8B-Instruct
        - --max_model_len=4096
        - --tensor_parallel_size=2
      resources:
        limits:
          cpu: "6"
          memory: 24Gi
          nvidia.com/gpu: "2"
`

// TestHeredocManifest reads an InferenceService (and other jobs) a
// script writes or applies with a heredoc.
func TestHeredocManifest(t *testing.T) {
	const hf = "meta-llama/Meta-Llama-3-8B-Instruct inference seq=4096 tp=2 engine=vllm"
	tabbed := "\t" + strings.ReplaceAll(strings.TrimSuffix(isvcYAML, "\n"), "\n", "\n\t") + "\n"
	tests := []struct {
		name, text string
		format     Format
		query      string
	}{
		{"cat to a file", "# KServe, vLLM backend\ncat <<'EOF' > isvc.yaml\n" + isvcYAML + "EOF\nkubectl apply -f isvc.yaml\n", Kubernetes, hf},
		{"cat to a file alone", "cat > isvc.yaml <<EOF\n" + isvcYAML + "EOF\n", Kubernetes, hf},
		{"cat into kubectl", "cat <<EOF | kubectl apply -n llm -f -\n" + isvcYAML + "EOF\n", Kubernetes, hf},
		{"kubectl apply", "set -e\nkubectl create ns llm\nkubectl apply -n llm -f - <<EOF\n" + isvcYAML + "EOF\nkubectl get isvc -n llm\n", Kubernetes, hf},
		{"tabs taken off", "deploy() {\n\tkubectl apply -f - <<-EOF\n" + tabbed + "\tEOF\n}\ndeploy\n", Kubernetes, hf},
		{"tee", "tee isvc.yaml <<'YAML'\n" + isvcYAML + "YAML\n", Kubernetes, hf},
		{"predictor containers", "kubectl apply -f - <<EOF\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: qwen\nspec:\n  predictor:\n    containers:\n      - name: kserve-container\n        image: vllm/vllm-openai:v0.8.5\n        command: [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]\n        args: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\", \"--port\", \"8080\", \"--max-model-len\", \"8192\"]\n        resources:\n          limits:\n            nvidia.com/gpu: \"1\"\nEOF\n",
			Kubernetes, "Qwen/Qwen2.5-7B-Instruct inference seq=8192 engine=vllm"},
		{"storageUri on the Hub", "cat > isvc.yaml <<EOF\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: qwen\nspec:\n  predictor:\n    model:\n      modelFormat:\n        name: huggingface\n      storageUri: hf://Qwen/Qwen2.5-7B-Instruct\n      args: [--max-model-len=16384]\n      resources:\n        limits: {nvidia.com/gpu: 1}\nEOF\n",
			Kubernetes, "Qwen/Qwen2.5-7B-Instruct inference seq=16384 engine=vllm"},
		{"huggingfaceserver image", "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: x\nspec:\n  predictor:\n    containers:\n      - name: kserve-container\n        image: kserve/huggingfaceserver:v0.15.0\n        args: [--model_name=x, --model_id=Qwen/Qwen3-8B, --max_model_len=8192]\n",
			Kubernetes, "Qwen/Qwen3-8B inference seq=8192 engine=vllm"},
		{"an axolotl config written", "mkdir -p configs\ncat > configs/qlora.yml <<EOF\nbase_model: Qwen/Qwen3-8B\nadapter: qlora\nload_in_4bit: true\nsequence_len: 2048\nEOF\naxolotl train configs/qlora.yml\n",
			Axolotl, "Qwen/Qwen3-8B qlora seq=2048 gc=off framework=axolotl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Read(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if j.Format != tt.format || j.Words().String() != tt.query {
				t.Errorf("got %s %s\nwant %s %s\n%s", j.Format, j.Words(), tt.format, tt.query, render(j, nil))
			}
		})
	}
	// Text in a heredoc that is no job is not one.
	for _, text := range []string{"cat <<EOF > notes.txt\nfoo: bar\nEOF\n", "cat <<EOF > x.yaml\na: [\nEOF\n", "grep x <<< \"$(cat y)\"\nvllm serve Qwen/Qwen3-8B\n"} {
		j, err := Read(text)
		if strings.HasPrefix(text, "grep") {
			if err != nil || j.Model != "Qwen/Qwen3-8B" {
				t.Errorf("%q: %v %v, want vllm's job after a here-string", text, j.Model, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q read as %s", text, j.Format)
		}
	}
}

// TestInt8CPUOffload reads llm_int8_enable_fp32_cpu_offload, an int8
// option: 8-bit weights unless a load says otherwise.
func TestInt8CPUOffload(t *testing.T) {
	tests := []struct {
		name, text, query string
		assumed           bool
	}{
		{"python alone", "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nq = BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True)\nm = AutoModelForCausalLM.from_pretrained('bigscience/bloom-1b7', device_map={'lm_head': 'cpu', 'transformer': 0}, quantization_config=q)\n",
			"bigscience/bloom-1b7 inference precision=int8", true},
		{"python 4-bit after", "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nq = BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True, load_in_4bit=True, bnb_4bit_quant_type='nf4')\nm = AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1', quantization_config=q, device_map='auto')\n",
			"mistralai/Mistral-7B-v0.1 inference precision=nf4", false},
		{"python 4-bit before", "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nq = BitsAndBytesConfig(load_in_4bit=True, llm_int8_enable_fp32_cpu_offload=True)\nm = AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1', quantization_config=q)\n",
			"mistralai/Mistral-7B-v0.1 inference precision=nf4", false},
		{"python off", "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nq = BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=False)\nm = AutoModelForCausalLM.from_pretrained('bigscience/bloom-1b7', quantization_config=q)\n",
			"bigscience/bloom-1b7 inference", false},
		{"yaml", "model_name_or_path: meta-llama/Llama-2-13b-hf\nuse_peft: true\nlora_r: 16\nllm_int8_enable_fp32_cpu_offload: true\nper_device_train_batch_size: 2\nmax_seq_length: 1024\n",
			"meta-llama/Llama-2-13b-hf lora bs=2 seq=1024 precision=int8 rank=16 framework=trl", true},
		{"json quantization_config", `{"model_name_or_path": "meta-llama/Llama-2-13b-hf", "use_peft": true, "per_device_train_batch_size": 1,
  "quantization_config": {"quant_method": "bitsandbytes", "llm_int8_enable_fp32_cpu_offload": true, "llm_int8_threshold": 6.0}}`,
			"meta-llama/Llama-2-13b-hf lora bs=1 seq=1024 precision=int8 framework=trl", true},
		{"json 4-bit", `{"model_name_or_path": "meta-llama/Llama-2-13b-hf", "use_peft": true,
  "quantization_config": {"llm_int8_enable_fp32_cpu_offload": true, "load_in_4bit": true, "_load_in_4bit": true}}`,
			"meta-llama/Llama-2-13b-hf qlora bs=8 seq=1024 framework=trl", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Read(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := j.Words().String(); got != tt.query {
				t.Errorf("query\n got %s\nwant %s\n%s", got, tt.query, render(j, nil))
			}
			assumed := strings.Contains(strings.Join(j.Notes, "\n"), "assumed 8-bit")
			if assumed != tt.assumed {
				t.Errorf("assumption noted %v, want %v\n%s", assumed, tt.assumed, render(j, nil))
			}
		})
	}
}
