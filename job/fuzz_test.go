package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vrambot/vrambot/query"
)

// Every reader of a format is fuzzed: seeded with that format's files,
// it must never panic or hang, and what it returns must be the grammar's
// own settings, short values and no secret (docs/jobs.md §5).

// seed adds a format's test files (testdata/jobs/<dir>/*, and own/ files
// whose name starts with prefix) to the corpus.
func seed(f *testing.F, dir, prefix string, extra ...string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "jobs", dir, "*"))
	own, _ := filepath.Glob(filepath.Join("testdata", "jobs", "own", prefix+"*"))
	for _, p := range append(paths, own...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, e := range extra {
		f.Add(e)
	}
}

// checkJob fails on a reading the grammar could not take.
func checkJob(t *testing.T, j Job, err error) {
	t.Helper()
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %T (%v), want *job.Error", err, err)
		}
		if len(err.Error()) > 600 || !utf8.ValidString(err.Error()) {
			t.Fatalf("error message of %d bytes", len(err.Error()))
		}
		return
	}
	for _, s := range j.Settings {
		if _, err := query.CheckValue(s.Key, s.Value); err != nil {
			t.Fatalf("setting %s=%q is not the grammar's: %v", s.Key, s.Value, err)
		}
	}
	for _, it := range j.Read {
		if utf8.RuneCountInString(it.Value) > maxValueShown+1 || secretValue(it.Value) {
			t.Fatalf("value %q shown", it.Value)
		}
	}
	if len(j.Model) > MaxBytes {
		t.Fatalf("model of %d bytes", len(j.Model))
	}
}

// fuzzRead checks Read and a format's own reader on the same text.
func fuzzRead(f *testing.F, reader func(string) (Job, error)) {
	f.Fuzz(func(t *testing.T, text string) {
		j, err := Read(text)
		checkJob(t, j, err)
		again, err2 := Read(text)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(j, again) {
			t.Fatal("two readings of the same text differ")
		}
		if reader != nil && utf8.ValidString(text) && len(text) <= MaxBytes {
			j, err := reader(text)
			if err == nil {
				j.finish()
			}
			checkJob(t, j, err)
		}
	})
}

// yamlReader runs a YAML format's reader on the text's first document.
func yamlReader(read func(*node) (Job, error)) func(string) (Job, error) {
	return func(text string) (Job, error) {
		docs, err := parseYAML([]byte(text))
		if err != nil || len(docs) == 0 || docs[0] == nil || docs[0].kind != mapNode {
			return Job{}, err
		}
		return read(docs[0])
	}
}

func FuzzAxolotl(f *testing.F) {
	seed(f, "axolotl", "axolotl", "base_model: x\nfsdp: [full_shard, offload]\nplugins: [a.cut_cross_entropy.X]\n")
	fuzzRead(f, yamlReader(readAxolotl))
}

func FuzzLlamaFactory(f *testing.F) {
	seed(f, "llama-factory", "llama", "model_name_or_path: x\nstage: dpo\nquantization_bit: 8\n")
	fuzzRead(f, yamlReader(func(n *node) (Job, error) {
		if n.get("model") != nil {
			return readLlamaFactoryV1(n)
		}
		return readLlamaFactory(n)
	}))
}

func FuzzTorchtune(f *testing.F) {
	seed(f, "torchtune", "t", "model:\n  _component_: torchtune.models.qwen3.lora_qwen3_1_7b_base\n  lora_rank: 8\n",
		"tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full batch_size=4 enabl\ne_activation_checkpointing=Tr\nue compile=True\n")
	fuzzRead(f, func(text string) (Job, error) {
		if strings.Contains(text, "tune run") {
			return readShell(text)
		}
		return yamlReader(readTorchtune)(text)
	})
}

func FuzzDeepSpeed(f *testing.F) {
	seed(f, "deepspeed", "deepspeed", `{"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}`)
	fuzzRead(f, func(text string) (Job, error) {
		n, err := parseJSON([]byte(text))
		if err != nil || n.kind != mapNode {
			return Job{}, err
		}
		return readDeepSpeed(n)
	})
}

func FuzzAccelerate(f *testing.F) {
	seed(f, "accelerate", "accelerate", "accelerate launch --num_processes 2 --use_fsdp train.py --model_name_or_path x")
	fuzzRead(f, yamlReader(readAccelerate))
}

func FuzzTRL(f *testing.F) {
	seed(f, "trl", "trl", "trl sft --model_name_or_path x --use_peft --load_in_4bit True",
		"model_name_or_path: x\nuse_peft: true\nquantization_config: {llm_int8_enable_fp32_cpu_offload: true}\n")
	fuzzRead(f, readPython)
}

func FuzzTransformers(f *testing.F) {
	seed(f, "transformers", "transformers", "model = AutoModelForCausalLM.from_pretrained('x', **kwargs)\nargs = TrainingArguments(**{'bf16': True})",
		"q = BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True, load_in_4bit=True)\nm = AutoModelForCausalLM.from_pretrained('x', quantization_config=q)\n")
	fuzzRead(f, readPython)
}

func FuzzUnsloth(f *testing.F) {
	seed(f, "unsloth", "unsloth", "from unsloth import FastLanguageModel\nm, t = FastLanguageModel.from_pretrained(model_name = \"x\", load_in_4bit = False)\n")
	fuzzRead(f, readPython)
}

func FuzzVLLM(f *testing.F) {
	seed(f, "vllm", "vllm", "vllm serve x --max-model-len 1.5k --tp=2 --gpu-memory-utilization 2")
	fuzzRead(f, readShell)
}

func FuzzSGLang(f *testing.F) {
	seed(f, "sglang", "sglang", "python -m sglang.launch_server --model-path x --tp 4 --context-length -1")
	fuzzRead(f, readShell)
}

func FuzzLlamaCpp(f *testing.F) {
	seed(f, "llama.cpp", "llama-server", "llama-server -hf a/b:Q4_K_M -c 0 -ngl all -ts 1,1,0")
	fuzzRead(f, readShell)
}

func FuzzOllama(f *testing.F) {
	seed(f, "ollama", "ollama", "FROM ./x.gguf\nPARAMETER num_ctx 99999999999\nTEMPLATE \"\"\"\n{{ .Prompt }}\n\"\"\"\n")
	seed(f, "", "Modelfile")
	fuzzRead(f, func(text string) (Job, error) {
		if looksInstructions(text) {
			return readInstructions(text)
		}
		return readShell(text)
	})
}

func FuzzDocker(f *testing.F) {
	seed(f, "docker", "docker", "docker run --gpus '\"device=0,1\"' ghcr.io/ggml-org/llama.cpp:server -m /m/x-Q8_0.gguf")
	seed(f, "", "compose")
	fuzzRead(f, readShell)
}

func FuzzKubernetes(f *testing.F) {
	seed(f, "kubernetes", "kubernetes", "cat <<'EOF' > isvc.yaml\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      storageUri: hf://a/b\n      args: [--model_id=c/d]\nEOF\n")
	fuzzRead(f, func(text string) (Job, error) {
		docs, err := parseYAML([]byte(text))
		if err != nil {
			return Job{}, err
		}
		if len(docs) > 0 && docs[0] != nil && docs[0].kind == mapNode {
			return readValues(docs[0])
		}
		return readKubernetes(docs)
	})
}
