package job

import (
	"strings"

	"github.com/vrambot/vrambot/query"
)

// readDeepSpeed reads a DeepSpeed config (docs.deepspeed.ai config-json;
// deepspeed/runtime/config.py, zero/config.py; docs/jobs.md §2.2). It
// names no model and no method: the query words give the model, and the
// method is full fine-tuning unless they say otherwise.
func readDeepSpeed(root *node) (Job, error) {
	r := newReading(DeepSpeed)
	r.readMap(root, deepspeedKeys)
	r.finishTraining("full")
	r.note("a DeepSpeed config names no model, and its method is the trainer's: full fine-tuning unless the query words say lora or qlora")
	return r.job()
}

var deepspeedKeys = table{
	"zero_optimization": func(r *reading, k string, v *node) {
		for i, key := range v.keys {
			val := v.vals[i]
			full := k + "." + key
			switch key {
			case "stage":
				if s := val.str(); s == "0" {
					r.item(full, s, "", "no sharding")
				} else {
					r.set(full, s, "zero")
				}
			case "offload_optimizer":
				if dev := strings.ToLower(val.get("device").str()); dev == "cpu" || dev == "nvme" {
					r.setAs(full+".device", dev, "offload", "optimizer")
				} else {
					r.item(full+".device", dev, "", "off")
				}
			case "offload_param":
				if dev := strings.ToLower(val.get("device").str()); dev == "cpu" || dev == "nvme" {
					r.j.Settings = dropKey(r.j.Settings, "offload") // parameters too
					r.setAs(full+".device", dev, "offload", "param")
				} else {
					r.item(full+".device", dev, "", "off")
				}
			case "cpu_offload":
				onOff("offload", "optimizer", "")(r, full, val)
			default:
				r.ignore(full)
			}
		}
	},
	"train_micro_batch_size_per_gpu": autoTo("bs"),
	"gradient_accumulation_steps":    autoTo("ga"),
	"train_batch_size":               ign,
	"bf16":                           enabled("bf16"),
	"bfloat16":                       enabled("bf16"),
	"fp16":                           enabled("fp16"),
	"optimizer": func(r *reading, k string, v *node) {
		if t := v.get("type"); t != nil {
			optim(r, k+".type", t)
		}
	},
	"activation_checkpointing": func(r *reading, k string, v *node) {
		if b, _ := truth(v.get("cpu_checkpointing").str()); b {
			r.unknown(k+".cpu_checkpointing", "checkpoints on the CPU when the model calls deepspeed.checkpointing: not modelled")
			return
		}
		r.ignore(k)
	},
	"gradient_clipping": ign, "steps_per_print": ign, "wall_clock_breakdown": ign, "scheduler": ign,
	"zero_allow_untested_optimizer": ign, "flops_profiler": ign, "tensorboard": ign, "comms_logger": ign,
	"zero_force_ds_cpu_optimizer": ign, "prescale_gradients": ign, "gradient_predivide_factor": ign,
	"communication_data_type": ign, "data_types": ign, "amp": ign, "compile": ign, "checkpoint": ign,
	"tensor_parallel": func(r *reading, k string, v *node) {
		if n := v.get("autotp_size"); n != nil {
			r.set(k+".autotp_size", n.str(), "tp")
		}
	},
}

// autoTo reads a value that may be "auto" (the HF integration fills it
// from the trainer's arguments, which the config does not hold).
func autoTo(gk string) rule {
	return func(r *reading, k string, v *node) {
		if strings.EqualFold(v.str(), "auto") {
			r.item(k, "auto", "", "the trainer's own value, not in this file")
			return
		}
		to(gk)(r, k, v)
	}
}

// enabled reads DeepSpeed's {"enabled": true|"auto"} precision blocks as
// AMP in dtype (ZeRO keeps fp32 masters).
func enabled(dtype string) rule {
	return func(r *reading, k string, v *node) {
		e := v.get("enabled")
		if e == nil {
			r.ignore(k)
			return
		}
		if strings.EqualFold(e.str(), "auto") {
			r.item(k+".enabled", "auto", "", "the trainer's bf16/fp16 flag, not in this file")
			return
		}
		r.ampKey(k+".enabled", e, dtype)
		r.train.fp32Masters = true
	}
}

// dropKey is kvs without key.
func dropKey(kvs []query.KeyValue, key string) []query.KeyValue {
	out := kvs[:0:0]
	for _, s := range kvs {
		if s.Key != key {
			out = append(out, s)
		}
	}
	return out
}

// readAccelerate reads an accelerate config (accelerate's
// commands/config/config_args.py and its cluster.py questions; docs/jobs.md
// §2.2).
func readAccelerate(root *node) (Job, error) {
	r := newReading(Accelerate)
	r.accelerate(root)
	r.finishTraining("full")
	r.note("an accelerate config names no model, and its method is the script's: full fine-tuning unless the query words say lora or qlora")
	return r.job()
}

func (r *reading) accelerate(root *node) {
	r.readMap(root, accelerateKeys)
	r.fsdpConfig(root.get("fsdp_config"), "fsdp_config")
	if ds := root.get("deepspeed_config"); ds != nil && ds.kind == mapNode {
		for i, k := range ds.keys {
			v := ds.vals[i]
			full := "deepspeed_config." + k
			switch k {
			case "zero_stage":
				if v.str() != "0" {
					r.set(full, v.str(), "zero")
				}
			case "offload_optimizer_device":
				if d := strings.ToLower(v.str()); d == "cpu" || d == "nvme" {
					r.setAs(full, v.str(), "offload", "optimizer")
				} else {
					r.item(full, v.str(), "", "off")
				}
			case "offload_param_device":
				if d := strings.ToLower(v.str()); d == "cpu" || d == "nvme" {
					r.j.Settings = dropKey(r.j.Settings, "offload")
					r.setAs(full, v.str(), "offload", "param")
				} else {
					r.item(full, v.str(), "", "off")
				}
			case "deepspeed_config_file":
				deepspeedPath(r, full, v)
			case "gradient_accumulation_steps":
				to("ga")(r, full, v)
			default:
				r.ignore(full)
			}
		}
	}
}

var accelerateKeys = table{
	"distributed_type": func(r *reading, k string, v *node) {
		switch strings.ToUpper(v.str()) {
		case "FSDP":
			r.j.Sharding = "fsdp"
			r.found = true
			r.item(k, v.str(), "fsdp", "")
		case "MULTI_GPU":
			r.j.Sharding = "ddp"
			r.found = true
			r.item(k, v.str(), "ddp", "")
		case "DEEPSPEED":
			r.item(k, v.str(), "", "ZeRO: deepspeed_config says the stage")
		default:
			r.item(k, v.str(), "", "")
		}
	},
	"num_processes": func(r *reading, k string, v *node) {
		if n := positive(v.str()); n > 1 {
			r.set(k, v.str(), "gpus")
		} else {
			r.item(k, v.str(), "", "one GPU")
		}
	},
	"mixed_precision": func(r *reading, k string, v *node) {
		switch d := strings.ToLower(v.str()); d {
		case "bf16", "fp16":
			r.ampKey(k, &node{value: "true"}, d)
			fixValue(r, k, d)
		case "fp8":
			r.unknown(k, "FP8 training: not modelled, estimated in 16 bits")
		default:
			r.item(k, v.str(), "", "off")
		}
	},
	"fsdp_config":         func(*reading, string, *node) {},
	"deepspeed_config":    func(*reading, string, *node) {},
	"compute_environment": ign, "debug": ign, "machine_rank": ign, "main_training_function": ign, "num_machines": ign,
	"rdzv_backend": ign, "same_network": ign, "tpu_env": ign, "tpu_use_cluster": ign, "tpu_use_sudo": ign, "use_cpu": ign,
	"downcast_bf16": ign, "gpu_ids": ign, "main_process_ip": ign, "main_process_port": ign, "enable_cpu_affinity": ign,
	"dynamo_config": unmodelled("torch.compile: not modelled (it keeps fewer activations)"),
	"parallelism_config": func(r *reading, k string, v *node) {
		for i, key := range v.keys {
			switch key {
			case "parallelism_config_tp_size":
				r.set(k+"."+key, v.vals[i].str(), "tp")
			case "parallelism_config_cp_size":
				unmodelled("context parallelism: not modelled")(r, k+"."+key, v.vals[i])
			default:
				r.ignore(k + "." + key)
			}
		}
	},
}
