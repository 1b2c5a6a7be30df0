package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/query"
)

// A format's keys are a table: each key names the rule that reads it.
// Keys no table lists are read by reading.generic (the grammar's own
// aliases, the keys that never change memory, or unknown).

// rule reads one key (its name as written) and its value.
type rule func(r *reading, key string, v *node)

// table is a format's rules by key.
type table map[string]rule

// readMap reads every key of a mapping by the table.
func (r *reading) readMap(n *node, t table) {
	if n == nil || n.kind != mapNode {
		return
	}
	for i, k := range n.keys {
		v := n.vals[i]
		if v.null {
			continue // a key set to null leaves the tool's default
		}
		if f, ok := t[k]; ok {
			f(r, k, v)
			continue
		}
		r.generic(k, v)
	}
}

func kv(k, v string) query.KeyValue { return query.KeyValue{Key: k, Value: v} }

// notLiteral stands for a Python value computed in the script.
const notLiteral = "(not a literal)"

// to reads a single value as the grammar setting gk.
func to(gk string) rule {
	return func(r *reading, key string, v *node) {
		if v.value == notLiteral {
			r.item(key, notLiteral, "", "computed in the script: not read")
			return
		}
		if v.kind != scalarNode {
			r.unknown(key, "not a single value")
			return
		}
		r.set(key, v.str(), gk)
	}
}

// ign is a key that does not change memory.
func ign(r *reading, key string, _ *node) { r.ignore(key) }

// onOff reads a boolean as gk=on or gk=off (either "" to only record it).
func onOff(gk, on, off string) rule {
	return func(r *reading, key string, v *node) {
		if v.value == notLiteral {
			r.item(key, notLiteral, "", "computed in the script: not read")
			return
		}
		b, ok := truth(v.str())
		if !ok {
			r.unknown(key, fmt.Sprintf("%s is not true or false", shown(key, v.text())))
			return
		}
		val := off
		if b {
			val = on
		}
		if val == "" {
			r.item(key, v.text(), "", "")
			return
		}
		r.setAs(key, v.str(), gk, val)
	}
}

// unmodelled is a key that changes memory in a way the grammar has no
// word for; why says what the estimate does instead.
func unmodelled(why string) rule {
	return func(r *reading, key string, v *node) {
		if b, ok := truth(v.str()); ok && !b {
			r.item(key, v.text(), "", "off")
			return
		}
		r.unknown(key, why)
	}
}

// confirm is a key that says what the estimate assumes anyway.
func confirm(note string) rule {
	return func(r *reading, key string, v *node) { r.item(key, v.text(), "", note) }
}

// positive reads a positive integer ("" when it is none).
func positive(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// optimizers maps the optimizer names of TrainingArguments, axolotl,
// LLaMA-Factory, torchtune components and DeepSpeed to the grammar's
// optim (docs/jobs.md §2). Names it lacks are read through the grammar's
// own vocabulary, else not used.
var optimizers = map[string]string{
	"adamw_torch": "adamw", "adamw_torch_fused": "adamw", "adamw_hf": "adamw", "adamw_apex_fused": "adamw", "adamw": "adamw",
	"adam": "adamw", "adamw_torch_xla": "adamw", "adamw_torch_npu_fused": "adamw", "schedule_free_adamw": "adamw", "adopt_adamw": "adamw",
	"adamw_bnb_8bit": "adamw-8bit", "adamw_8bit": "adamw-8bit", "adam8bit": "adamw-8bit", "bnb_adamw_8bit": "adamw-8bit", "adamw_torch_8bit": "adamw-8bit",
	"paged_adamw_8bit": "paged-adamw-8bit", "paged_adamw_32bit": "adamw", "paged_adamw": "adamw", "lion_8bit": "", "paged_lion_8bit": "",
	"adafactor": "adafactor", "sgd": "sgd",
	// 4-bit states (torchao) are read as 8-bit: the grammar's smallest.
	"adamw_torch_4bit": "adamw-8bit", "adamw_4bit": "adamw-8bit", "paged_adamw_4bit": "adamw-8bit",
	// torchtune, torchao and bitsandbytes components, DeepSpeed's types.
	"torch.optim.adamw": "adamw", "torch.optim.adam": "adamw", "torch.optim.sgd": "sgd",
	"bitsandbytes.optim.pagedadamw8bit": "paged-adamw-8bit", "bitsandbytes.optim.adamw8bit": "adamw-8bit",
	"bitsandbytes.optim.pagedadamw": "adamw", "bitsandbytes.optim.pagedadamw32bit": "adamw",
	"torchao.optim.adamw8bit": "adamw-8bit", "torchao.prototype.low_bit_optim.adamw8bit": "adamw-8bit",
	"torchao.optim.adamw4bit": "adamw-8bit", "transformers.optimization.adafactor": "adafactor",
	"onebitadam": "adamw", "fusedadam": "adamw", "cpuadam": "adamw", "deepspeedcpuadam": "adamw",
}

// optim reads an optimizer's name.
func optim(r *reading, key string, v *node) {
	name := strings.ToLower(strings.TrimSpace(v.str()))
	if o, ok := optimizers[name]; ok {
		if o == "" {
			r.unknown(key, fmt.Sprintf("optimizer %s has no word in the grammar: estimated with AdamW", shown(key, v.str())))
			return
		}
		r.setAs(key, v.str(), "optim", o)
		return
	}
	if _, err := query.CheckValue("optim", name); err == nil {
		r.set(key, name, "optim")
		return
	}
	r.unknown(key, fmt.Sprintf("optimizer %s has no word in the grammar: estimated with AdamW", shown(key, v.str())))
}

// attention reads an attention implementation's name or flag value.
func attention(r *reading, key string, v *node) {
	s := strings.ToLower(strings.Trim(v.str(), `"'`))
	switch {
	case strings.Contains(s, "eager"):
		r.setAs(key, v.str(), "attn", "eager")
	case strings.Contains(s, "flash") || strings.Contains(s, "sdpa") || strings.Contains(s, "fa2") || strings.Contains(s, "fa3") || strings.Contains(s, "flex") || s == "auto":
		r.setAs(key, v.str(), "attn", "flash")
	case s == "disabled" || s == "off":
		r.setAs(key, v.str(), "attn", "eager")
	default:
		if b, ok := truth(s); ok {
			if b {
				r.setAs(key, v.str(), "attn", "flash")
			} else {
				r.item(key, v.str(), "", "off: the model's default kernel")
			}
			return
		}
		r.unknown(key, fmt.Sprintf("attention %s is not a kernel the grammar names", shown(key, v.str())))
	}
}

// moduleKinds are the module names of LoRA targets by what they are:
// an MLP projection, or q, k, v and o of attention (the names of
// transformers, torchtune and Megatron-style models).
var moduleKinds = []struct {
	kind     string
	contains []string // any of these in the name
	exact    []string // or the name is one of these
}{
	{"mlp", []string{"gate", "up_proj", "down_proj", "mlp", "w1", "w2", "w3", "fc1", "fc2"}, nil},
	{"qkv", []string{"qkv"}, nil},
	{"q", []string{"q_proj"}, []string{"q", "wq", "query"}},
	{"k", []string{"k_proj"}, []string{"k", "wk", "key"}},
	{"v", []string{"v_proj"}, []string{"v", "wv", "value"}},
	{"o", []string{"o_proj", "output_proj", "dense"}, []string{"o", "wo"}},
}

// moduleKind is what a target module's name is ("" for none).
func moduleKind(name string) string {
	for _, k := range moduleKinds {
		if slices.Contains(k.exact, name) || slices.ContainsFunc(k.contains, func(c string) bool { return strings.Contains(name, c) }) {
			return k.kind
		}
	}
	return ""
}

// targetsOf is the grammar's LoRA targets for a list of module names:
// every linear layer once an MLP projection is adapted, every attention
// projection once k or o is, else q and v.
func targetsOf(mods []string) (string, bool) {
	has := map[string]bool{}
	for _, m := range mods {
		l := strings.ToLower(strings.TrimSpace(m))
		if l == "all-linear" || l == "all_linear" || l == "all" {
			return "all", true
		}
		has[moduleKind(l)] = true
	}
	switch {
	case has["mlp"]:
		return "all", true
	case has["k"] || has["o"] || has["qkv"]:
		return "attn", true
	case has["q"] || has["v"]:
		return "qv", true
	}
	return "", false
}

// targets reads a list (or comma-separated string) of LoRA target modules.
func targets(r *reading, key string, v *node) {
	mods := v.strs()
	if len(mods) == 1 {
		mods = strings.Split(strings.Trim(mods[0], "[]"), ",")
	}
	t, ok := targetsOf(mods)
	if !ok {
		r.unknown(key, "no attention or MLP projection among the target modules")
		return
	}
	r.setAs(key, v.text(), "targets", t)
}

// method records a key that names the method (lora, qlora, full…).
func (r *reading) methodKey(key, raw, m string) {
	r.item(key, raw, "", "")
	r.train.setAdapter(m, key)
}

// bitsKey records a bitsandbytes load flag.
func (r *reading) bitsKey(key string, v *node, bits int) {
	b, ok := truth(v.str())
	if !ok || !b {
		if ok {
			r.item(key, v.text(), "", "off")
		}
		return
	}
	r.item(key, v.text(), "", "")
	r.train.setBits(bits, key)
}

// dtypeKey records the dtype the weights are loaded in.
func (r *reading) dtypeKey(key, raw string) {
	if raw == notLiteral {
		r.item(key, raw, "", "computed in the script: not read")
		return
	}
	d := dtypeOf(raw)
	if d == "" {
		if s := strings.ToLower(strings.Trim(raw, `"'`)); s == "auto" || s == "none" || s == "" {
			r.item(key, raw, "", "auto: the checkpoint's own dtype")
			return
		}
		r.unknown(key, fmt.Sprintf("%s is not a dtype the grammar names", shown(key, raw)))
		return
	}
	r.item(key, raw, "", "")
	if r.train.dtype == "" {
		r.train.dtype, r.train.dtypeKey = d, key
	}
}

// ampKey records a bf16/fp16 flag of the HF Trainer: autocast in that
// dtype.
func (r *reading) ampKey(key string, v *node, dtype string) {
	if v.value == notLiteral {
		r.item(key, notLiteral, "", "computed in the script: not read")
		return
	}
	b, ok := truth(v.str())
	if strings.EqualFold(v.str(), "auto") {
		b, ok = true, true
	}
	if !ok || !b {
		if ok {
			r.item(key, v.text(), "", "off")
		} else {
			r.item(key, v.text(), "", "not true or false: not read")
		}
		return
	}
	r.item(key, v.text(), "", "")
	if r.train.amp == "" {
		r.train.amp, r.train.ampKey = dtype, key
	}
}

// gradientCheckpointing reads gradient_checkpointing's true/false and
// the offloaded variants ("offload", Unsloth's "unsloth").
func gradientCheckpointing(r *reading, key string, v *node) {
	s := strings.ToLower(strings.Trim(v.str(), `"'`))
	switch s {
	case "unsloth", "offload", "offload_disk":
		r.setAs(key, v.str(), "gc", "offloaded")
		return
	}
	b, ok := truth(s)
	if !ok {
		r.unknown(key, fmt.Sprintf("%s is not true or false", shown(key, v.str())))
		return
	}
	if b {
		r.setAs(key, v.str(), "gc", "on")
	} else {
		r.setAs(key, v.str(), "gc", "off")
	}
}

// doubleQuant is bitsandbytes' double quantisation of the 4-bit scales.
var doubleQuant = unmodelled("the 4-bit scales quantised again (about 0.4 bits a weight less): not modelled")
