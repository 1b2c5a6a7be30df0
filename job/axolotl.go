package job

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// readAxolotl reads an axolotl config (axolotl's pydantic schema,
// src/axolotl/utils/schemas/*.py at 067b021c; docs/jobs.md §2.1).
func readAxolotl(root *node) (Job, error) { return axolotl(root, true) }

// axolotl reads a config's keys; defaults fills axolotl's own for what
// they leave out (not for a command line's overrides of a config that is
// not given).
func axolotl(root *node, defaults bool) (Job, error) {
	r := newReading(Axolotl)
	r.root = root
	r.readMap(root, axolotlKeys)
	r.fsdpConfig(root.get("fsdp_config"), "fsdp_config")
	if root.get("dp_shard_size") != nil || root.get("dp_replicate_size") != nil {
		if n := max(1, positive(root.get("dp_shard_size").str())) * max(1, positive(root.get("dp_replicate_size").str())); n > 1 {
			r.setAs("dp_shard_size", fmt.Sprint(n), "gpus", fmt.Sprint(n))
		}
	}
	r.packing(root, "sample_packing", "pad_to_sequence_len")
	if root.get("adapter") == nil && root.get("unfrozen_parameters") != nil {
		r.train.setAdapter("freeze", "unfrozen_parameters")
	}
	// axolotl's defaults for what the config leaves out (schemas/config.py,
	// training.py): sequence_len 512, gradient_checkpointing false,
	// bf16 "auto" (bf16 where the card has it: the weights load in it).
	if defaults {
		r.fill("seq", "512", "axolotl's default sequence_len")
		r.fill("gc", "off", "axolotl's default gradient_checkpointing: false")
	}
	if defaults && r.train.dtype == "" && root.get("fp16") == nil && root.get("bf16") == nil {
		r.train.dtype, r.train.dtypeKey = "bf16", "bf16"
		r.note("bf16 not in the file: axolotl's default bf16: auto loads the weights in bf16 on a card that has it")
	}
	r.finishTraining("full")
	r.fill("framework", "axolotl", "the format")
	return r.job()
}

var axolotlKeys = table{
	"base_model": func(r *reading, k string, v *node) { r.model(k, v.str()) },
	"adapter": func(r *reading, k string, v *node) {
		switch a := strings.ToLower(v.str()); a {
		case "lora", "qlora":
			r.methodKey(k, v.str(), a)
		default:
			r.unknown(k, fmt.Sprintf("adapter %s: estimated as LoRA", shown(k, v.str())))
			r.train.setAdapter("lora", k)
		}
	},
	"peft_use_dora": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.methodKey(k, v.str(), "dora")
		} else {
			r.item(k, v.str(), "", "off")
		}
	},
	"load_in_4bit": func(r *reading, k string, v *node) { r.bitsKey(k, v, 4) },
	"load_in_8bit": func(r *reading, k string, v *node) { r.bitsKey(k, v, 8) },
	"gptq": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.item(k, v.str(), "", "")
			r.train.checkpoint = "gptq"
		}
	},
	"lora_r":                      to("rank"),
	"lora_target_modules":         targets,
	"lora_target_linear":          onOff("targets", "all", ""),
	"lora_target_parameters":      unmodelled("parameters adapted directly (MoE experts): the estimate adapts the linear layers only"),
	"sequence_len":                to("seq"),
	"micro_batch_size":            to("bs"),
	"gradient_accumulation_steps": to("ga"),
	"batch_size":                  ign,
	"eval_batch_size":             ign,
	"gradient_checkpointing":      gradientCheckpointing,
	"accelerator_config":          acceleratorConfig,
	"activation_offloading": func(r *reading, k string, v *node) {
		if b, ok := truth(v.str()); ok && !b {
			r.setAs(k, v.str(), "act-offload", "off")
			return
		}
		r.setAs(k, v.str(), "act-offload", "on")
	},
	"optimizer": optim,
	"bf16": func(r *reading, k string, v *node) {
		if b, ok := truth(v.str()); ok && b || strings.EqualFold(v.str(), "auto") {
			r.dtypeKey(k, "bf16")
			fixValue(r, k, v.str())
			return
		}
		r.item(k, v.str(), "", "off")
	},
	"fp16": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.dtypeKey(k, "fp16")
			fixValue(r, k, v.str())
			return
		}
		r.item(k, v.str(), "", "off")
	},
	"float32":            func(r *reading, k string, v *node) { r.dtypeKey(k, "fp32") },
	"tf32":               ign,
	"flash_attention":    attention,
	"sdp_attention":      attention,
	"xformers_attention": attention,
	"flex_attention":     attention,
	"sage_attention":     attention,
	"eager_attention": func(r *reading, k string, v *node) {
		if b, _ := truth(v.str()); b {
			r.setAs(k, v.str(), "attn", "eager")
		}
	},
	"attn_implementation":              attention,
	"chunked_cross_entropy":            onOff("loss", "chunked", ""),
	"cut_cross_entropy":                onOff("loss", "chunked", ""),
	"liger_fused_linear_cross_entropy": onOff("loss", "chunked", ""),
	"liger_rms_norm":                   unmodelled("Liger's RMSNorm kernel: not modelled"),
	"liger_glu_activation":             unmodelled("Liger's SwiGLU kernel: not modelled"),
	"liger_layer_norm":                 unmodelled("Liger's LayerNorm kernel: not modelled"),
	"liger_rope":                       ign,
	"plugins":                          plugins,
	"deepspeed":                        deepspeedPath,
	"fsdp":                             fsdpList,
	"fsdp_config":                      func(*reading, string, *node) {}, // read after the keys (readAxolotl)
	"fsdp_version": func(r *reading, k string, v *node) {
		r.item(k, v.str(), "", "FSDP"+v.str())
	},
	"dp_shard_size":                    func(*reading, string, *node) {},
	"dp_replicate_size":                func(*reading, string, *node) {},
	"tensor_parallel_size":             to("tp"),
	"context_parallel_size":            unmodelled("context parallelism: not modelled (each GPU would hold its share of the sequence's activations)"),
	"sequence_parallel_degree":         unmodelled("sequence parallelism: not modelled (each GPU would hold its share of the sequence's activations)"),
	"quantize_moe_experts":             confirm("MoE experts loaded in the low-bit format too, as the estimate quantises every linear layer"),
	"torch_compile":                    unmodelled("torch.compile: not modelled (it keeps fewer activations)"),
	"unfrozen_parameters":              confirm("only these parameters train: read as freeze"),
	"rl":                               unmodelled("preference or RL training: the reference model and generation are not modelled, estimated as SFT"),
	"sample_packing":                   func(*reading, string, *node) {}, // read by packing
	"pad_to_sequence_len":              func(*reading, string, *node) {},
	"lora_mlp_kernel":                  unmodelled("axolotl's fused LoRA kernels: not modelled"),
	"lora_qkv_kernel":                  unmodelled("axolotl's fused LoRA kernels: not modelled"),
	"lora_o_kernel":                    unmodelled("axolotl's fused LoRA kernels: not modelled"),
	"gradient_checkpointing_kwargs":    ign,
	"flash_attn_cross_entropy":         ign,
	"flash_attn_rms_norm":              ign,
	"flash_attn_fuse_qkv":              ign,
	"flash_attn_fuse_mlp":              ign,
	"low_cpu_mem_usage":                ign,
	"device_map":                       ign,
	"max_memory":                       unmodelled("a memory cap per device: not modelled"),
	"gpu_memory_limit":                 unmodelled("a memory cap per device: not modelled"),
	"experts_implementation":           ign,
	"use_kernels":                      ign,
	"embeddings_skip_upcast":           ign,
	"chunked_cross_entropy_num_chunks": ign,
	"excess_length_strategy":           ign,
	"resize_token_embeddings_to_32x":   ign,
	"shrink_embeddings":                ign,
	"tokens":                           ign,
	"added_tokens_overrides":           ign,
	"llm_int8_has_fp16_weight":         ign,
	"bnb_config_kwargs":                ign,
	"fp8":                              unmodelled("FP8 training: not modelled, estimated in 16 bits"),
	"eot_tokens":                       ign,
	"experimental_skip_move_to_device": ign,
	"flex_attn_compile_kwargs":         ign,
	"fused_attn_kernel":                ign,
	"gemma4_hybrid_attn_impl":          ign,
	"llama4_linearized_experts":        ign,
	"use_scattermoe":                   unmodelled("ScatterMoE's expert kernels: not modelled"),
	"liger_rms_norm_gated":             unmodelled("Liger's RMSNorm kernel: not modelled"),
	"model_quantization_config":        modelQuantization,
	"model_quantization_config_kwargs": func(*reading, string, *node) {}, // read with model_quantization_config
}

// modelQuantization reads axolotl's model_quantization_config (a
// transformers quantization config class by name) and its kwargs: an
// MXFP4 checkpoint loaded with dequantize: true is trained in bf16.
func modelQuantization(r *reading, key string, v *node) {
	name := strings.ToLower(v.str())
	r.item(key, v.str(), "", "")
	root := r.root
	dequant, _ := truth(root.path("model_quantization_config_kwargs", "dequantize").str())
	switch {
	case strings.Contains(name, "mxfp4") && dequant:
		r.j.Read[len(r.j.Read)-1].Note = "the MXFP4 checkpoint dequantized on load: bf16 weights"
	case strings.Contains(name, "mxfp4"):
		r.train.checkpoint = "mxfp4"
	default:
		r.unknown(key, "a quantization config the grammar has no word for: estimated as the checkpoint says")
	}
}

// plugins reads axolotl's plugin list: Cut Cross Entropy never holds the
// whole logits; Liger's effect is in its own flags.
func plugins(r *reading, key string, v *node) {
	for _, p := range v.strs() {
		l := strings.ToLower(p)
		switch {
		case strings.Contains(l, "cut_cross_entropy"):
			r.setAs(key, p, "loss", "chunked")
		case strings.Contains(l, "liger"):
			r.item(key, p, "", "Liger: its liger_* flags say which kernels")
		default:
			r.unknown(key, "plugin "+shown(key, p)+": not modelled")
		}
	}
}

// packing reads sample packing: packed (or padded) sequences are as long
// as seq, as the estimate assumes; otherwise each batch is as long as its
// longest sample and the estimate is an upper bound.
func (r *reading) packing(root *node, packKey, padKey string) {
	packed, _ := truth(root.get(packKey).str())
	padded, _ := truth(root.get(padKey).str())
	if root.get(packKey) != nil {
		r.item(packKey, root.get(packKey).text(), "", map[bool]string{true: "sequences packed to seq: full length, as the estimate assumes", false: "off"}[packed])
	}
	if root.get(padKey) != nil {
		r.item(padKey, root.get(padKey).text(), "", map[bool]string{true: "padded to seq: full length, as the estimate assumes", false: "off"}[padded])
	}
	if !packed && !padded {
		r.note("no packing or padding to seq: each batch is as long as its longest sample, so the estimate at seq is an upper bound")
	}
}

// dsBundled are the DeepSpeed configs a tool ships, by the name a config
// refers to them with: axolotl's deepspeed_configs/ (at 067b021c) and
// LLaMA-Factory's examples/deepspeed/ (at ff6d4d12), read from their
// files (docs/jobs.md §2.2).
var dsBundled = map[string]struct{ stage, offload string }{
	"zero1.json": {"1", ""}, "zero1_torch_compile.json": {"1", ""},
	"zero2.json": {"2", "optimizer"}, "zero2_torch_compile.json": {"2", "optimizer"},
	"zero3.json": {"3", ""}, "zero3_bf16.json": {"3", ""},
	"zero3_bf16_cpuoffload_all.json": {"3", "param"}, "zero3_bf16_cpuoffload_params.json": {"3", "param"},
	"ds_z0_config.json": {"0", ""}, "ds_z2_config.json": {"2", ""}, "ds_z2_offload_config.json": {"2", "optimizer"},
	"ds_z3_config.json": {"3", ""}, "ds_z3_offload_config.json": {"3", "param"}, "ds_z3_fp8_config.json": {"3", ""},
	"ds_z2_autotp_config.json": {"2", ""},
}

// dsDirs are the folders the bundled configs live in.
var dsDirs = regexp.MustCompile(`(^|/)(deepspeed_configs|examples/deepspeed)/[^/]+$`)

// deepspeedPath reads a path to a DeepSpeed config: its content is not in
// the file, unless it is one a tool ships.
func deepspeedPath(r *reading, key string, v *node) {
	p := v.str()
	if v.kind == mapNode { // an inline config (TrainingArguments takes a dict)
		r.item(key, "{…}", "", "")
		r.readMap(v, deepspeedKeys)
		return
	}
	if b, ok := dsBundled[path.Base(p)]; ok && dsDirs.MatchString(p) {
		as := "zero=" + b.stage
		if b.stage != "0" {
			r.setAs(key, p, "zero", b.stage)
		}
		if b.offload != "" {
			r.setAs(key, p, "offload", b.offload)
			as += " offload=" + b.offload
		}
		r.note("%s: %s, the tool's bundled %s (%s)", key, as, path.Base(p), p)
		return
	}
	r.unknown(key, fmt.Sprintf("the DeepSpeed config %s is not in the file: give zero=1, 2 or 3 (and offload=) in the query words, or read it with --job", shown(key, p)))
}

// fsdpList reads the HF Trainer's fsdp option (a list or a string of
// full_shard, shard_grad_op, hybrid_shard, offload, auto_wrap).
func fsdpList(r *reading, key string, v *node) {
	words := v.strs()
	if len(words) == 1 {
		words = strings.Fields(words[0])
	}
	if b, ok := truth(v.str()); ok {
		if !b {
			r.item(key, v.text(), "", "off")
			return
		}
		words = []string{"full_shard"}
	}
	if len(words) == 0 {
		return
	}
	r.item(key, v.text(), "fsdp", "")
	r.found = true
	r.j.Sharding = "fsdp"
	for _, w := range words {
		switch strings.ToLower(w) {
		case "shard_grad_op", "hybrid_shard_zero2":
			r.setAs(key, w, "zero", "2")
		case "offload":
			r.setAs(key, w, "offload", "param")
		case "no_shard":
			r.j.Sharding = "ddp"
		}
	}
}

// fsdpConfig reads an FSDP config mapping (axolotl's fsdp_config, the
// HF Trainer's and accelerate's), whose keys may carry an fsdp_ prefix.
func (r *reading) fsdpConfig(n *node, name string) {
	if n == nil || n.kind != mapNode {
		return
	}
	if r.j.Sharding == "" {
		r.j.Sharding = "fsdp"
		r.found = true
		r.item(name, "{…}", "fsdp", "")
	}
	for i, k := range n.keys {
		v := n.vals[i]
		full := name + "." + k
		switch strings.TrimPrefix(k, "fsdp_") {
		case "offload_params":
			if b, _ := truth(v.str()); b {
				r.setAs(full, v.str(), "offload", "param")
			} else {
				r.item(full, v.str(), "", "off")
			}
		case "reshard_after_forward":
			if b, ok := truth(v.str()); ok && !b {
				r.setAs(full, v.str(), "zero", "2")
			} else {
				r.item(full, v.str(), "", "FULL_SHARD: the estimate's FSDP")
			}
		case "sharding_strategy":
			switch s := strings.ToUpper(v.str()); {
			case strings.Contains(s, "SHARD_GRAD_OP") || s == "2":
				r.setAs(full, v.str(), "zero", "2")
			case strings.Contains(s, "NO_SHARD") || s == "3":
				r.j.Sharding = "ddp"
				r.item(full, v.str(), "ddp", "")
			default:
				r.item(full, v.str(), "", "FULL_SHARD: the estimate's FSDP")
			}
		case "activation_checkpointing":
			onOff("gc", "on", "")(r, full, v)
		case "version":
			r.item(full, v.str(), "", "FSDP"+v.str())
		default:
			r.ignore(full)
		}
	}
}

// job is the reading's job, or an error when nothing in it names a job.
func (r *reading) job() (Job, error) {
	if !r.found {
		return Job{}, notAJob("nothing in it names a model or a setting")
	}
	return r.j, nil
}
