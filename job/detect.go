package job

import (
	"strings"
)

// Formats are recognised by content, never by a file's name
// (docs/jobs.md §3): the keys a config's tool alone writes, the program
// a command runs, the calls a script makes.

// yamlKeyLine reports whether a line is one of a YAML mapping
// ("key: value", "- key: value", "'key':").
func yamlKeyLine(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if rest, ok := strings.CutPrefix(t, "- "); ok {
		t = strings.TrimLeft(rest, " \t")
	}
	t = strings.TrimLeft(t, `"'`)
	if t == "" || !(t[0] == '_' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') {
		return false
	}
	i := 1
	for i < len(t) && (isIdentPart(t[i]) || t[i] == '.' || t[i] == '-' || t[i] == '/') {
		i++
	}
	t = strings.TrimLeft(strings.TrimLeft(t[i:], `"'`), " \t")
	return strings.HasPrefix(t, ":") && (len(t) == 1 || t[1] == ' ' || t[1] == '\t')
}

// looksYAML reports whether most lines of s read as YAML.
func looksYAML(s string) bool {
	n, yamlish := 0, 0
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		n++
		if yamlKeyLine(l) || strings.HasPrefix(t, "- ") || t == "---" || t == "-" {
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

// pythonCalls are the calls a training or serving script makes.
var pythonCalls = []string{"from_pretrained(", "SFTConfig(", "SFTTrainer(", "TrainingArguments(", "LoraConfig(", "BitsAndBytesConfig(",
	"GRPOConfig(", "GRPOTrainer(", "DPOConfig(", "DPOTrainer(", "Trainer(", "LLM(", "get_peft_model(", "ModelConfig(", "ScriptArguments("}

// looksPython reports whether s is Python: an import, or a call a
// training or serving script makes.
func looksPython(s string) bool {
	if pythonImports(s) {
		return true
	}
	for _, c := range pythonCalls {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// pythonImports reports whether a line of s is an import statement.
func pythonImports(s string) bool {
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		t := strings.TrimLeft(line, " \t>.")
		if strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ") && strings.Contains(t, " import ") {
			return true
		}
	}
	return false
}

// programs are the commands a job runs, by the program's name.
var programs = map[string]bool{
	"vllm": true, "python": true, "python3": true, "docker": true, "podman": true, "nvidia-docker": true, "llama-server": true,
	"llama-cli": true, "llama-bench": false, "ollama": true, "tune": true, "trl": true, "accelerate": true, "torchrun": true,
	"deepspeed": true, "kubectl": true, "sglang": true, "axolotl": true, "llamafactory-cli": true, "lmf": true, "export": true,
}

// looksShell reports whether a line of s runs one of the programs, or
// gives a command a heredoc.
func looksShell(s string) bool {
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		if !strings.ContainsAny(line, " \t") {
			continue
		}
		words := strings.Fields(stripPrompt(strings.TrimSpace(line)))
		for len(words) > 0 && envAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 && programs[programName(words[0])] {
			return true
		}
		if strings.Contains(line, "<<") && heredoc.MatchString(line) && len(words) > 0 && !strings.HasSuffix(words[0], ":") {
			return true // cat <<EOF > isvc.yaml
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
