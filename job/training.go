package job

import (
	"fmt"
	"slices"
	"strings"
)

// training is what a training file says about the method and the
// weights' precision, which the grammar reads together: "lora" on 4-bit
// weights is qlora, bf16 is the frozen weights' dtype for LoRA but AMP
// for full fine-tuning in the HF Trainer (docs/jobs.md §2).
type training struct {
	// adapter is the method the file names: lora, qlora, dora, full,
	// freeze ("" when it names none); adapterKey the key that did.
	adapter, adapterKey string
	// bits are the bitsandbytes bits the base is loaded in (4, 8; 0 for
	// none), bitsKey the key that said so.
	bits    int
	bitsKey string
	// int8Offload is llm_int8_enable_fp32_cpu_offload's key when it, an
	// int8 option, said the bits (8, assumed): an explicit load wins.
	int8Offload string
	// dtype is the dtype the weights are loaded in (bf16, fp16, fp32);
	// amp the autocast dtype of the HF Trainer's bf16/fp16 flags.
	dtype, dtypeKey string
	amp, ampKey     string
	// fp32Masters: the tool keeps trainable weights in fp32 under AMP
	// (LLaMA-Factory without pure_bf16).
	fp32Masters bool
	// checkpoint is a quantised checkpoint's format the file names
	// (gptq, awq, fp8).
	checkpoint string
}

// dtypes maps the dtype spellings of configs (torch dtypes, flags,
// torchtune's) to the grammar's precision.
var dtypes = map[string]string{
	"bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
	"fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16", "torch.half": "fp16",
	"fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32", "torch.float": "fp32",
}

// dtypeOf is a dtype spelling's precision ("" for auto or unknown).
func dtypeOf(s string) string {
	return dtypes[strings.ToLower(strings.Trim(strings.TrimSpace(s), `"'`))]
}

// setAdapter records the method a key names.
func (t *training) setAdapter(m, key string) {
	if t.adapter == "" || t.adapter == "lora" && (m == "dora" || m == "qlora") {
		t.adapter, t.adapterKey = m, key
	}
}

// setBits records a bitsandbytes load.
func (t *training) setBits(bits int, key string) {
	if t.bits == 0 || t.bitsKey == t.int8Offload {
		t.bits, t.bitsKey = bits, key
	}
}

// methodPrecision is the grammar's method and precision for the facts,
// with def the tool's method when the file names none.
func (t training) methodPrecision(def string) (method, precision string) {
	method = t.adapter
	if method == "" {
		method = def
	}
	adapter := slices.Contains([]string{"lora", "qlora", "dora"}, method)
	switch {
	case adapter && t.bits == 4:
		if method == "lora" {
			method = "qlora"
		}
		if method == "dora" {
			precision = "nf4"
		}
		return method, precision
	case adapter && t.bits == 8:
		if method == "qlora" {
			method = "lora"
		}
		return method, "int8"
	case method == "qlora":
		return method, ""
	case t.bits == 4 && (method == "inference" || method == "freeze"):
		return method, "nf4"
	case t.bits == 8 && (method == "inference" || method == "freeze"):
		return method, "int8"
	case t.checkpoint != "":
		return method, t.checkpoint
	case adapter || method == "freeze" || method == "inference":
		return method, t.dtype
	}
	// Full fine-tuning: weights loaded in 16 bits and trained so are pure
	// 16-bit; AMP over fp32 weights (or fp32 masters) is mixed precision.
	switch {
	case t.amp != "" && (t.fp32Masters || t.dtype == "" || t.dtype == "fp32"):
		return method, "mixed-" + t.amp
	case t.dtype != "":
		return method, t.dtype
	}
	return method, ""
}

// finishTraining turns the facts into the method and precision, naming
// the keys that decided them.
func (r *reading) finishTraining(def string) {
	r.settleInt8Offload()
	t := r.train
	method, precision := t.methodPrecision(def)
	if method != "" {
		r.j.Method = method
		r.found = true
	}
	if precision != "" {
		from := t.dtypeKey
		switch {
		case t.bits > 0:
			from = t.bitsKey
		case strings.HasPrefix(precision, "mixed-"):
			from = t.ampKey
		case t.checkpoint != "":
			from = "the checkpoint"
		}
		r.j.Settings = append(r.j.Settings, kv("precision", precision))
		r.from["precision"] = from
	}
	r.explain(method, precision)
}

// explain fills in what the keys that decide the method and precision
// were read as.
func (r *reading) explain(method, precision string) {
	t := r.train
	for i, it := range r.j.Read {
		switch it.Key {
		case t.adapterKey:
			if strings.HasPrefix(it.As, "model ") {
				r.j.Read[i].As = strings.Join(strings.Fields(it.As)[:2], " ") + " " + method
				continue
			}
			r.j.Read[i].As = method
		case t.bitsKey:
			r.j.Read[i].As = method
			if precision != "" {
				r.j.Read[i].As += " precision=" + precision
			}
		case t.dtypeKey, t.ampKey:
			if precision == "" || it.Key == t.dtypeKey && strings.HasPrefix(precision, "mixed-") && t.ampKey != "" {
				if r.j.Read[i].Note == "" {
					r.j.Read[i].Note = "the compute dtype: the weights' precision is the method's"
				}
				continue
			}
			r.j.Read[i].As = "precision=" + precision
		}
	}
}

// int8OffloadWhy is what llm_int8_enable_fp32_cpu_offload does that the
// estimate leaves out.
const int8OffloadWhy = "the modules offloaded to the CPU stay there in fp32: not modelled, estimated on the GPU"

// int8OffloadNote is the assumption an int8 offload with no load states.
const int8OffloadNote = "%s without load_in_4bit or load_in_8bit: an int8 option (the modules it offloads to the CPU stay in fp32, the rest is int8), so the weights are assumed 8-bit; the offloaded modules are not modelled, estimated on the GPU"

// int8OffloadKey reads bitsandbytes' llm_int8_enable_fp32_cpu_offload.
// It is an int8 option (transformers' BitsAndBytesConfig: the modules
// offloaded to the CPU stay in fp32, the rest is int8), so with no
// load_in_4bit or load_in_8bit the weights are read as 8-bit, an
// assumption the note states; an explicit load wins (settleInt8Offload).
func int8OffloadKey(r *reading, key string, v *node) {
	b, ok := truth(v.str())
	switch {
	case ok && !b:
		r.item(key, v.text(), "", "off")
	case !ok || r.train.bits != 0:
		r.unknown(key, int8OffloadWhy)
	default:
		r.item(key, v.text(), "", "an int8 option: the weights read as 8-bit")
		r.note(int8OffloadNote, key)
		r.train.int8Offload = key
		r.train.bits, r.train.bitsKey = 8, key
	}
}

// settleInt8Offload makes llm_int8_enable_fp32_cpu_offload a key not
// modelled when a load_in_4bit or load_in_8bit after it said the bits.
func (r *reading) settleInt8Offload() {
	k := r.train.int8Offload
	if k == "" || r.train.bitsKey == k {
		return
	}
	r.j.Read = slices.DeleteFunc(r.j.Read, func(it Item) bool { return it.Key == k })
	r.j.Notes = slices.DeleteFunc(r.j.Notes, func(n string) bool { return n == fmt.Sprintf(int8OffloadNote, k) })
	r.unknown(k, int8OffloadWhy)
	r.train.int8Offload = ""
}
