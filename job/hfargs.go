package job

import (
	"strings"
)

// The HF Trainer's arguments, TRL's SFTConfig and ModelConfig and PEFT's
// LoraConfig share one set of names, whether written as a YAML config
// (trl sft --config), as command-line flags (trl sft --per_device_train_batch_size 2)
// or as Python keywords (SFTConfig(per_device_train_batch_size=2)): one
// table reads them all (docs/jobs.md §2.3).

var hfKeys = table{
	"model_name_or_path":            func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"per_device_train_batch_size":   to("bs"),
	"per_device_eval_batch_size":    ign,
	"auto_find_batch_size":          unmodelled("the batch is found by trial: estimated at the batch given"),
	"gradient_accumulation_steps":   to("ga"),
	"max_seq_length":                to("seq"),
	"max_length":                    to("seq"),
	"model_max_length":              to("seq"),
	"gradient_checkpointing":        gradientCheckpointing,
	"gradient_checkpointing_kwargs": ign,
	"optim":                         optim,
	"bf16":                          func(r *reading, k string, v *node) { r.ampKey(k, v, "bf16") },
	"fp16":                          func(r *reading, k string, v *node) { r.ampKey(k, v, "fp16") },
	"tf32":                          ign,
	"dtype":                         func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) },
	"torch_dtype":                   func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) },
	"attn_implementation":           attention,
	"use_peft": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.methodKey(k, v.str(), "lora")
		} else {
			r.item(k, v.str(), "", "off")
		}
	},
	"lora_r":              to("rank"),
	"r":                   to("rank"),
	"lora_target_modules": targets,
	"target_modules":      targets,
	"use_dora": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.methodKey(k, v.str(), "dora")
		}
	},
	"load_in_4bit":                     func(r *reading, k string, v *node) { r.bitsKey(k, v, 4) },
	"load_in_8bit":                     func(r *reading, k string, v *node) { r.bitsKey(k, v, 8) },
	"bnb_4bit_quant_type":              ign,
	"use_bnb_nested_quant":             doubleQuant,
	"bnb_4bit_use_double_quant":        doubleQuant,
	"bnb_4bit_compute_dtype":           ign,
	"bnb_4bit_quant_storage":           ign,
	"llm_int8_enable_fp32_cpu_offload": int8OffloadKey,
	"quantization_config":              quantizationConfig,
	"packing":                          confirm("sequences packed to max_length: full length, as the estimate assumes"),
	"padding_free":                     confirm("no padding: sequences as long as the data's"),
	"use_liger_kernel":                 onOff("loss", "chunked", ""),
	"loss_type": func(r *reading, k string, v *node) {
		switch strings.ToLower(v.str()) {
		case "chunked_nll":
			r.setAs(k, v.str(), "loss", "chunked")
		case "nll":
			r.setAs(k, v.str(), "loss", "standard")
		default:
			r.ignore(k)
		}
	},
	"activation_offloading": onOff("act-offload", "on", "off"),
	"deepspeed":             deepspeedPath,
	"fsdp":                  fsdpList,
	"fsdp_config": func(r *reading, k string, v *node) {
		if v.kind == mapNode {
			r.fsdpConfig(v, k)
			return
		}
		r.unknown(k, "an FSDP config file that is not in the file")
	},
	"torch_compile":               unmodelled("torch.compile: not modelled (it keeps fewer activations)"),
	"num_generations":             unmodelled("GRPO's generations: the rollouts' memory is not modelled, estimated as SFT"),
	"max_completion_length":       unmodelled("GRPO's completions: the rollouts' memory is not modelled, estimated as SFT"),
	"max_prompt_length":           ign,
	"use_vllm":                    unmodelled("generation in vLLM: its memory is not modelled"),
	"vllm_mode":                   ign,
	"vllm_gpu_memory_utilization": unmodelled("vLLM's share of the GPU for generation: not modelled"),
	"beta":                        ign,
	"use_cache":                   ign,
	"ddp_find_unused_parameters":  ign,
	"completion_only_loss":        ign,
	"assistant_only_loss":         ign,
	"neftune_noise_alpha":         ign,
	"lora_task_type":              ign,
	"task_type":                   ign,
	"bias":                        ign,
	"lora_modules_to_save":        ign,
	"modules_to_save":             ign,
	"device_map":                  ign,
	"low_cpu_mem_usage":           ign,
	"max_new_tokens":              ign,
	"do_sample":                   ign,
	"temperature":                 ign,
	"dataset_text_field":          ign,
	"model_revision":              ign,
	"revision":                    ign,
	"config":                      ign,
	"accelerator_config":          acceleratorConfig,
	"model_init_kwargs": func(r *reading, k string, v *node) {
		r.readMap(v, table{
			"dtype":               prefixed(k, func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) }),
			"torch_dtype":         prefixed(k, func(r *reading, k string, v *node) { r.dtypeKey(k, v.str()) }),
			"attn_implementation": prefixed(k, attention),
			"quantization_config": prefixed(k, quantizationConfig),
		})
	},
}

// readHFConfig reads a YAML config of TRL's scripts or of a transformers
// example script (HfArgumentParser reads the same names).
func readHFConfig(root *node) (Job, error) {
	f := Transformers
	if anyKey(root, "use_peft", "dataset_text_field", "packing", "max_seq_length", "loss_type", "num_generations", "use_liger_kernel", "padding_free", "completion_only_loss", "assistant_only_loss") {
		f = TRL
	}
	r := newReading(f)
	r.readMap(root, hfKeys)
	r.finishHF(f == TRL, true)
	return r.job()
}

// finishHF fills the HF Trainer's and TRL's defaults for what the
// arguments leave out and finishes a training job. trl is set for TRL's
// SFTConfig (bf16, gradient checkpointing and max_length 1024 by
// default, trl/trainer/sft_config.py at f2cd5771); cli for TRL's scripts,
// whose ModelConfig loads weights in float32 unless --dtype says
// otherwise (trl/trainer/model_config.py).
func (r *reading) finishHF(trl, cli bool) {
	if trl {
		if r.train.amp == "" && !r.said("bf16", "fp16") {
			r.train.amp, r.train.ampKey = "bf16", "bf16"
			r.note("bf16 not in the file: TRL's default bf16=True")
		}
		r.fill("seq", "1024", "TRL's default max_length")
		if cli && r.train.dtype == "" && r.train.bits == 0 {
			r.train.dtype, r.train.dtypeKey = "fp32", "dtype"
			r.note("dtype not in the file: TRL's ModelConfig loads the weights in float32")
		}
	}
	r.finishTraining("full")
	r.fill("bs", "8", "the HF Trainer's default per_device_train_batch_size")
	if trl {
		r.fill("framework", "trl", "the format")
	} else {
		r.fill("framework", "hf", "the format")
	}
}

// said reports whether the file stated one of keys (read or not).
func (r *reading) said(keys ...string) bool {
	for _, it := range r.j.Read {
		for _, k := range keys {
			if it.Key == k || strings.HasSuffix(it.Key, "."+k) || strings.TrimLeft(it.Key, "-") == k {
				return true
			}
		}
	}
	return false
}

// acceleratorConfig reads TrainingArguments' accelerator_config (axolotl
// passes its own on): of what it holds only gradient_accumulation_kwargs'
// sync_each_batch changes memory, keeping FSDP's gradients sharded
// between syncs (docs/memory-model.md §6.2).
func acceleratorConfig(r *reading, k string, v *node) {
	if v.kind != mapNode {
		r.generic(k, v)
		return
	}
	r.readMap(v, table{
		"gradient_accumulation_kwargs": prefixed(k, func(r *reading, k string, v *node) {
			r.readMap(v, table{"sync_each_batch": prefixed(k, onOff("sync-each-batch", "on", "off")), "num_steps": prefixed(k, ign), "adjust_scheduler": prefixed(k, ign), "sync_with_dataloader": prefixed(k, ign)})
		}),
		"split_batches": prefixed(k, ign), "dispatch_batches": prefixed(k, ign), "even_batches": prefixed(k, ign),
		"use_seedable_sampler": prefixed(k, ign), "non_blocking": prefixed(k, ign), "use_configured_state": prefixed(k, ign),
	})
}

// quantizationConfig reads a quantization_config mapping as a
// BitsAndBytesConfig's keywords (a serialised one's _load_in_4bit and
// quant_method included).
func quantizationConfig(r *reading, k string, v *node) {
	if v.kind != mapNode {
		r.generic(k, v)
		return
	}
	t := table{"_load_in_4bit": ign, "_load_in_8bit": ign, "quant_method": ign}
	for name, f := range bnbKeys {
		t[name] = prefixed(k, f)
	}
	r.readMap(v, t)
}
