package job

import (
	"regexp"
	"strings"
)

// Formats are recognised by content, never by a file's name
// (docs/jobs.md §3): the keys a config's tool alone writes, the program
// a command runs, the calls a script makes.

// yamlKeyLine is a line of a YAML mapping ("key: value", "- key: value").
var yamlKeyLine = regexp.MustCompile(`^(\s*-\s+)?\s*["']?[A-Za-z_][\w.\-/]*["']?\s*:(\s|$)`)

// looksYAML reports whether most lines of s read as YAML.
func looksYAML(s string) bool {
	n, yamlish := 0, 0
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		n++
		if yamlKeyLine.MatchString(l) || strings.HasPrefix(t, "- ") || t == "---" || t == "-" {
			yamlish++
		}
	}
	return n > 0 && yamlish*2 >= n
}

// looksJSON reports whether s is meant as JSON: it opens a bracket and
// holds a "key": pair.
func looksJSON(s string) bool {
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") && strings.Contains(s, `":`)
}

var (
	pythonImport = regexp.MustCompile(`(?m)^\s*(from\s+[\w.]+\s+import\s|import\s+[\w.]+)`)
	pythonCall   = regexp.MustCompile(`\b(from_pretrained|SFTConfig|SFTTrainer|TrainingArguments|Seq2SeqTrainingArguments|LoraConfig|BitsAndBytesConfig|GRPOConfig|GRPOTrainer|DPOConfig|DPOTrainer|Trainer|LLM|get_peft_model|ModelConfig|ScriptArguments)\s*\(`)
)

// looksPython reports whether s is Python: an import, or a call a
// training or serving script makes.
func looksPython(s string) bool { return pythonImport.MatchString(s) || pythonCall.MatchString(s) }

// programs are the commands a job runs, by the program's name.
var programs = map[string]bool{
	"vllm": true, "python": true, "python3": true, "docker": true, "podman": true, "nvidia-docker": true, "llama-server": true,
	"llama-cli": true, "llama-bench": false, "ollama": true, "tune": true, "trl": true, "accelerate": true, "torchrun": true,
	"deepspeed": true, "kubectl": true, "sglang": true, "axolotl": true, "llamafactory-cli": true, "lmf": true, "export": true,
}

// looksShell reports whether a line of s runs one of the programs.
func looksShell(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		words := strings.Fields(stripPrompt(strings.TrimSpace(l)))
		for len(words) > 0 && envAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 && programs[programName(words[0])] {
			return true
		}
	}
	return false
}

// envAssignment reports whether a word sets a variable (FOO=bar).
func envAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && envName.MatchString(k)
}

// readTree reads parsed YAML or JSON documents by the keys their tool
// writes.
func readTree(docs []*node) (Job, error) {
	var root *node
	for _, d := range docs {
		if d != nil && !d.null {
			root = d
			break
		}
	}
	if root == nil {
		return Job{}, notAJob("the file is empty")
	}
	switch {
	case kubernetesDocs(docs):
		return readKubernetes(docs)
	case root.kind != mapNode:
		return Job{}, notAJob("")
	case root.get("services") != nil && root.get("services").kind == mapNode:
		return readCompose(root)
	case root.get("compute_environment") != nil || root.get("distributed_type") != nil && (root.get("num_processes") != nil || root.get("mixed_precision") != nil):
		return readAccelerate(root)
	case hasComponent(root):
		return readTorchtune(root)
	case root.get("base_model") != nil || root.get("micro_batch_size") != nil && root.get("sequence_len") != nil:
		return readAxolotl(root)
	case root.get("model_name_or_path") != nil && anyKey(root, "stage", "finetuning_type", "template", "cutoff_len"):
		return readLlamaFactory(root)
	case root.get("model") != nil && root.get("model").kind == scalarNode && anyKey(root, "peft_config", "dist_config", "kernel_config", "model_class", "quant_config", "cutoff_len"):
		return readLlamaFactoryV1(root)
	case anyKey(root, "zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size", "zero_allow_untested_optimizer"):
		return readDeepSpeed(root)
	case root.get("model_name_or_path") != nil || anyKey(root, "per_device_train_batch_size", "use_peft"):
		return readHFConfig(root)
	case anyKey(root, "architectures", "model_type") && anyKey(root, "hidden_size", "num_hidden_layers", "text_config"):
		return Job{}, &Error{Reason: "this is a model's config.json, not a job: give it with --config", NotAJob: true}
	case servingConfig(root):
		return readServingConfig(root)
	}
	if j, err := readValues(root); err == nil {
		return j, nil
	}
	return Job{}, notAJob("")
}

// anyKey reports whether mapping n has one of keys.
func anyKey(n *node, keys ...string) bool {
	for _, k := range keys {
		if n.get(k) != nil {
			return true
		}
	}
	return false
}

// hasComponent reports whether a mapping holds torchtune's _component_
// builders.
func hasComponent(n *node) bool {
	for _, v := range n.vals {
		if v.kind == mapNode && v.get("_component_") != nil {
			return true
		}
	}
	return false
}
