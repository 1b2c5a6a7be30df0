package job

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// engineOf is the grammar's engine= for a serving format.
var engineOf = map[Format]string{VLLM: "vllm", SGLang: "sglang", LlamaCpp: "llama.cpp", Ollama: "ollama"}

// engineTables are each serving engine's flags, the flags that take no
// value, and the flags read first.
var engineTables = map[Format]struct {
	flags table
	bools map[string]bool
	first []string
}{
	VLLM:     {vllmFlags, vllmBools, []string{"quantization", "q"}},
	SGLang:   {sglangFlags, sglangBools, []string{"quantization"}},
	LlamaCpp: {llamaFlags, llamaBools, []string{"ctk", "cache-type-k"}},
}

// readEngine reads a serving engine's command line (its arguments after
// the program and subcommand).
func readEngine(f Format, c command, args []string) (Job, error) {
	r := newReading(f)
	r.engine(f, c, args)
	return r.job()
}

// engine reads an engine's arguments and environment into r.
func (r *reading) engine(f Format, c command, args []string) {
	t := engineTables[f]
	flags, pos := parseArgs(args, t.bools)
	if len(pos) > 0 && f == VLLM && !slices.ContainsFunc(flags, func(fl flag) bool { return fl.name == "model" }) {
		r.model("model", pos[0]) // vllm serve MODEL
		pos = pos[1:]
	}
	r.readFlags(flags, t.flags, t.first...)
	for _, p := range pos {
		r.unknown(p, "")
	}
	if r.j.Model == "" {
		// A model served from a folder with no name in it (/data/): the
		// name clients call it by.
		for _, fl := range flags {
			if fl.name == "served-model-name" && nameLike(fl.value) {
				r.j.Model = fl.value
				r.item(fl.raw, fl.value, "model "+fl.value, "the model's folder has no name in it: read by the name it is served as")
				break
			}
		}
	}
	r.environment(c.env)
	r.j.Settings = append(r.j.Settings, kv("engine", engineOf[f]))
	r.j.Method = "inference"
	r.found = true
}

// environment reads the variables set before a command.
func (r *reading) environment(env map[string]string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := &node{value: env[k]}
		switch {
		case k == "CUDA_VISIBLE_DEVICES" || k == "HIP_VISIBLE_DEVICES" || k == "NVIDIA_VISIBLE_DEVICES":
			r.visibleDevices(k, env[k])
		case ollamaEnv[k] != nil:
			ollamaEnv[k](r, k, v)
		case vllmEnv[k] != nil:
			vllmEnv[k](r, k, v)
		default:
			r.ignore(k)
		}
	}
}

// visibleDevices reads CUDA_VISIBLE_DEVICES=0,1: the GPUs a training job
// may use (a serving engine uses tp × pp of them).
func (r *reading) visibleDevices(k, v string) {
	n := len(strings.FieldsFunc(v, func(c rune) bool { return c == ',' }))
	if r.j.Format == VLLM || r.j.Format == SGLang || r.j.Format == LlamaCpp || r.j.Format == Ollama || n < 2 {
		r.item(k, v, "", fmt.Sprintf("%d GPUs visible", n))
		return
	}
	r.setAs(k, v, "gpus", strconv.Itoa(n))
}

// readOllamaCommand reads ollama run MODEL, ollama serve (its
// environment) and ollama create -f (the Modelfile is another file).
func readOllamaCommand(c command, args []string) (Job, error) {
	if len(args) == 0 {
		return Job{}, notAJob("")
	}
	r := newReading(Ollama)
	switch args[0] {
	case "run", "pull":
		if len(args) < 2 {
			return Job{}, notAJob("")
		}
		r.model("model", args[1])
		ggufPrecision(r, "model", args[1])
	case "serve", "start":
	default:
		return Job{}, notAJob("")
	}
	r.environment(c.env)
	r.j.Settings = append(r.j.Settings, kv("engine", "ollama"))
	r.j.Method = "inference"
	r.found = true
	return r.job()
}

// dockerValued are docker run's options that take a value.
var dockerValued = boolSet("e", "env", "env-file", "v", "volume", "p", "publish", "name", "gpus", "ipc", "shm-size", "runtime", "network",
	"net", "entrypoint", "w", "workdir", "mount", "ulimit", "device", "platform", "restart", "cpus", "m", "memory", "u", "user",
	"label", "l", "hostname", "h", "add-host", "log-driver", "log-opt", "security-opt", "cap-add", "cap-drop", "pid", "uts",
	"stop-signal", "memory-swap", "cpuset-cpus", "group-add", "tmpfs", "dns", "pull", "cgroupns", "userns", "health-cmd")

// images name the serving engine a container runs, by the image.
var images = []struct {
	contains string
	format   Format
}{
	{"vllm", VLLM}, {"sglang", SGLang}, {"llama.cpp", LlamaCpp}, {"llama-cpp", LlamaCpp}, {"ggml-org", LlamaCpp},
	{"ollama", Ollama}, {"text-generation-inference", ""},
}

// engineImage is the engine of an image ("" when none; ok is false for
// an image that runs no engine vrambot reads).
func engineImage(image string) (Format, bool) {
	l := strings.ToLower(image)
	for _, im := range images {
		if strings.Contains(l, im.contains) {
			return im.format, im.format != ""
		}
	}
	return "", false
}

// readDockerRun reads docker run [OPTIONS] IMAGE [ARGS]: the GPUs it
// passes, the environment, and the engine's command line.
func readDockerRun(c command, args []string) (Job, error) {
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = v
	}
	gpus, entry := "", ""
	i := leadingFlags(args, dockerValued, func(_, name, value string) {
		switch name {
		case "e", "env":
			if k, v, ok := strings.Cut(value, "="); ok {
				env[k] = v
			}
		case "gpus":
			gpus = value
		case "entrypoint":
			entry = value
		}
	})
	if i >= len(args) {
		return Job{}, notAJob("")
	}
	image, rest := args[i], args[i+1:]
	f, ok := engineImage(image)
	if !ok {
		return Job{}, notAJob("")
	}
	inner := command{env: env, words: rest}
	if entry != "" {
		inner.words = append([]string{entry}, rest...)
	}
	r := newReading(Docker)
	r.item("image", image, "engine="+engineOf[f], "")
	switch {
	case len(inner.words) > 0 && !strings.HasPrefix(inner.words[0], "-") && programs[programName(inner.words[0])]:
		j, err := readCommand(inner) // the image's command, written out (python3 -m sglang.launch_server …)
		if err != nil {
			return Job{}, err
		}
		r.merge(j)
	case f == Ollama:
		r.environment(env)
		r.j.Settings = append(r.j.Settings, kv("engine", "ollama"))
		r.j.Method = "inference"
	default:
		r.engine(f, inner, inner.words)
	}
	r.dockerGPUs(gpus)
	r.found = true
	return r.job()
}

// dockerGPUs reads --gpus: all, a count, or "device=0,1".
func (r *reading) dockerGPUs(g string) {
	g = strings.Trim(g, `"'`)
	switch {
	case g == "":
	case g == "all":
		r.item("--gpus", g, "", "every GPU of the host: the engine uses tp × pp of them")
	case strings.HasPrefix(g, "device="):
		n := len(strings.Split(strings.TrimPrefix(g, "device="), ","))
		r.item("--gpus", g, "", fmt.Sprintf("%d GPUs: the engine uses tp × pp of them", n))
	default:
		r.item("--gpus", g, "", "the engine uses tp × pp of them")
	}
}

// merge takes in what an inner command (a container's) read.
func (r *reading) merge(j Job) {
	if r.j.Model == "" {
		r.j.Model = j.Model
	}
	r.j.Method = j.Method
	for _, s := range j.Settings {
		if r.j.Setting(s.Key) == "" {
			r.j.Settings = append(r.j.Settings, s)
		}
	}
	r.j.Read = append(r.j.Read, j.Read...)
	r.j.Ignored = append(r.j.Ignored, j.Ignored...)
	r.j.Unknown = append(r.j.Unknown, j.Unknown...)
	r.j.Notes = append(r.j.Notes, j.Notes...)
	r.found = true
}

// readTuneRun reads tune run [--nproc_per_node N] RECIPE --config CONFIG
// [key=value …]: a bundled config says the model and the method by its
// name; the overrides are its keys.
func readTuneRun(c command, args []string) (Job, error) {
	r := newReading(Torchtune)
	var recipe, cfg string
	var overrides []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "-", "_")
		switch {
		case strings.HasPrefix(a, "-") && (name == "nproc_per_node" || name == "nnodes" || name == "config" || name == "rdzv_endpoint" || name == "master_port"):
			if !has && i+1 < len(args) {
				value = args[i+1]
				i++
			}
			switch name {
			case "nproc_per_node":
				if n := positive(value); n > 1 {
					r.setAs("--nproc_per_node", value, "gpus", strconv.Itoa(n))
				}
			case "config":
				cfg = value
			default:
				r.ignore("--" + name)
			}
		case strings.HasPrefix(a, "-"):
			r.ignore(a)
		case strings.Contains(a, "="):
			overrides = append(overrides, a)
		case recipe == "":
			recipe = a
		}
	}
	if recipe == "" {
		return Job{}, notAJob("")
	}
	m := tuneRecipe(recipe)
	r.item("recipe", recipe, m, "")
	if m != "" {
		r.train.setAdapter(m, "recipe")
	}
	bundled, isBundled := bundledTorchtune(cfg)
	switch name, method, ok := configModel(cfg); {
	case isBundled:
		r.model("--config", bundled.model)
		fixValue(r, "--config", cfg)
		r.train.adapter, r.train.adapterKey = "", ""
		r.train.setAdapter(bundled.method, "--config")
	case ok:
		r.model("--config", name)
		fixValue(r, "--config", cfg)
		if method != "full" || r.train.adapter == "" {
			r.train.adapter, r.train.adapterKey = "", ""
			r.train.setAdapter(method, "--config")
		}
		r.note("--config %s: not a config torchtune ships; its own settings (batch, sequence length, optimizer) are not in this line: read the config file with --job for them", shown("", cfg))
	case cfg != "":
		r.unknown("--config", fmt.Sprintf("the config %s is not in this line: read it with --job", shown("", cfg)))
	}
	tuneOverride(r, overrides)
	r.environment(c.env)
	if isBundled {
		// What the line does not override is the bundled config's.
		var filled []string
		for _, s := range bundled.settings {
			switch {
			case s.Key == "precision" && r.train.dtype == "":
				r.train.dtype, r.train.dtypeKey = s.Value, "--config"
			case s.Key != "precision" && r.j.Setting(s.Key) == "":
				r.j.Settings = append(r.j.Settings, s)
				r.from[s.Key] = "--config"
			default:
				continue
			}
			filled = append(filled, s.Key+"="+s.Value)
		}
		r.note("--config %s: torchtune's bundled config (recipes/configs at bd2a0fc7), read from its file: %s; the line's overrides win", shown("", cfg), strings.Join(filled, " "))
	}
	r.finishTraining("full")
	r.fill("framework", "torchtune", "the format")
	r.found = true
	return r.job()
}

// launcherValued are the value flags of accelerate launch, torchrun and
// the deepspeed launcher.
var launcherValued = boolSet("config-file", "config_file", "num-processes", "num_processes", "num-machines", "num_machines", "mixed-precision",
	"mixed_precision", "nproc-per-node", "nproc_per_node", "nnodes", "node-rank", "node_rank", "master-addr", "master_addr", "master-port",
	"master_port", "rdzv-backend", "rdzv_backend", "rdzv-endpoint", "rdzv_endpoint", "rdzv-id", "rdzv_id", "num-gpus", "num_gpus", "num-nodes",
	"num_nodes", "hostfile", "include", "exclude", "machine-rank", "machine_rank", "main-process-ip", "main_process_ip", "main-process-port",
	"main_process_port", "zero-stage", "zero_stage", "deepspeed-config-file", "deepspeed_config_file", "gpu-ids", "gpu_ids",
	"fsdp-sharding-strategy", "fsdp_sharding_strategy", "fsdp-version", "fsdp_version", "dynamo-backend", "dynamo_backend",
	"offload-optimizer-device", "offload_optimizer_device", "offload-param-device", "offload_param_device", "fsdp-offload-params",
	"fsdp_offload_params", "module", "m", "tee", "log-dir", "local-ranks-filter", "max-restarts", "standalone-port")

// leadingFlags walks the flags before a program's first other argument
// (--name=value, or --name value where valued names the flag), calling
// each with the flag as written, its name and its value, and returns the
// index of that argument.
func leadingFlags(args []string, valued map[string]bool, each func(raw, name, value string)) int {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		raw := args[i]
		name, value, has := strings.Cut(strings.TrimLeft(raw, "-"), "=")
		if !has && valued[name] && i+1 < len(args) {
			value = args[i+1]
			i++
		}
		each(raw, name, value)
	}
	return i
}

// readLauncher reads accelerate launch, torchrun or deepspeed: the GPU
// count and distributed settings it gives, then the script and its flags.
func readLauncher(f Format, c command, args []string) (Job, error) {
	r := newReading(f)
	i := leadingFlags(args, launcherValued, func(raw, name, value string) {
		r.launcherFlag(raw, strings.ReplaceAll(name, "-", "_"), value)
	})
	r.environment(c.env)
	if i >= len(args) {
		return r.job()
	}
	script, rest := args[i], args[i+1:]
	j, err := readScriptFlags("", command{env: map[string]string{}, words: nil}, rest, 0, script)
	if err == nil {
		launch := r.j
		r = newReading(j.Format)
		r.j = j
		for _, s := range launch.Settings {
			if r.j.Setting(s.Key) == "" {
				r.j.Settings = append(r.j.Settings, s)
			}
		}
		if r.j.Sharding == "" {
			r.j.Sharding = launch.Sharding
		}
		r.j.Read = append(launch.Read, r.j.Read...)
		r.j.Ignored = append(launch.Ignored, r.j.Ignored...)
		r.j.Unknown = append(launch.Unknown, r.j.Unknown...)
		r.j.Notes = append(launch.Notes, r.j.Notes...)
		r.found = true
		return r.job()
	}
	// A script whose flags say nothing (a LLaMA-Factory train.py with its
	// YAML): the launcher's settings, with the config named.
	for _, a := range rest {
		if strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") || strings.HasSuffix(a, ".json") {
			r.unknown(a, "a config this line runs, not in it: read it with --job")
		}
	}
	r.item("script", script, "", "")
	return r.job()
}

// launcherFlag reads one flag of a launcher.
func (r *reading) launcherFlag(raw, name, value string) {
	switch name {
	case "num_processes", "nproc_per_node", "num_gpus":
		if n := positive(value); n > 1 {
			r.setAs(raw, value, "gpus", strconv.Itoa(n))
		} else {
			r.item(raw, value, "", "one GPU")
		}
	case "config_file":
		r.unknown(raw, fmt.Sprintf("the accelerate config %s is not in this line: read it with --job", shown("", value)))
	case "mixed_precision":
		if d := strings.ToLower(value); d == "bf16" || d == "fp16" {
			r.ampKey(raw, &node{value: "true"}, d)
			fixValue(r, raw, value)
		}
	case "use_fsdp":
		r.j.Sharding, r.found = "fsdp", true
		r.item(raw, "true", "fsdp", "")
	case "multi_gpu":
		r.item(raw, "true", "", "")
	case "use_deepspeed":
		r.item(raw, "true", "", "ZeRO: --zero_stage says the stage")
	case "zero_stage":
		if value != "0" {
			r.set(raw, value, "zero")
		}
	case "offload_optimizer_device":
		if value == "cpu" || value == "nvme" {
			r.setAs(raw, value, "offload", "optimizer")
		}
	case "offload_param_device", "fsdp_offload_params":
		if b, _ := truth(value); b || value == "cpu" || value == "nvme" {
			r.j.Settings = dropKey(r.j.Settings, "offload")
			r.setAs(raw, value, "offload", "param")
		}
	case "fsdp_sharding_strategy":
		if strings.Contains(strings.ToUpper(value), "SHARD_GRAD_OP") || value == "2" {
			r.setAs(raw, value, "zero", "2")
		}
	case "deepspeed_config_file":
		deepspeedPath(r, raw, &node{value: value})
	case "nnodes", "num_nodes", "num_machines":
		if positive(value) > 1 {
			r.unknown(raw, "several nodes: the GPUs are those of one node times the nodes")
		}
	default:
		r.ignore(raw)
	}
}

// hfBools are HfArgumentParser's boolean flags that scripts pass bare.
var hfBools = boolSet("use-peft", "load-in-4bit", "load-in-8bit", "gradient-checkpointing", "bf16", "fp16", "tf32", "packing", "use-liger-kernel",
	"do-train", "do-eval", "overwrite-output-dir", "trust-remote-code", "push-to-hub", "use-dora", "use-rslora", "activation-offloading",
	"padding-free", "completion-only-loss", "assistant-only-loss", "use-vllm", "torch-compile", "use-bnb-nested-quant", "auto-find-batch-size",
	"eval-packing", "remove-unused-columns", "bf16-full-eval", "use-cpu")

// trlScripts are TRL's scripts and examples by their file name.
var trlScripts = []string{"sft.py", "dpo.py", "grpo.py", "kto.py", "orpo.py", "ppo.py", "rloo.py", "reward.py", "reward_modeling.py", "gkd.py", "cpo.py", "nash_md.py", "xpo.py", "online_dpo.py", "bco.py", "prm.py"}

// trlFlags are flags of TRL's ModelConfig and SFTConfig that the HF
// Trainer does not have.
var trlFlags = []string{"use_peft", "load_in_4bit", "load_in_8bit", "lora_r", "lora_target_modules", "dataset_text_field", "packing", "max_seq_length", "use_bnb_nested_quant", "padding_free", "completion_only_loss", "num_generations", "max_completion_length"}

// readScriptFlags reads a training script's HF-style flags
// (--per_device_train_batch_size 2 …). f is TRL for `trl sft`; "" reads
// the format from the script's name and flags.
func readScriptFlags(f Format, c command, args []string, _ int, script string) (Job, error) {
	flags, _ := parseArgs(args, hfBools)
	if f == "" {
		f = Transformers
		if slices.Contains(trlScripts, path.Base(script)) || strings.Contains(script, "trl") {
			f = TRL
		}
		for _, fl := range flags {
			if slices.Contains(trlFlags, strings.ReplaceAll(fl.name, "-", "_")) {
				f = TRL
			}
		}
	}
	r := newReading(f)
	if script != "" {
		r.item("script", script, "", "")
	}
	for _, fl := range flags {
		name := strings.ReplaceAll(fl.name, "-", "_")
		v := &node{value: fl.value}
		if !fl.has {
			v = &node{value: "true"}
		}
		key := "--" + name
		if rule, ok := hfKeys[name]; ok {
			rule(r, key, v)
			continue
		}
		r.generic(name, v)
		r.rename(name, key)
	}
	r.environment(c.env)
	if !r.found {
		return Job{}, notAJob("")
	}
	r.finishHF(f == TRL, true)
	return r.job()
}

// readConfigCommand reads axolotl train CONFIG [--key=value …] and
// llamafactory-cli train CONFIG [key=value …]: the config is another
// file, the overrides are its keys.
func readConfigCommand(f Format, c command, cfg string, rest []string) (Job, error) {
	root := &node{kind: mapNode}
	for _, a := range rest {
		k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		root.keys = append(root.keys, k)
		root.vals = append(root.vals, &node{value: v})
	}
	if len(root.keys) == 0 {
		return Job{}, notAJob(fmt.Sprintf("this line runs the config %s, which is not in it: give that file to --job instead", shown("", cfg)))
	}
	var j Job
	var err error
	if f == Axolotl {
		j, err = axolotl(root, false)
	} else {
		j, err = llamaFactory(root, false)
	}
	if err == nil {
		j.Notes = append(j.Notes, fmt.Sprintf("the config %s is not in this line: only its overrides were read", shown("", cfg)))
	}
	return j, err
}

// bundledTorchtune is the config a tune run line names when torchtune
// ships it (recipes/configs/llama3_1/8B_lora.yaml, llama3_1/8B_lora).
func bundledTorchtune(cfg string) (bundledConfig, bool) {
	name := strings.TrimSuffix(cfg, ".yaml")
	if i := strings.Index(name, "recipes/configs/"); i >= 0 {
		name = name[i+len("recipes/configs/"):]
	}
	if c, ok := torchtuneConfigs[name]; ok {
		return c, true
	}
	if parts := strings.Split(name, "/"); len(parts) > 2 {
		c, ok := torchtuneConfigs[strings.Join(parts[len(parts)-2:], "/")]
		return c, ok
	}
	return bundledConfig{}, false
}
