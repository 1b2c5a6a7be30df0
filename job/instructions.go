package job

import (
	"encoding/json"
	"slices"
	"strings"
)

// servingKeys are keys only a serving engine's config has.
var servingKeys = []string{"tensor-parallel-size", "tensor_parallel_size", "max-model-len", "max_model_len", "gpu-memory-utilization", "gpu_memory_utilization", "max-num-seqs", "max_num_seqs", "kv-cache-dtype", "kv_cache_dtype"}

// servingConfig reports whether a mapping is a vllm serve --config YAML.
func servingConfig(root *node) bool { return anyKey(root, servingKeys...) }

// readServingConfig reads a vLLM config file (the flags' names as keys,
// with _ or -).
func readServingConfig(root *node) (Job, error) {
	var args []string
	for i, k := range root.keys {
		v := root.vals[i]
		switch {
		case v.kind == listNode:
			args = append(args, "--"+k, strings.Join(v.strs(), ","))
		case v.kind == scalarNode && !v.null:
			if b, ok := truth(v.value); ok && (v.value == "true" || v.value == "false") {
				if b {
					args = append(args, "--"+k)
				}
				continue
			}
			args = append(args, "--"+k, v.value)
		}
	}
	return readEngine(VLLM, command{env: map[string]string{}}, args)
}

// modelfileWords are an Ollama Modelfile's instructions
// (docs/modelfile.mdx); dockerfileWords a Dockerfile's.
var (
	modelfileWords  = []string{"FROM", "PARAMETER", "TEMPLATE", "SYSTEM", "ADAPTER", "LICENSE", "MESSAGE", "REQUIRES"}
	dockerfileWords = []string{"FROM", "RUN", "CMD", "ENTRYPOINT", "ENV", "COPY", "ADD", "WORKDIR", "EXPOSE", "ARG", "LABEL", "USER", "VOLUME", "SHELL", "HEALTHCHECK", "ONBUILD", "STOPSIGNAL"}
)

// looksInstructions reports whether s is a Modelfile or a Dockerfile: its
// first instruction is FROM.
func looksInstructions(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		w := strings.ToUpper(strings.Fields(t)[0])
		return w == "FROM" || w == "ARG"
	}
	return false
}

// instruction is one line of a Modelfile or Dockerfile.
type instruction struct{ word, rest string }

// readInstructions reads a Modelfile (FROM MODEL, PARAMETER num_ctx N) or
// a Dockerfile whose CMD or ENTRYPOINT runs an engine.
func readInstructions(s string) (Job, error) {
	var insts []instruction
	lines := strings.Split(s, "\n")
	docker := false
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		w, rest, _ := strings.Cut(t, " ")
		w = strings.ToUpper(w)
		for strings.HasSuffix(rest, `\`) && i+1 < len(lines) {
			i++
			rest = strings.TrimSuffix(rest, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if strings.Count(rest, `"""`) == 1 { // a multi-line TEMPLATE or SYSTEM
			for i+1 < len(lines) {
				i++
				rest += "\n" + lines[i]
				if strings.Contains(lines[i], `"""`) {
					break
				}
			}
		}
		switch {
		case slices.Contains(modelfileWords, w):
		case slices.Contains(dockerfileWords, w):
			docker = true
		default:
			return Job{}, notAJob("")
		}
		insts = append(insts, instruction{w, strings.TrimSpace(rest)})
	}
	if docker {
		return readDockerfile(insts)
	}
	r := newReading(Ollama)
	for _, in := range insts {
		switch in.word {
		case "FROM":
			r.model("FROM", in.rest)
			ggufPrecision(r, "FROM", in.rest)
		case "PARAMETER":
			name, value, _ := strings.Cut(in.rest, " ")
			value = strings.Trim(strings.TrimSpace(value), `"`)
			if rule, ok := modelfileParams[name]; ok {
				rule(r, "PARAMETER "+name, &node{value: value})
			} else {
				r.ignore("PARAMETER " + name)
			}
		case "ADAPTER":
			r.unknown("ADAPTER", "a LoRA adapter: its weights are not modelled")
		default:
			r.ignore(in.word)
		}
	}
	r.j.Settings = append(r.j.Settings, kv("engine", "ollama"))
	r.j.Method = "inference"
	return r.job()
}

// readDockerfile reads the engine a Dockerfile's image runs.
func readDockerfile(insts []instruction) (Job, error) {
	var image string
	env := map[string]string{}
	var cmd []string
	for _, in := range insts {
		switch in.word {
		case "FROM":
			image = strings.Fields(in.rest)[0]
		case "ENV":
			for _, w := range shellWords(in.rest) {
				if k, v, ok := strings.Cut(w, "="); ok {
					env[k] = v
				}
			}
		case "CMD", "ENTRYPOINT":
			var w []string
			if json.Unmarshal([]byte(in.rest), &w) != nil {
				w = shellWords(in.rest)
			}
			if in.word == "ENTRYPOINT" {
				cmd = append(w, cmd...)
			} else {
				cmd = append(cmd, w...)
			}
		}
	}
	return readContainer(Docker, container{image: image, words: cmd, env: env, where: "Dockerfile"})
}
