package job

import (
	"errors"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/query"
)

// TestRead reads small jobs of every format, as their tools' docs write
// them, and checks the query each makes.
func TestRead(t *testing.T) {
	tests := []struct {
		name, text string
		format     Format
		query      string
	}{
		{"axolotl full defaults", "base_model: Qwen/Qwen3-8B\nmicro_batch_size: 4\n", Axolotl,
			"Qwen/Qwen3-8B full bs=4 seq=512 precision=bf16 gc=off framework=axolotl"},
		{"axolotl lora 8bit", "base_model: mistralai/Mistral-7B-v0.1\nadapter: lora\nload_in_8bit: true\nlora_r: 16\nlora_target_modules: [q_proj, v_proj]\nsequence_len: 2048\n", Axolotl,
			"mistralai/Mistral-7B-v0.1 lora seq=2048 precision=int8 gc=off rank=16 targets=qv framework=axolotl"},
		{"axolotl fsdp offload", "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nfsdp_version: 2\nfsdp_config:\n  offload_params: true\n  reshard_after_forward: false\ngradient_checkpointing: offload\n", Axolotl,
			"meta-llama/Llama-3.1-8B full fsdp seq=4096 precision=bf16 gc=offloaded zero=2 offload=param framework=axolotl"},
		{"axolotl sync each batch", "base_model: Qwen/Qwen3-8B\nsequence_len: 2048\ngradient_accumulation_steps: 4\naccelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: True\n", Axolotl,
			"Qwen/Qwen3-8B full seq=2048 precision=bf16 gc=off framework=axolotl ga=4 sync-each-batch=on"},
		{"trl sync each batch", "from trl import SFTConfig\nargs = SFTConfig(gradient_accumulation_steps=4, accelerator_config={\"gradient_accumulation_kwargs\": {\"sync_each_batch\": False}, \"split_batches\": True})\n", TRL,
			"full bs=8 seq=1024 precision=mixed-bf16 framework=trl ga=4 sync-each-batch=off"},
		{"axolotl deepspeed bundled", "base_model: x/Llama-3-8B\ndeepspeed: deepspeed_configs/zero3_bf16.json\nsequence_len: 1024\n", Axolotl,
			"x/Llama-3-8B full seq=1024 precision=bf16 gc=off zero=3 framework=axolotl"},
		{"axolotl deepspeed elsewhere", "base_model: x/Llama-3-8B\ndeepspeed: /work/my_zero3.json\nsequence_len: 1024\n", Axolotl,
			"x/Llama-3-8B full seq=1024 precision=bf16 gc=off framework=axolotl"},
		{"llama-factory full", "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: full\nbf16: true\ncutoff_len: 4096\nper_device_train_batch_size: 2\n", LlamaFactory,
			"Qwen/Qwen3-4B full bs=2 seq=4096 precision=mixed-bf16 framework=llama-factory"},
		{"llama-factory pure bf16 freeze", "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: freeze\nbf16: true\npure_bf16: true\n", LlamaFactory,
			"Qwen/Qwen3-4B freeze bs=8 seq=2048 precision=bf16 framework=llama-factory"},
		{"torchtune full", "model:\n  _component_: torchtune.models.qwen2_5.qwen2_5_0_5b\nbatch_size: 8\noptimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\noptimizer_in_bwd: True\ndtype: bf16\n", Torchtune,
			"qwen2.5-0.5b full bs=8 precision=bf16 optim=paged-adamw-8bit framework=torchtune optim-in-bwd=on"},
		{"deepspeed", `{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}, "train_micro_batch_size_per_gpu": 4}`, DeepSpeed,
			"full bs=4 zero=2 offload=optimizer"},
		{"accelerate deepspeed", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_param_device: cpu\nnum_processes: 4\n", Accelerate,
			"full zero=3 offload=param gpus=4"},
		{"vllm serve", "vllm serve Qwen/Qwen3-8B --tp 2 --max-model-len 8192 --gpu-memory-utilization=0.8", VLLM,
			"Qwen/Qwen3-8B inference seq=8192 tp=2 engine=vllm gpu-util=0.8"},
		{"vllm api server", "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct --quantization fp8 --dtype half", VLLM,
			"meta-llama/Llama-3.1-8B-Instruct inference precision=fp8 engine=vllm"},
		{"vllm v0 env", "VLLM_USE_V1=0 vllm serve Qwen/Qwen3-8B --max-model-len 4K", VLLM,
			"Qwen/Qwen3-8B inference seq=4096 engine=vllm engine-version=v0"},
		{"sglang", "python3 -m sglang.launch_server --model-path Qwen/QwQ-32B --tp-size 2 --context-length 32768 --max-running-requests 64", SGLang,
			"Qwen/QwQ-32B inference seq=32768 tp=2 engine=sglang max-num-seqs=64"},
		{"llama.cpp", "./llama-server -m ~/models/Llama-3.1-8B-Instruct-Q8_0.gguf -c 8192 -ngl 20 -ctk q8_0", LlamaCpp,
			"Llama-3.1-8B-Instruct-Q8_0 inference seq=8192 precision=q8_0 kv=int8 engine=llama.cpp gpu-layers=20"},
		{"llama.cpp hf", "llama-cli -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 4096", LlamaCpp,
			"unsloth/Qwen3-8B-GGUF inference seq=4096 precision=q4_k_m engine=llama.cpp"},
		{"ollama run", "ollama run llama3.1:8b", Ollama, "llama3.1:8b inference engine=ollama"},
		{"modelfile", "FROM qwen2.5:14b\nPARAMETER num_ctx 32768\nPARAMETER num_gpu 30\n", Ollama,
			"qwen2.5:14b inference seq=32768 engine=ollama gpu-layers=30"},
		{"docker sglang", "docker run --gpus all --shm-size 32g -p 30000:30000 lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 0.8", Docker,
			"Qwen/Qwen3-8B inference engine=sglang gpu-util=0.8"},
		{"dockerfile", "FROM vllm/vllm-openai:v0.10.1\nENV VLLM_USE_V1=1\nCMD [\"--model\", \"Qwen/Qwen3-8B\", \"--max-model-len\", \"16384\"]\n", Docker,
			"Qwen/Qwen3-8B inference seq=16384 engine=vllm"},
		{"trl cli", "trl sft --model_name_or_path Qwen/Qwen2.5-0.5B --per_device_train_batch_size 2 --gradient_checkpointing False", TRL,
			"Qwen/Qwen2.5-0.5B full bs=2 seq=1024 precision=mixed-bf16 gc=off framework=trl"},
		{"torchrun script", "torchrun --nproc_per_node 8 run_clm.py --model_name_or_path gpt2 --per_device_train_batch_size 8 --fp16 --block_size 1024", Transformers,
			"gpt2 full bs=8 precision=mixed-fp16 gpus=8 framework=hf"},
		{"accelerate launch trl", "accelerate launch --num_processes 2 --mixed_precision bf16 examples/scripts/sft.py --model_name_or_path Qwen/Qwen3-8B --use_peft --lora_r 16", TRL,
			"Qwen/Qwen3-8B lora bs=8 seq=1024 precision=fp32 gpus=2 rank=16 framework=trl"},
		{"transformers python", "from transformers import AutoModelForCausalLM, TrainingArguments\nmodel = AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.bfloat16)\nargs = TrainingArguments(per_device_train_batch_size=16, gradient_checkpointing=True, optim='adafactor')\n", Transformers,
			"gpt2 full bs=16 precision=bf16 optim=adafactor gc=on framework=hf"},
		{"inference python", "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-3.1-8B\", load_in_8bit=True)\n", Transformers,
			"meta-llama/Llama-3.1-8B inference precision=int8"},
		{"unsloth full", "from unsloth import FastModel\nmodel, tok = FastModel.from_pretrained(model_name='unsloth/gemma-3-4b-it', max_seq_length=1024, full_finetuning=True)\nfrom trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model=model, args=SFTConfig(per_device_train_batch_size=1))\n", Unsloth,
			"unsloth/gemma-3-4b-it full bs=1 seq=1024 framework=unsloth"},
		{"kubernetes", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: x\n    image: vllm/vllm-openai\n    args: [\"--model\", \"Qwen/Qwen3-8B\", \"--tensor-parallel-size\", \"2\"]\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n", Kubernetes,
			"Qwen/Qwen3-8B inference tp=2 engine=vllm"},
		{"fenced in a message", "here is my config, will it fit on a 4090?\n```yaml\nbase_model: Qwen/Qwen3-8B\nadapter: qlora\nload_in_4bit: true\nsequence_len: 2048\n```", Axolotl,
			"Qwen/Qwen3-8B qlora seq=2048 gc=off framework=axolotl"},
		{"job then traceback", "vllm serve Qwen/Qwen3-8B --max-model-len 32768\nTraceback (most recent call last):\n  File \"x.py\", line 1\ntorch.OutOfMemoryError: CUDA out of memory.\n", VLLM,
			"Qwen/Qwen3-8B inference seq=32768 engine=vllm"},
		{"prompt and continuation", "(venv) $ vllm serve \\\n    Qwen/Qwen3-8B \\\n    --max-num-seqs 32", VLLM,
			"Qwen/Qwen3-8B inference engine=vllm max-num-seqs=32"},
		{"windows continuation", "C:\\llama>llama-server.exe -m C:\\models\\Mistral-7B-Instruct-v0.3.Q4_K_M.gguf ^\n  -c 2048", LlamaCpp,
			"Mistral-7B-Instruct-v0.3.Q4_K_M inference seq=2048 precision=q4_k_m engine=llama.cpp"},
		{"argparse prefix", "vllm serve Qwen/Qwen3-8B --max-num-batched-token 4096", VLLM,
			"Qwen/Qwen3-8B inference engine=vllm max-num-batched-tokens=4096"},
		{"served name for a folder", "vllm serve /data/ --served-model-name opt-125m", VLLM,
			"opt-125m inference engine=vllm"},
		{"terminal wrap", "tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device\nbatch_size=8 tokenizer.max_seq_len=1024\n--nproc_per_node 1\n", Torchtune,
			"Meta-Llama-3.1-8B-Instruct lora bs=8 seq=1024 precision=bf16 optim=adamw gc=on rank=8 targets=all framework=torchtune loss=chunked act-offload=off ga=8"},
		{"wrapped overrides", "tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device\ntokenizer.max_seq_len=1024 batch_size=8\n", Torchtune,
			"Meta-Llama-3.1-8B-Instruct lora bs=8 seq=1024 precision=bf16 optim=adamw gc=on rank=8 targets=all framework=torchtune loss=chunked act-offload=off ga=8"},
		{"kserve huggingface runtime", "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor:\n    model:\n      modelFormat:\n        name: huggingface\n      args:\n        - --model_name=llama3\n        - --model_id=meta-llama/Meta-Llama-3-8B-Instruct\n        - --max-model-len=8192\n      resources:\n        limits:\n          nvidia.com/gpu: \"1\"\n", Kubernetes,
			"meta-llama/Meta-Llama-3-8B-Instruct inference seq=8192 engine=vllm"},
		{"computed engine argument", "from vllm import LLM\nllm = LLM(model=\"Qwen/Qwen3-8B\", kv_transfer_config=KVTransferConfig(kv_connector=\"X\"), max_model_len=4096)\n", VLLM,
			"Qwen/Qwen3-8B inference seq=4096 engine=vllm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Read(tt.text)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if j.Format != tt.format {
				t.Errorf("format %s, want %s", j.Format, tt.format)
			}
			if got := j.Words().String(); got != tt.query {
				t.Errorf("query\n got %s\nwant %s", got, tt.query)
			}
			for _, s := range j.Settings {
				if _, err := query.CheckValue(s.Key, s.Value); err != nil {
					t.Errorf("setting %s=%s is not the grammar's: %v", s.Key, s.Value, err)
				}
			}
		})
	}
}

// TestBadInput: what is no job, or cannot be read, gets a clear message
// of kind Invalid, never a crash or a hang.
func TestBadInput(t *testing.T) {
	bomb := "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
	for i, prev := 0, "a"; i < 8; i++ {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = name
	}
	bomb += "base_model: *i\n"
	tests := []struct {
		name, text string
		want       string // in the message
		line, col  int
		notAJob    bool
	}{
		{"empty", "   \n", "empty", 0, 0, true},
		{"prose", "hello, how much memory do I need for a 70B model?", "not a training config or launch command I know", 0, 0, true},
		{"a config.json", `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32}`, "--config", 0, 0, true},
		{"package.json", `{"name": "x", "scripts": {"build": "mkdocs build"}}`, "not a training config", 0, 0, true},
		{"json syntax", "{\n  \"zero_optimization\": {\n    \"stage\": 3,\n  }\n}", "JSON", 4, 3, false},
		{"yaml tab", "base_model: x\n\tmicro_batch_size: 2\n", "YAML", 2, 1, false},
		{"yaml mapping", "base_model: Qwen/Qwen3-8B\nadapter: lora: qlora\n", "YAML", 2, 14, false},
		{"alias bomb", bomb, "more than", 0, 0, false},
		{"too large", strings.Repeat("a", MaxBytes+1), "KiB", 0, 0, false},
		{"not utf-8", "base_model: \xff\xfe", "UTF-8", 0, 0, false},
		{"deep json", strings.Repeat("[", 100) + strings.Repeat("]", 100), "deeper", 0, 0, false},
		{"config path only", "axolotl train examples/llama-3/qlora.yml", "not in it", 0, 0, true},
		{"python not run", "import os\nos.system('rm -rf /')\n", "not a training config", 0, 0, true},
		{"a README", "# Tool\n\n## Install\n```sh\npip install x\n```\n## Train\n```yaml\nbase_model: Qwen/Qwen3-8B\n```\n```sh\nx train a.yml\n```\n## Serve\n```sh\nvllm serve Qwen/Qwen3-8B\n```\n", "Markdown document", 0, 0, true},
		{"deep yaml", "a: " + strings.Repeat("[", 20000), "depth", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Read(tt.text)
			if err == nil {
				t.Fatalf("read as %s %q, want an error", j.Format, j.Words().String())
			}
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("error %T %v, want *job.Error", err, err)
			}
			if errs.KindOf(err) != errs.Invalid {
				t.Errorf("kind %v, want invalid", errs.KindOf(err))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if je.Line != tt.line || je.Column != tt.col {
				t.Errorf("at line %d column %d, want %d:%d (%v)", je.Line, je.Column, tt.line, tt.col, err)
			}
			if je.NotAJob != tt.notAJob {
				t.Errorf("NotAJob %v, want %v", je.NotAJob, tt.notAJob)
			}
			if len(err.Error()) > 400 {
				t.Errorf("message of %d bytes", len(err.Error()))
			}
		})
	}
}

// TestSecretsNotEchoed: a token in a file is read as a key, never shown.
func TestSecretsNotEchoed(t *testing.T) {
	const secret = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	files := []string{
		"HF_TOKEN=" + secret + " vllm serve Qwen/Qwen3-8B --api-key sk-abcdefghijklmnopqrstuvwxyz",
		"docker run --gpus all -e HUGGING_FACE_HUB_TOKEN=" + secret + " vllm/vllm-openai --model Qwen/Qwen3-8B",
		"base_model: Qwen/Qwen3-8B\nhf_use_auth_token: " + secret + "\nwandb_api_key: " + secret + "\nlora_r: " + secret + "\n",
		"from trl import SFTConfig\nargs = SFTConfig(hub_token='" + secret + "', per_device_train_batch_size=2, output_dir='" + secret + "')\nmodel = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-8B', token='" + secret + "')\n",
		"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    args: [--model, Qwen/Qwen3-8B]\n    env:\n    - name: HF_TOKEN\n      value: " + secret + "\n",
	}
	for _, f := range files {
		j, err := Read(f)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		out := render(j, nil)
		if strings.Contains(out, secret) || strings.Contains(out, "sk-abc") {
			t.Errorf("a secret is shown:\n%s", out)
		}
	}
}

// TestMerge: the query words add to the job and win over it, and say so.
func TestMerge(t *testing.T) {
	j, err := Read("base_model: Qwen/Qwen3-8B\nadapter: lora\nlora_r: 16\nmicro_batch_size: 2\nsequence_len: 4096\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words, query string
		overrides    []string
	}{
		{"4090", "Qwen/Qwen3-8B lora 4090 bs=2 seq=4096 precision=bf16 gc=off rank=16 framework=axolotl", nil},
		{"4090 bs=4", "Qwen/Qwen3-8B lora 4090 bs=4 seq=4096 precision=bf16 gc=off rank=16 framework=axolotl", []string{"bs=4 over micro_batch_size: 2"}},
		{"2x h100 seq=8k", "Qwen/Qwen3-8B lora 2x h100 bs=2 seq=8k precision=bf16 gc=off rank=16 framework=axolotl", []string{"seq=8k over sequence_len: 4096"}},
		{"full a100", "Qwen/Qwen3-8B full a100 bs=2 seq=4096 gc=off framework=axolotl", []string{"full over method: lora"}},
		{"will it fit on a 4090?", "Qwen/Qwen3-8B lora 4090 bs=2 seq=4096 precision=bf16 gc=off rank=16 framework=axolotl", nil},
		// "run" and "train" only imply a method: the file's stays.
		{"can this run on 2 a100s?", "Qwen/Qwen3-8B lora 2x a100 bs=2 seq=4096 precision=bf16 gc=off rank=16 framework=axolotl", nil},
		{"will it train on a 4090?", "Qwen/Qwen3-8B lora 4090 bs=2 seq=4096 precision=bf16 gc=off rank=16 framework=axolotl", nil},
	}
	for _, tt := range tests {
		t.Run(tt.words, func(t *testing.T) {
			user, err := query.ReadWords(tt.words)
			if err != nil {
				t.Fatal(err)
			}
			w, over, _ := Merge(j, user)
			if got := w.String(); got != tt.query {
				t.Errorf("query\n got %s\nwant %s", got, tt.query)
			}
			var said []string
			for _, o := range over {
				said = append(said, o.Query+" over "+o.File)
			}
			if strings.Join(said, "; ") != strings.Join(tt.overrides, "; ") {
				t.Errorf("overrides %q, want %q", said, tt.overrides)
			}
			if _, err := query.Parse(w.String()); err != nil && !strings.Contains(err.Error(), "Qwen") {
				t.Errorf("the merged query does not parse: %v", err)
			}
		})
	}
}

// TestDetect: the cheap detector agrees with Read.
func TestDetect(t *testing.T) {
	if f, ok := Detect("vllm serve Qwen/Qwen3-8B"); !ok || f != VLLM {
		t.Errorf("Detect = %s, %v", f, ok)
	}
	if f, ok := Detect("what fits on a 4090?"); ok {
		t.Errorf("Detect = %s on a question", f)
	}
}

// TestFencedBlocks: a fence's info string is a tag, anything else on the
// fence line is code (Slack puts a block's first line there).
func TestFencedBlocks(t *testing.T) {
	tests := []struct {
		text string
		want Format
	}{
		{"```{\n\"zero_optimization\": {\"stage\": 3},\n\"train_micro_batch_size_per_gpu\": 2\n}\n```", DeepSpeed},
		{"```json\n{\"zero_optimization\": {\"stage\": 2}}\n```", DeepSpeed},
		{"```yaml\nbase_model: Qwen/Qwen3-8B\nadapter: lora\n```", Axolotl},
		{"```vllm serve Qwen/Qwen3-8B --max-model-len 8192```", VLLM},
		{"here it is:\n```vllm serve Qwen/Qwen3-8B\n--max-model-len 8192\n```", VLLM},
	}
	for _, tt := range tests {
		j, err := Read(tt.text)
		if err != nil || j.Format != tt.want {
			t.Errorf("Read(%q) = %s, %v; want %s", tt.text, j.Format, err, tt.want)
		}
	}
}
