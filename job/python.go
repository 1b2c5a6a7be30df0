package job

import (
	"slices"
	"strings"

	"github.com/vrambot/vrambot/query"
)

// readPython reads a training or serving script's calls (docs/jobs.md
// §2.3): transformers' from_pretrained and TrainingArguments, TRL's
// SFTConfig and trainers, PEFT's LoraConfig, bitsandbytes' config,
// Unsloth's FastLanguageModel and get_peft_model, vLLM's LLM.
func readPython(src string) (Job, error) {
	s := parsePython(doctest(src))
	f := pythonFormat(s)
	if f == "" {
		return Job{}, notAJob("no model, trainer or engine call in the script")
	}
	r := newReading(f)
	r.py = s
	switch f {
	case VLLM:
		r.pythonLLM()
	default:
		r.pythonTraining()
	}
	return r.job()
}

// doctest is the code of a doctest-style paste (">>> x = 1", "... y"),
// without the prompts and the output lines between them; other source is
// returned as it is.
func doctest(src string) string {
	lines := strings.Split(src, "\n")
	prompts := 0
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), ">>> ") {
			prompts++
		}
	}
	if prompts == 0 {
		return src
	}
	var out []string
	for _, l := range lines {
		t := strings.TrimLeft(l, " \t")
		switch {
		case strings.HasPrefix(t, ">>> ") || t == ">>>":
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(t, ">>>"), " "))
		case strings.HasPrefix(t, "... ") || t == "...":
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(t, "..."), " "))
		}
	}
	return strings.Join(out, "\n")
}

// trainerCalls are the calls of trainers and their argument classes.
var (
	configCalls  = []string{"SFTConfig", "TrainingArguments", "Seq2SeqTrainingArguments", "GRPOConfig", "DPOConfig", "KTOConfig", "ORPOConfig", "CPOConfig", "RewardConfig", "UnslothTrainingArguments", "GKDConfig", "PPOConfig", "RLOOConfig"}
	trainerCalls = []string{"SFTTrainer", "Trainer", "GRPOTrainer", "DPOTrainer", "KTOTrainer", "ORPOTrainer", "CPOTrainer", "RewardTrainer", "UnslothTrainer", "Seq2SeqTrainer", "GKDTrainer", "PPOTrainer", "RLOOTrainer"}
	unslothCalls = []string{"FastLanguageModel", "FastModel", "FastVisionModel", "FastQwen3Model", "FastLlamaModel", "FastMistralModel", "FastGemmaModel"}
	trlNames     = []string{"SFTConfig", "SFTTrainer", "GRPOConfig", "GRPOTrainer", "DPOConfig", "DPOTrainer", "KTOConfig", "KTOTrainer", "ORPOConfig", "ORPOTrainer", "CPOConfig", "RewardConfig", "RewardTrainer", "GKDConfig"}
)

// last is a dotted name's last part.
func last(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// receiver is a dotted name's part before its last.
func receiver(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return last(name[:i])
	}
	return ""
}

// pythonFormat is the tool a script's calls are for.
func pythonFormat(s *pyScript) Format {
	has := func(names []string, match func(*pyCall) string) bool {
		return slices.ContainsFunc(s.calls, func(c *pyCall) bool { return slices.Contains(names, match(c)) })
	}
	imports := strings.Join(s.imports, "\n")
	switch {
	case has(unslothCalls, func(c *pyCall) string { return receiver(c.name) }) || strings.Contains(imports, "unsloth"):
		if has([]string{"from_pretrained"}, func(c *pyCall) string { return last(c.name) }) {
			return Unsloth
		}
	}
	training := has(configCalls, func(c *pyCall) string { return last(c.name) }) || has(trainerCalls, func(c *pyCall) string { return last(c.name) })
	switch {
	case has(trlNames, func(c *pyCall) string { return last(c.name) }) || training && strings.Contains(imports, "trl"):
		return TRL
	case has([]string{"LLM"}, func(c *pyCall) string { return last(c.name) }) && !training:
		return VLLM
	case training || slices.ContainsFunc(s.calls, modelLoad):
		return Transformers
	}
	return ""
}

// modelLoad reports whether c loads a model (not a tokenizer or a
// config).
func modelLoad(c *pyCall) bool {
	if last(c.name) != "from_pretrained" {
		return false
	}
	rcv := receiver(c.name)
	for _, w := range []string{"Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor", "PeftModel", "Dataset"} {
		if strings.Contains(rcv, w) {
			return false
		}
	}
	return rcv != ""
}

// arg is a call's argument as a node for the tables: a literal, a list of
// literals, or nil when it is not a literal (after following names).
func (r *reading) arg(c *pyCall, v pyVal) *node {
	v = r.py.resolve(v, c.at)
	switch v.kind {
	case pyStr, pyNum:
		return &node{value: v.text}
	case pyConst:
		if v.text == "None" {
			return &node{null: true}
		}
		return &node{value: strings.ToLower(v.text)}
	case pyRef:
		if strings.HasPrefix(v.text, "torch.") { // torch.bfloat16 is a literal for dtypes
			return &node{value: v.text}
		}
	case pyList:
		n := &node{kind: listNode}
		for _, it := range v.items {
			if e := r.arg(c, it); e != nil && e.kind == scalarNode {
				n.items = append(n.items, e)
			}
		}
		return n
	case pyDict:
		n := &node{kind: mapNode}
		for i, k := range v.keys {
			if e := r.arg(c, v.items[i]); e != nil {
				n.keys, n.vals = append(n.keys, strings.Trim(k, `"'`)), append(n.vals, e)
			}
		}
		return n
	}
	return nil
}

// kwargs reads a call's keyword arguments by a table, a **dict of
// literals expanded.
func (r *reading) kwargs(c *pyCall, t table, prefix string) {
	for _, kw := range c.kwargs {
		if kw.name == "**" {
			if d := r.py.resolve(kw.val, c.at); d.kind == pyDict {
				r.kwargs(&pyCall{name: c.name, at: c.at, kwargs: dictKwargs(d)}, t, prefix)
			}
			continue
		}
		v := r.arg(c, kw.val)
		key := prefix + kw.name
		if v == nil {
			r.computed(c, kw, t, key)
			continue
		}
		if v.null {
			if _, known := t[kw.name]; known {
				r.item(key, "None", "", "the tool's default")
			}
			continue
		}
		if f, ok := t[kw.name]; ok {
			f(r, key, v)
			continue
		}
		r.generic(kw.name, v)
		r.rename(kw.name, key)
	}
}

// readCalls are the calls whose arguments this package reads where they
// are made: a keyword set to one of them (quantization_config=bnb_config)
// is read with that call.
var readCalls = append(append(append([]string{"BitsAndBytesConfig", "LoraConfig", "get_peft_model", "from_pretrained", "dict"}, configCalls...), trainerCalls...), unslothCalls...)

// computed records a keyword whose value is computed in the script (a
// call, an expression): a key the table knows gets its rule's verdict on
// a value that is no literal (a setting not used, a key not modelled).
func (r *reading) computed(c *pyCall, kw pyKwarg, t table, key string) {
	rv := r.py.resolve(kw.val, c.at)
	if rv.kind == pyRef && !strings.Contains(rv.text, ".") {
		return // a variable set by a call (model=model, args=training_args)
	}
	if rv.kind == pyCallVal && slices.Contains(readCalls, last(rv.call.name)) {
		return
	}
	rule, known := t[kw.name]
	switch {
	case known:
		rule(r, key, &node{value: notLiteral})
	case !unusedKey(normKey(kw.name)):
		r.item(key, notLiteral, "", "computed in the script: not read")
	}
}

// dictKwargs turns a dict literal into keyword arguments.
func dictKwargs(d pyVal) []pyKwarg {
	var out []pyKwarg
	for i, k := range d.keys {
		out = append(out, pyKwarg{strings.Trim(k, `"'`), d.items[i]})
	}
	return out
}

// firstModel reads the model a call loads: its first positional
// argument or the keyword that names it.
func (r *reading) firstModel(c *pyCall, keys ...string) {
	for _, k := range keys {
		if v := c.kw(k); v != nil {
			if n := r.arg(c, *v); n != nil && n.str() != "" {
				r.model(k, n.str())
				return
			}
		}
	}
	if len(c.args) > 0 {
		if n := r.arg(c, c.args[0]); n != nil && n.str() != "" {
			r.model(last(c.name), n.str())
		}
	}
}

// bnbKeys are BitsAndBytesConfig's arguments (transformers
// BitsAndBytesConfig).
var bnbKeys = table{
	"load_in_4bit":                     func(r *reading, k string, v *node) { r.bitsKey(k, v, 4) },
	"load_in_8bit":                     func(r *reading, k string, v *node) { r.bitsKey(k, v, 8) },
	"bnb_4bit_quant_type":              ign,
	"bnb_4bit_use_double_quant":        doubleQuant,
	"bnb_4bit_compute_dtype":           ign,
	"bnb_4bit_quant_storage":           ign,
	"llm_int8_threshold":               ign,
	"llm_int8_skip_modules":            ign,
	"llm_int8_has_fp16_weight":         ign,
	"llm_int8_enable_fp32_cpu_offload": int8OffloadKey,
}

// loadKeys are from_pretrained's arguments (transformers and Unsloth's
// FastLanguageModel.from_pretrained).
var loadKeys = table{
	"torch_dtype":         func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) },
	"dtype":               func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) },
	"attn_implementation": attention,
	"load_in_4bit":        func(r *reading, k string, v *node) { r.bitsKey(k, v, 4) },
	"load_in_8bit":        func(r *reading, k string, v *node) { r.bitsKey(k, v, 8) },
	"load_in_16bit":       confirm("16-bit weights"),
	"full_finetuning": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.methodKey(k, v.str(), "full")
		} else {
			r.item(k, v.str(), "", "off")
		}
	},
	"max_seq_length":                to("seq"),
	"use_gradient_checkpointing":    gradientCheckpointing,
	"device_map":                    ign,
	"low_cpu_mem_usage":             ign,
	"trust_remote_code":             ign,
	"token":                         ign,
	"use_auth_token":                ign,
	"cache_dir":                     ign,
	"revision":                      ign,
	"model_name":                    ign,
	"pretrained_model_name_or_path": ign,
	"fast_inference":                unmodelled("vLLM for generation beside training: its memory is not modelled"),
	"gpu_memory_utilization":        unmodelled("vLLM's share of the GPU for generation: not modelled"),
	"max_lora_rank":                 ign,
	"load_in_fp8":                   unmodelled("FP8 weights for training: not modelled"),
	"float8_kv_cache":               ign,
	"random_state":                  ign,
	"offload_embedding":             unmodelled("the embedding kept on the CPU: not modelled"),
	"max_memory":                    unmodelled("a memory cap per device: not modelled"),
	"offload_folder":                ign,
	"num_labels":                    ign,
	"use_cache":                     ign,
	"quantization_config":           ign,
	"unsloth_tiled_mlp":             unmodelled("Unsloth's tiled MLP: not modelled"),
	"use_exact_model_name":          ign,
	"fix_tokenizer":                 ign,
	"rope_scaling":                  ign,
	"text_only":                     ign,
}

// peftKeys are LoraConfig's and Unsloth get_peft_model's arguments.
var peftKeys = table{
	"r":                          to("rank"),
	"target_modules":             targets,
	"use_dora":                   hfKeys["use_dora"],
	"use_gradient_checkpointing": gradientCheckpointing,
	"lora_alpha":                 ign, "lora_dropout": ign, "bias": ign, "task_type": ign, "random_state": ign, "use_rslora": ign,
	"loftq_config": ign, "modules_to_save": ign, "init_lora_weights": ign, "layers_to_transform": ign, "max_seq_length": ign,
	"finetune_vision_layers": ign, "finetune_language_layers": ign, "finetune_attention_modules": ign, "finetune_mlp_modules": ign,
	"target_parameters": unmodelled("parameters adapted directly (MoE experts): the estimate adapts the linear layers only"),
}

// pythonTraining reads a training script.
func (r *reading) pythonTraining() {
	s := r.py
	st := &scriptState{unsloth: r.j.Format == Unsloth}
	if st.unsloth && !slices.ContainsFunc(s.calls, func(c *pyCall) bool { return last(c.name) == "get_peft_model" }) && !slices.ContainsFunc(s.calls, func(c *pyCall) bool { return c.kw("full_finetuning") != nil }) {
		st.training = slices.ContainsFunc(s.calls, func(c *pyCall) bool { return slices.Contains(trainerCalls, last(c.name)) })
	}
	for _, c := range s.calls {
		r.pythonCall(c, st)
	}
	if st.peft {
		r.train.setAdapter("lora", "LoraConfig")
	}
	if !st.training && !st.peft && r.train.adapter == "" {
		r.finishTraining("inference") // a model loaded to run it
		return
	}
	r.seqVariable()
	r.finishHF(r.j.Format == TRL, false)
	if st.unsloth {
		r.j.Settings = dropKey(r.j.Settings, "framework")
		r.j.Settings = append(r.j.Settings, kv("framework", "unsloth"))
	}
}

// scriptState is what a training script's calls said so far.
type scriptState struct {
	unsloth, peft, training bool
}

// pythonCall reads one call of a training script.
func (r *reading) pythonCall(c *pyCall, st *scriptState) {
	name := last(c.name)
	switch {
	case name == "from_pretrained" && modelLoad(c):
		r.pythonLoad(c, st)
	case name == "BitsAndBytesConfig":
		r.kwargs(c, bnbKeys, "BitsAndBytesConfig.")
	case name == "LoraConfig" || name == "get_peft_model":
		st.peft = true
		r.kwargs(c, peftKeys, name+".")
		if st.unsloth && name == "get_peft_model" {
			r.fill("rank", "16", "Unsloth get_peft_model's default r")
			r.fill("targets", "all", "Unsloth get_peft_model's default target_modules (every projection)")
			r.fill("gc", "offloaded", `Unsloth get_peft_model's default use_gradient_checkpointing="unsloth"`)
		}
	case name == "prepare_model_for_kbit_training":
		r.kwargsOr(c, "use_gradient_checkpointing", func() {
			r.setAs("prepare_model_for_kbit_training", "", "gc", "on")
		})
	case name == "gradient_checkpointing_enable":
		r.setAs(c.name, "()", "gc", "on")
	case slices.Contains(configCalls, name):
		st.training = true
		r.kwargs(c, hfKeys, name+".")
	case slices.Contains(trainerCalls, name):
		st.training = true
		r.pythonTrainer(c, name, st)
	case strings.Contains(c.name, "optim.") && len(c.args) > 0:
		optim(r, c.name, &node{value: c.name})
	}
}

// pythonLoad reads from_pretrained of a model (Unsloth's loads in 4 bits
// and 2048 tokens unless told otherwise: unsloth/models/loader.py).
func (r *reading) pythonLoad(c *pyCall, st *scriptState) {
	r.firstModel(c, "model_name", "pretrained_model_name_or_path", "model_id")
	r.kwargs(c, loadKeys, "")
	if !st.unsloth || !slices.Contains(unslothCalls, receiver(c.name)) {
		return
	}
	if c.kw("load_in_4bit") == nil && c.kw("load_in_8bit") == nil && c.kw("load_in_16bit") == nil && c.kw("full_finetuning") == nil {
		r.train.setBits(4, "load_in_4bit")
		r.note("load_in_4bit not given: Unsloth's from_pretrained loads in 4 bits by default")
	}
	if c.kw("max_seq_length") == nil {
		r.fill("seq", "2048", "Unsloth's default max_seq_length")
	}
}

// pythonTrainer reads a trainer's call: a model given by its id, a PEFT
// config, and (older TRL, Unsloth) the sequence length.
func (r *reading) pythonTrainer(c *pyCall, name string, st *scriptState) {
	if m := c.kw("model"); m != nil {
		if n := r.arg(c, *m); n != nil && n.str() != "" {
			r.model(name+".model", n.str())
		}
	}
	if c.kw("peft_config") != nil {
		st.peft = true
	}
	if v := c.kw("max_seq_length"); v != nil {
		if n := r.arg(c, *v); n != nil {
			to("seq")(r, name+".max_seq_length", n)
		}
	}
}

// seqVariable reads a script's sequence length from a variable named as
// one (max_seq_length = 2048, seq_len, block_size = 1024) when no call
// gives it: notebooks set it once and build their data with it.
func (r *reading) seqVariable() {
	if r.j.Setting("seq") != "" {
		return
	}
	names := make([]string, 0, len(r.py.assigns))
	for name := range r.py.assigns {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s, ok := query.Lookup(normKey(name))
		if !ok && name != "block_size" || ok && s.Key != "seq" {
			continue
		}
		as := r.py.assigns[name]
		if v := as[len(as)-1].val; v.kind == pyNum {
			r.set(name, v.text, "seq")
			return
		}
	}
}

// kwargsOr runs f unless c's keyword key says otherwise.
func (r *reading) kwargsOr(c *pyCall, key string, f func()) {
	if v := c.kw(key); v != nil {
		if n := r.arg(c, *v); n != nil {
			gradientCheckpointing(r, c.name+"."+key, n)
			return
		}
	}
	f()
}

// llmKeys are vLLM's LLM() arguments: the engine's flags with _.
func (r *reading) pythonLLM() {
	for _, c := range r.py.calls {
		if last(c.name) != "LLM" {
			continue
		}
		if len(c.args) > 0 {
			if n := r.arg(c, c.args[0]); n != nil {
				r.model("LLM", n.str())
			}
		}
		t := table{}
		for k, f := range vllmFlags {
			t[strings.ReplaceAll(k, "-", "_")] = f
		}
		r.kwargs(c, t, "LLM.")
		r.j.Settings = append(r.j.Settings, kv("engine", "vllm"))
		r.j.Method = "inference"
		r.found = true
		if n := countCalls(r.py, "LLM"); n > 1 {
			r.note("%d LLM(...) engines in the script: the first is read", n)
		}
		return
	}
}

func countCalls(s *pyScript, name string) int {
	n := 0
	for _, c := range s.calls {
		if last(c.name) == name {
			n++
		}
	}
	return n
}
