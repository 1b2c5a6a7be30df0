package job

import (
	"fmt"
	"strings"
)

// readLlamaFactory reads a LLaMA-Factory training YAML (the arguments of
// src/llamafactory/hparams/{model,finetuning,data}_args.py and the HF
// Seq2SeqTrainingArguments, at ff6d4d12; docs/jobs.md §2.1).
func readLlamaFactory(root *node) (Job, error) { return llamaFactory(root, true) }

// llamaFactory reads a config's keys; defaults fills LLaMA-Factory's
// own for what they leave out.
func llamaFactory(root *node, defaults bool) (Job, error) {
	r := newReading(LlamaFactory)
	r.readMap(root, llamaFactoryKeys)
	if pure, _ := truth(root.get("pure_bf16").str()); !pure {
		// Trainable weights are upcast to fp32 unless pure_bf16 (or BAdam)
		// is set (model/adapter.py init_adapter).
		r.train.fp32Masters = true
	}
	if r.train.amp != "" && r.train.dtype == "" {
		// The model loads in the compute dtype the bf16/fp16 flag names
		// (model_args.compute_dtype, infer_optim_dtype).
		r.train.dtype, r.train.dtypeKey = r.train.amp, r.train.ampKey
	}
	r.finishTraining("lora")
	// LLaMA-Factory's and the HF Trainer's defaults for what the YAML
	// leaves out: lora_rank 8, lora_target all, cutoff_len 2048,
	// per_device_train_batch_size 8 (finetuning_args.py, data_args.py,
	// transformers TrainingArguments).
	if defaults && (r.j.Method == "lora" || r.j.Method == "qlora" || r.j.Method == "dora") {
		r.fill("rank", "8", "LLaMA-Factory's default lora_rank")
		r.fill("targets", "all", "LLaMA-Factory's default lora_target: all")
	}
	if defaults {
		r.fill("seq", "2048", "LLaMA-Factory's default cutoff_len")
		r.fill("bs", "8", "the HF Trainer's default per_device_train_batch_size")
	}
	r.fill("framework", "llama-factory", "the format")
	return r.job()
}

var llamaFactoryKeys = table{
	"model_name_or_path":   func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"adapter_name_or_path": ign,
	"stage": func(r *reading, k string, v *node) {
		switch s := strings.ToLower(v.str()); s {
		case "sft", "pt":
			r.ignore(k)
		default:
			r.unknown(k, fmt.Sprintf("stage %s: its reference or reward model is not modelled, estimated as SFT", shown(k, v.str())))
		}
	},
	"finetuning_type": func(r *reading, k string, v *node) {
		switch s := strings.ToLower(v.str()); s {
		case "lora", "full", "freeze":
			r.methodKey(k, v.str(), s)
		default:
			r.unknown(k, fmt.Sprintf("finetuning_type %s: estimated as LoRA", shown(k, v.str())))
			r.train.setAdapter("lora", k)
		}
	},
	"use_dora": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.methodKey(k, v.str(), "dora")
		}
	},
	"lora_rank":   to("rank"),
	"lora_target": targets,
	"quantization_bit": func(r *reading, k string, v *node) {
		switch v.str() {
		case "4":
			r.bitsKey(k, &node{value: "true"}, 4)
		case "8":
			r.bitsKey(k, &node{value: "true"}, 8)
		default:
			r.unknown(k, fmt.Sprintf("%s-bit weights: not a precision the grammar names", shown(k, v.str())))
		}
		fixValue(r, k, v.str())
	},
	"quantization_method": func(r *reading, k string, v *node) {
		if m := strings.ToLower(v.str()); m == "bnb" || m == "bitsandbytes" || m == "bitsandbytes4" || m == "bitsandbytes8" {
			r.item(k, v.str(), "", "bitsandbytes, as the estimate's 4- and 8-bit weights")
			return
		}
		r.unknown(k, fmt.Sprintf("%s quantisation: estimated as bitsandbytes", shown(k, v.str())))
	},
	"quantization_type":              ign,
	"double_quantization":            doubleQuant,
	"cutoff_len":                     to("seq"),
	"per_device_train_batch_size":    to("bs"),
	"gradient_accumulation_steps":    to("ga"),
	"bf16":                           func(r *reading, k string, v *node) { r.ampKey(k, v, "bf16") },
	"fp16":                           func(r *reading, k string, v *node) { r.ampKey(k, v, "fp16") },
	"pure_bf16":                      confirm("weights, gradients and optimizer states in bf16"),
	"deepspeed":                      deepspeedPath,
	"flash_attn":                     attention,
	"enable_liger_kernel":            onOff("loss", "chunked", ""),
	"use_unsloth":                    unmodelled("Unsloth's kernels under LLaMA-Factory: not modelled"),
	"use_unsloth_gc":                 onOff("gc", "offloaded", ""),
	"disable_gradient_checkpointing": onOff("gc", "off", "on"),
	"optim":                          optim,
	"use_galore":                     unmodelled("GaLore's low-rank optimizer states: not modelled, estimated with AdamW"),
	"use_apollo":                     unmodelled("APOLLO's optimizer states: not modelled, estimated with AdamW"),
	"use_badam":                      unmodelled("BAdam (one block trained at a time): not modelled"),
	"use_adam_mini":                  unmodelled("Adam-mini's optimizer states: not modelled, estimated with AdamW"),
	"use_muon":                       unmodelled("Muon's optimizer states: not modelled, estimated with AdamW"),
	"use_llama_pro":                  confirm("LLaMA Pro: the added blocks train, read as freeze"),
	"freeze_trainable_layers":        ign,
	"freeze_trainable_modules":       ign,
	"freeze_extra_modules":           ign,
	"packing":                        confirm("sequences packed to cutoff_len: full length, as the estimate assumes"),
	"neat_packing":                   confirm("sequences packed to cutoff_len: full length, as the estimate assumes"),
	"fp8":                            unmodelled("FP8 training: not modelled, estimated in 16 bits"),
	"ddp_timeout":                    ign,
	"pissa_init":                     ign,
	"pissa_convert":                  ign,
	"additional_target":              unmodelled("more modules trained in full: not modelled"),
	"infer_backend":                  ign,
	"max_new_tokens":                 ign,
	"top_k":                          ign,
}

// fixValue shows a key's value as written in its read item.
func fixValue(r *reading, key, raw string) {
	for i := len(r.j.Read) - 1; i >= 0; i-- {
		if r.j.Read[i].Key == key {
			r.j.Read[i].Value = shown(key, raw)
			return
		}
	}
}

// readLlamaFactoryV1 reads LLaMA-Factory's v1 schema
// (src/llamafactory/v1/config/*.py and its plugins, at ff6d4d12): the
// model, peft_config, quant_config, dist_config and kernel_config.
func readLlamaFactoryV1(root *node) (Job, error) {
	r := newReading(LlamaFactory)
	r.readMap(root, llamaFactoryV1Keys)
	r.finishTraining("full")
	if r.j.Method == "lora" || r.j.Method == "qlora" {
		r.fill("rank", "8", "the v1 LoRA plugin's default r")
	}
	r.fill("seq", "2048", "LLaMA-Factory v1's default cutoff_len")
	r.fill("bs", "1", "LLaMA-Factory v1's default micro_batch_size")
	r.fill("framework", "llama-factory", "the format")
	return r.job()
}

var llamaFactoryV1Keys = table{
	"model":                           func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"micro_batch_size":                to("bs"),
	"cutoff_len":                      to("seq"),
	"global_batch_size":               ign,
	"enable_activation_checkpointing": onOff("gc", "on", "off"),
	"peft_config": func(r *reading, k string, v *node) {
		name := strings.ToLower(v.get("name").str())
		switch name {
		case "lora", "freeze":
			r.methodKey(k+".name", name, name)
		default:
			r.unknown(k+".name", fmt.Sprintf("%s: not a method the grammar names", shown(k, name)))
		}
		r.readMap(v, table{
			"name": func(*reading, string, *node) {}, "r": prefixed(k, to("rank")), "target_modules": prefixed(k, targets),
			"use_dora": prefixed(k, func(r *reading, k string, v *node) {
				if b, _ := truth(v.str()); b {
					r.methodKey(k, v.str(), "dora")
				}
			}),
		})
	},
	"quant_config": func(r *reading, k string, v *node) {
		bits := v.get("quantization_bit").str()
		if bits == "" {
			bits = "4" // the bnb plugin's default (v1/plugins/model_plugins/quantization.py)
		}
		b := 4
		if bits == "8" {
			b = 8
		}
		r.bitsKey(k, &node{value: "true"}, b)
		fixValue(r, k, bits+"-bit "+v.get("name").str())
	},
	"dist_config": func(r *reading, k string, v *node) {
		switch name := strings.ToLower(v.get("name").str()); {
		case strings.HasPrefix(name, "fsdp"):
			r.j.Sharding = "fsdp"
			r.found = true
			r.item(k+".name", name, "fsdp", "")
		case name == "deepspeed":
			if cfg := v.get("config_file").str(); cfg != "" {
				deepspeedPath(r, k+".config_file", v.get("config_file"))
			} else {
				r.unknown(k, "DeepSpeed without its config: give zero= in the query words")
			}
		default:
			r.unknown(k, "")
		}
	},
	"kernel_config": func(r *reading, k string, v *node) {
		if strings.Contains(strings.ToLower(v.get("name").str()), "liger") {
			r.setAs(k+".name", v.get("name").str(), "loss", "chunked")
			return
		}
		r.ignore(k)
	},
	"optim_config":  func(r *reading, k string, v *node) { optim(r, k+".name", v.get("name")) },
	"cp_size":       unmodelled("context parallelism: not modelled"),
	"dp_size":       to("gpus"),
	"train_dataset": ign, "sample_backend": ign, "max_new_tokens": ign, "batching_strategy": ign, "batching_workers": ign,
	"lr_scheduler_config": ign, "init_config": ign, "model_class": ign,
}

// prefixed runs f with the key under its parent's name ("peft_config.r").
func prefixed(parent string, f rule) rule {
	return func(r *reading, k string, v *node) { f(r, parent+"."+k, v) }
}
