package job

import (
	"path"
	"regexp"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/query"
)

// readTorchtune reads a torchtune recipe config (recipes/configs/**.yaml
// and the recipes that read them, at bd2a0fc7; docs/jobs.md §2.1).
func readTorchtune(root *node) (Job, error) {
	r := newReading(Torchtune)
	r.torchtune(root)
	return r.job()
}

// torchtune reads a config's keys and finishes the job.
func (r *reading) torchtune(root *node) {
	// The checkpoint's folder names the model as the Hub does
	// (/tmp/Meta-Llama-3.1-8B-Instruct/); the builder only its
	// architecture (llama3_1_8b), read when the folder names none.
	if dir := root.path("checkpointer", "checkpoint_dir").str(); dir != "" {
		if name, _ := modelRef(dir); name != "" && nameLike(name) {
			r.model("checkpointer.checkpoint_dir", dir)
		}
	}
	r.readMap(root, torchtuneKeys)
	r.finishTraining("full")
	r.fill("framework", "torchtune", "the format")
}

var torchtuneKeys = table{
	"model":                       torchtuneModel,
	"tokenizer":                   torchtuneTokenizer,
	"batch_size":                  to("bs"),
	"gradient_accumulation_steps": to("ga"),
	"optimizer": func(r *reading, k string, v *node) {
		if c := v.get("_component_"); c != nil {
			optim(r, k+"._component_", c)
		}
	},
	"optimizer_in_bwd": onOff("optim-in-bwd", "on", "off"),
	"loss": func(r *reading, k string, v *node) {
		c := v.get("_component_").str()
		switch l := strings.ToLower(c); {
		case strings.Contains(l, "chunked") || strings.Contains(l, "linearcrossentropy"):
			r.setAs(k+"._component_", c, "loss", "chunked")
		case strings.Contains(l, "crossentropy"):
			r.setAs(k+"._component_", c, "loss", "standard")
		default:
			r.unknown(k+"._component_", "")
		}
	},
	"dtype":                           func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) },
	"enable_activation_checkpointing": onOff("gc", "on", "off"),
	"enable_activation_offloading":    onOff("act-offload", "on", "off"),
	"compile":                         unmodelled("torch.compile: not modelled (it keeps fewer activations)"),
	"fsdp_cpu_offload":                onOff("offload", "param", ""),
	"fsdp_reshard_after_forward":      onOff("zero", "", "2"),
	"dataset": func(r *reading, k string, v *node) {
		if p := v.get("packed"); p != nil {
			if b, _ := truth(p.str()); b {
				r.item(k+".packed", p.str(), "", "sequences packed to max_seq_len: full length, as the estimate assumes")
				return
			}
			r.item(k+".packed", p.str(), "", "off")
		}
		r.ignore(k)
	},
	"tensor_parallel_dim":       to("tp"),
	"checkpointer":              ign,
	"custom_sharded_layers":     ign,
	"metric_logger":             ign,
	"profiler":                  ign,
	"lr_scheduler":              ign,
	"dataset_val":               ign,
	"batch_size_val":            ign,
	"max_steps_per_epoch":       ign,
	"clip_grad_norm":            ign,
	"save_adapter_weights_only": ign,
	"log_peak_memory_stats":     ign,
	"log_every_n_steps":         ign,
	"log_level":                 ign,
	"run_val_every_n_steps":     ign,
	"low_cpu_ram":               ign,
	"teacher_model":             unmodelled("knowledge distillation: the teacher's weights and logits are not modelled"),
	"ref_model":                 unmodelled("a reference model: not modelled"),
}

// torchtuneModel reads the model builder (torchtune.models.llama3_1.
// qlora_llama3_1_8b) and its LoRA arguments.
func torchtuneModel(r *reading, key string, v *node) {
	comp := v.get("_component_").str()
	builder := path.Ext(comp)
	if builder == "" {
		builder = "." + comp
	}
	builder = builder[1:]
	name, method := builderModel(builder)
	switch {
	case name != "" && r.j.Model == "":
		r.model(key+"._component_", name)
		fixValue(r, key+"._component_", comp)
	case name != "":
		r.item(key+"._component_", comp, "", "the builder of "+name)
	}
	if method != "full" {
		r.train.setAdapter(method, key+"._component_")
		for i, it := range r.j.Read {
			if it.Key == key+"._component_" {
				r.j.Read[i].As += " " + method
			}
		}
	}
	var attn []string
	mlp := false
	for i, k := range v.keys {
		val := v.vals[i]
		full := key + "." + k
		switch k {
		case "_component_":
		case "lora_rank":
			r.set(full, val.str(), "rank")
		case "lora_attn_modules":
			attn = val.strs()
			r.item(full, val.text(), "", "")
		case "apply_lora_to_mlp":
			mlp, _ = truth(val.str())
			r.item(full, val.text(), "", "")
		case "use_dora":
			if b, _ := truth(val.str()); b {
				r.methodKey(full, val.str(), "dora")
			}
		case "quantize_base":
			r.bitsKey(full, val, 4)
		default:
			r.ignore(full)
		}
	}
	if mlp {
		attn = append(attn, "mlp")
	}
	if t, ok := targetsOf(attn); ok {
		r.j.Settings = append(r.j.Settings, kv("targets", t))
		r.from["targets"] = key + ".lora_attn_modules"
		for i, it := range r.j.Read {
			if it.Key == key+".lora_attn_modules" || it.Key == key+".apply_lora_to_mlp" {
				r.j.Read[i].As = "targets=" + t
			}
		}
	}
}

// torchtuneTokenizer reads max_seq_len (null: sequences as long as the
// data's, not truncated).
func torchtuneTokenizer(r *reading, key string, v *node) {
	m := v.get("max_seq_len")
	switch {
	case m == nil:
		r.ignore(key)
	case m.null:
		r.item(key+".max_seq_len", "null", "", "no truncation: sequences are as long as the data's")
	default:
		r.set(key+".max_seq_len", m.str(), "seq")
	}
}

// builderParts splits a builder's name (llama3_1_8b) into its words.
var sizePart = regexp.MustCompile(`^\d+[bm]$`)

// builderModel is the model a torchtune builder builds and its method:
// "qlora_llama3_1_8b" is llama3.1-8b by QLoRA. A version and a decimal
// size are both written with _ ("llama3_1_8b", "qwen3_1_7b"); the
// catalog says which reading names a model.
func builderModel(b string) (name, method string) {
	method = "full"
	for _, p := range []struct{ prefix, method string }{{"qlora_", "qlora"}, {"lora_", "lora"}, {"dora_", "dora"}} {
		if strings.HasPrefix(b, p.prefix) {
			b, method = b[len(p.prefix):], p.method
			break
		}
	}
	b = strings.TrimSuffix(b, "_base")
	parts := strings.FieldsFunc(b, func(r rune) bool { return r == '_' })
	if len(parts) == 0 {
		return "", method
	}
	if len(parts) < 2 {
		return b, method
	}
	asSize := joinBuilder(parts, false)
	asVersion := joinBuilder(parts, true)
	if _, ok := catalog.LookupModel(asVersion); ok {
		return asVersion, method
	}
	if _, ok := catalog.LookupModel(asSize); ok {
		return asSize, method
	}
	return asVersion, method
}

// joinBuilder joins a builder's words: a number after a name ending in a
// digit is its version when version is set ("llama3" "1" → llama3.1),
// and a number before a size its whole part ("0" "5b" → 0.5b).
func joinBuilder(parts []string, version bool) string {
	var b strings.Builder
	b.WriteString(parts[0])
	versioned := false
	for i := 1; i < len(parts); i++ {
		p, prev := parts[i], parts[i-1]
		digits := strings.Trim(p, "0123456789") == ""
		switch {
		case version && !versioned && digits && i == 1 && prev[len(prev)-1] >= '0' && prev[len(prev)-1] <= '9':
			b.WriteString("." + p)
			versioned = true
		case digits && i+1 < len(parts) && sizePart.MatchString(parts[i+1]):
			b.WriteString("-" + p + "." + parts[i+1])
			i++
		default:
			b.WriteString("-" + p)
		}
	}
	return b.String()
}

// configModel reads a bundled config's name (llama3_1/8B_qlora_single_device,
// qwen2_5/7B_lora) as the model and the method it trains.
func configModel(cfg string) (name, method string, ok bool) {
	dir, base := path.Split(strings.TrimSuffix(cfg, ".yaml"))
	dir = path.Base(strings.Trim(dir, "/")) // recipes/configs/llama2/7B_full.yaml is llama2/7B_full
	if dir == "" || dir == "." {
		return "", "", false
	}
	words := strings.Split(strings.ToLower(base), "_")
	size := words[0]
	method = "full"
	for _, w := range words[1:] {
		switch w {
		case "lora", "qlora", "dora":
			method = w
		case "qdora":
			method = "dora"
		}
	}
	name, _ = builderModel(dir + "_" + size)
	return name, method, name != ""
}

// tuneOverride is one key=value a `tune run` line sets on its config.
func tuneOverride(r *reading, kvs []string) {
	root := &node{kind: mapNode}
	for _, s := range kvs {
		k, v, _ := strings.Cut(s, "=")
		k = strings.TrimPrefix(k, "~")
		parent := root
		keys := strings.Split(k, ".")
		for _, p := range keys[:len(keys)-1] {
			c := parent.get(p)
			if c == nil {
				c = &node{kind: mapNode}
				parent.keys, parent.vals = append(parent.keys, p), append(parent.vals, c)
			}
			parent = c
		}
		leaf := keys[len(keys)-1]
		if parent.get(leaf) == nil {
			parent.keys = append(parent.keys, leaf)
			parent.vals = append(parent.vals, &node{value: strings.Trim(v, `"'`), null: v == "null" || v == "None"})
		}
	}
	if m := root.get("model"); m != nil && m.get("_component_") == nil {
		// LoRA arguments alone: the builder is the config's.
		for i, k := range m.keys {
			torchtuneModel(r, "model", &node{kind: mapNode, keys: []string{k}, vals: []*node{m.vals[i]}})
		}
		root = without(root, "model")
	}
	r.readMap(root, torchtuneKeys)
}

// without is a mapping without key.
func without(n *node, key string) *node {
	out := &node{kind: mapNode, line: n.line}
	for i, k := range n.keys {
		if k != key {
			out.keys, out.vals = append(out.keys, k), append(out.vals, n.vals[i])
		}
	}
	return out
}

// tuneRecipe is the method a recipe trains by ("" when it says none).
func tuneRecipe(recipe string) string {
	switch l := strings.ToLower(recipe); {
	case strings.HasPrefix(l, "full_finetune"), strings.HasPrefix(l, "qat_distributed"):
		return "full"
	case strings.HasPrefix(l, "lora_finetune"), strings.HasPrefix(l, "qat_lora"):
		return "lora"
	}
	return ""
}

// bundledConfig is a config torchtune ships, as read from its file.
type bundledConfig struct {
	model, method string
	settings      []query.KeyValue
}
