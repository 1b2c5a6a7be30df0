package plan

import (
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

// code is one snippet and its fence language.
type code struct {
	lang string
	text string
}

// snippets holds a fix's snippet per framework. PyTorch is the fallback.
type snippets map[fix.Framework]code

func py(format string, args ...any) code {
	return code{lang: "python", text: fmt.Sprintf(format, args...)}
}

func sh(format string, args ...any) code {
	return code{lang: "bash", text: fmt.Sprintf(format, args...)}
}

func jsonCode(text string) code { return code{lang: "json", text: text} }

// withSnippet sets f's snippet in framework fw, falling back to plain
// PyTorch (then HF) with a comment saying so when fw has no idiom for it.
func withSnippet(f fix.Fix, fw fix.Framework, s snippets) fix.Fix {
	c, ok := s[fw]
	if !ok {
		c, ok = s[fix.FrameworkPyTorch]
		if !ok {
			c = s[fix.FrameworkHF]
		}
		if fw != fix.FrameworkUnknown && fw != fix.FrameworkPyTorch && c.lang != "json" {
			c.text = fmt.Sprintf("# no %s idiom for this; the PyTorch / transformers form:\n%s", fw, c.text)
		}
	}
	f.Snippet, f.SnippetLang = c.text, c.lang
	return f
}

// modelID is the Hugging Face id for snippets, or a placeholder.
func modelID(w memory.Workload) string {
	if w.Model.HFID != "" {
		return w.Model.HFID
	}
	return "your-org/your-model"
}

func torchDtype(g catalog.GPU) string {
	if g.BF16 {
		return "torch.bfloat16"
	}
	return "torch.float16"
}

func autocastSnippets(bf16 bool) snippets {
	if bf16 {
		return snippets{
			fix.FrameworkPyTorch: py(`with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(**batch).loss
loss.backward()
optimizer.step()`),
			fix.FrameworkHF:        py(`args = TrainingArguments(..., bf16=True)`),
			fix.FrameworkLightning: py(`trainer = L.Trainer(precision="bf16-mixed")`),
			fix.FrameworkDeepSpeed: jsonCode(`{"bf16": {"enabled": true}}`),
			fix.FrameworkKeras:     py(`keras.mixed_precision.set_global_policy("mixed_bfloat16")`),
			fix.FrameworkJAX: py(`# keep fp32 master params, compute in bf16
compute_params = jax.tree_util.tree_map(lambda p: p.astype(jnp.bfloat16), params)
logits = model.apply(compute_params, batch)`),
		}
	}
	return snippets{
		fix.FrameworkPyTorch: py(`scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(**batch).loss
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()`),
		fix.FrameworkHF:        py(`args = TrainingArguments(..., fp16=True)  # GradScaler is built in`),
		fix.FrameworkLightning: py(`trainer = L.Trainer(precision="16-mixed")`),
		fix.FrameworkDeepSpeed: jsonCode(`{"fp16": {"enabled": true, "loss_scale": 0}}`),
		fix.FrameworkKeras:     py(`keras.mixed_precision.set_global_policy("mixed_float16")  # compile() adds loss scaling`),
	}
}

func attentionSnippets(w memory.Workload, g catalog.GPU) snippets {
	impl := "flash_attention_2"
	if !g.BF16 { // pre-Ampere (V100, T4): no FlashAttention-2
		impl = "sdpa"
	}
	return snippets{
		fix.FrameworkPyTorch: py(`# in the attention block, instead of softmax(q @ k.transpose(-2, -1)) @ v:
out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`),
		fix.FrameworkHF: py(`model = AutoModelForCausalLM.from_pretrained(
    "%s", attn_implementation="%s", torch_dtype=%s)`, modelID(w), impl, torchDtype(g)),
		fix.FrameworkKeras: py(`keras.config.enable_flash_attention()`),
		fix.FrameworkJAX:   py(`out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn")`),
	}
}

func gradAccumSnippets(m, k int) snippets {
	return snippets{
		fix.FrameworkPyTorch: py(`loader = DataLoader(dataset, batch_size=%d, shuffle=True)
for step, batch in enumerate(loader):
    loss = model(**batch).loss / %d
    loss.backward()
    if (step + 1) %% %d == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)`, m, k, k),
		fix.FrameworkHF:        py(`args = TrainingArguments(..., per_device_train_batch_size=%d, gradient_accumulation_steps=%d)`, m, k),
		fix.FrameworkLightning: py(`trainer = L.Trainer(accumulate_grad_batches=%d)  # with DataLoader(batch_size=%d)`, k, m),
		fix.FrameworkDeepSpeed: jsonCode(fmt.Sprintf(`{"train_micro_batch_size_per_gpu": %d, "gradient_accumulation_steps": %d}`, m, k)),
		fix.FrameworkKeras: py(`optimizer = keras.optimizers.AdamW(learning_rate=1e-5, gradient_accumulation_steps=%d)
model.fit(x, y, batch_size=%d)`, k, m),
		fix.FrameworkJAX: py(`optimizer = optax.MultiSteps(optax.adamw(1e-5), every_k_schedule=%d)  # feed micro-batches of %d`, k, m),
	}
}

var checkpointingSnippets = snippets{
	fix.FrameworkPyTorch: py(`model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
# a plain nn.Module: x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) per block`),
	fix.FrameworkHF: py(`args = TrainingArguments(..., gradient_checkpointing=True,
                         gradient_checkpointing_kwargs={"use_reentrant": False})`),
	fix.FrameworkLightning: py(`def configure_model(self):  # in your LightningModule
    self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})`),
	fix.FrameworkKeras: py(`with keras.RematScope(mode="full"):
    model = build_model()`),
	fix.FrameworkJAX: py(`block_apply = jax.checkpoint(block_apply)  # Flax: nn.remat(Block)`),
}

func optim8bitSnippets(paged bool) snippets {
	class, hf := "AdamW8bit", "adamw_bnb_8bit"
	if paged {
		class, hf = "PagedAdamW8bit", "paged_adamw_8bit"
	}
	return snippets{
		fix.FrameworkPyTorch: py(`import bitsandbytes as bnb
optimizer = bnb.optim.%s(model.parameters(), lr=2e-5)`, class),
		fix.FrameworkHF: py(`args = TrainingArguments(..., optim="%s")`, hf),
		fix.FrameworkLightning: py(`def configure_optimizers(self):
    return bnb.optim.%s(self.parameters(), lr=2e-5)`, class),
	}
}

var chunkedLossSnippets = snippets{
	fix.FrameworkPyTorch: py(`from liger_kernel.transformers import AutoLigerKernelForCausalLM
model = AutoLigerKernelForCausalLM.from_pretrained(model_id)  # fused linear + cross-entropy`),
	fix.FrameworkHF: py(`args = TrainingArguments(..., use_liger_kernel=True)`),
}

func loraSnippets(w memory.Workload, g catalog.GPU) snippets {
	return snippets{
		fix.FrameworkPyTorch: py(`from peft import LoraConfig, get_peft_model
model = AutoModelForCausalLM.from_pretrained("%s", torch_dtype=%s)
model = get_peft_model(model, LoraConfig(r=%d, lora_alpha=%d, lora_dropout=0.05,
                                         target_modules="all-linear", task_type="CAUSAL_LM"))
model.print_trainable_parameters()`, modelID(w), torchDtype(g), loraRank, 2*loraRank),
		fix.FrameworkHF: py(`from peft import LoraConfig
trainer = SFTTrainer(model="%s", args=args, train_dataset=dataset,
                     peft_config=LoraConfig(r=%d, lora_alpha=%d, target_modules="all-linear",
                                            task_type="CAUSAL_LM"))`, modelID(w), loraRank, 2*loraRank),
		fix.FrameworkKeras: py(`model.backbone.enable_lora(rank=%d)  # KerasHub models`, loraRank),
	}
}

func qloraSnippets(w memory.Workload, g catalog.GPU) snippets {
	load := fmt.Sprintf(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                         bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=%s)
model = AutoModelForCausalLM.from_pretrained("%s", quantization_config=bnb)
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=%s)
model = get_peft_model(model, LoraConfig(r=%d, lora_alpha=%d, target_modules="all-linear",
                                         task_type="CAUSAL_LM"))`,
		torchDtype(g), modelID(w), pyBool(w.GradCheckpointing), max(w.LoRARank, 1), 2*max(w.LoRARank, 1))
	return snippets{fix.FrameworkPyTorch: py("%s", load)}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// zeroSnippets writes a ZeRO stage with optional offload in each framework.
func zeroSnippets(stage int, off memory.Offload, gpus int) snippets {
	var ds strings.Builder
	fmt.Fprintf(&ds, "{\n  \"zero_optimization\": {\n    \"stage\": %d", stage)
	if off == memory.OffloadOptimizer || off == memory.OffloadParam {
		ds.WriteString(",\n    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}")
	}
	if off == memory.OffloadParam {
		ds.WriteString(",\n    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}")
	}
	ds.WriteString("\n  }\n}")

	// Launch lines: one node up to gpusPerNode, whole nodes beyond.
	launch := fmt.Sprintf("deepspeed --num_gpus %d train.py --deepspeed ds_config.json", gpus)
	torchrun := fmt.Sprintf("torchrun --nproc-per-node %d train.py", gpus)
	lightningDevices := fmt.Sprintf("devices=%d", gpus)
	if nodes := gpus / gpusPerNode; gpus > gpusPerNode && gpus%gpusPerNode == 0 {
		launch = fmt.Sprintf("deepspeed --hostfile hostfile --num_nodes %d --num_gpus %d train.py --deepspeed ds_config.json", nodes, gpusPerNode)
		torchrun = fmt.Sprintf("torchrun --nnodes %d --nproc-per-node %d --rdzv-endpoint $HEAD:29500 train.py", nodes, gpusPerNode)
		lightningDevices = fmt.Sprintf("devices=%d, num_nodes=%d", gpusPerNode, nodes)
	}
	lightning := fmt.Sprintf("deepspeed_stage_%d", stage)
	if off != memory.OffloadNone {
		lightning += "_offload"
	}
	fsdp := "fully_shard(block)  # each transformer block, then\nfully_shard(model)"
	if stage == 2 {
		fsdp = "fully_shard(block, reshard_after_forward=False)  # each block: ZeRO-2-like, then\nfully_shard(model, reshard_after_forward=False)"
	}
	fsdpImport := "from torch.distributed.fsdp import fully_shard"
	if off != memory.OffloadNone {
		fsdp = "fully_shard(block, offload_policy=CPUOffloadPolicy())  # each block, then\nfully_shard(model, offload_policy=CPUOffloadPolicy())"
		if off == memory.OffloadOptimizer {
			fsdp += "\n# FSDP offloads parameters and gradients too; DeepSpeed can offload the optimizer alone"
		}
		fsdpImport += ", CPUOffloadPolicy"
	}
	return snippets{
		fix.FrameworkDeepSpeed: jsonCode(ds.String()),
		fix.FrameworkHF: py(`# ds_config.json:
# %s
args = TrainingArguments(..., deepspeed="ds_config.json")
# launch: %s`, strings.ReplaceAll(ds.String(), "\n", "\n# "), launch),
		fix.FrameworkLightning: py(`trainer = L.Trainer(accelerator="gpu", %s, strategy="%s")`, lightningDevices, lightning),
		fix.FrameworkPyTorch: py(`%s  # PyTorch >= 2.6 (FSDP2)
%s
# launch: %s`, fsdpImport, fsdp, torchrun),
		fix.FrameworkJAX: py(`mesh = jax.make_mesh((%d,), ("fsdp",))
# FSDP / ZeRO-3 style: shard each weight matrix's first axis over the GPUs
def shard(p):
    split = p.ndim > 1 and p.shape[0] %% %d == 0
    return jax.device_put(p, NamedSharding(mesh, P("fsdp") if split else P()))
params = jax.tree_util.tree_map(shard, params)`, gpus, gpus),
	}
}

func halfPrecisionSnippets(w memory.Workload, g catalog.GPU) snippets {
	vdtype := "bfloat16"
	if !g.BF16 {
		vdtype = "float16"
	}
	return snippets{
		fix.FrameworkPyTorch: py(`model = AutoModelForCausalLM.from_pretrained("%s", torch_dtype=%s)`, modelID(w), torchDtype(g)),
		fix.FrameworkVLLM:    sh(`vllm serve %s --dtype %s`, modelID(w), vdtype),
	}
}

func fp8KVSnippets(w memory.Workload) snippets {
	return snippets{
		fix.FrameworkVLLM: sh(`vllm serve %s --kv-cache-dtype fp8`, modelID(w)),
		fix.FrameworkPyTorch: sh(`# transformers has no fp8 KV cache; serve with vLLM:
vllm serve %s --kv-cache-dtype fp8`, modelID(w)),
	}
}

func maxModelLenSnippets(w memory.Workload, n int) snippets {
	return snippets{
		fix.FrameworkVLLM: sh(`vllm serve %s --max-model-len %d`, modelID(w), n),
		fix.FrameworkPyTorch: py(`inputs = tokenizer(prompts, truncation=True, max_length=%d, return_tensors="pt")
# and keep prompt + max_new_tokens <= %d`, n, n),
	}
}

func smallerBatchSnippets(w memory.Workload, n int) snippets {
	return snippets{
		fix.FrameworkVLLM: sh(`vllm serve %s --max-num-seqs %d`, modelID(w), n),
		fix.FrameworkPyTorch: py(`for i in range(0, len(prompts), %d):
    out = model.generate(**tokenizer(prompts[i:i + %d], return_tensors="pt", padding=True).to("cuda"))`, n, n),
	}
}

func int8Snippets(w memory.Workload, g catalog.GPU) snippets {
	vllm := sh(`vllm serve %s-W8A8  # an INT8 W8A8 checkpoint (e.g. made with llm-compressor)`, modelID(w))
	if g.FP8 {
		vllm = sh(`vllm serve %s --quantization fp8  # 8-bit weights, quantised at load`, modelID(w))
	}
	return snippets{
		fix.FrameworkPyTorch: py(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
model = AutoModelForCausalLM.from_pretrained(
    "%s", quantization_config=BitsAndBytesConfig(load_in_8bit=True))`, modelID(w)),
		fix.FrameworkVLLM: vllm,
	}
}

func nf4Snippets(w memory.Workload, g catalog.GPU) snippets {
	return snippets{
		fix.FrameworkPyTorch: py(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                         bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=%s)
model = AutoModelForCausalLM.from_pretrained("%s", quantization_config=bnb)`, torchDtype(g), modelID(w)),
		fix.FrameworkVLLM: sh(`vllm serve %s --quantization bitsandbytes  # or an AWQ/GPTQ checkpoint`, modelID(w)),
	}
}

func tensorParallelSnippets(w memory.Workload) snippets {
	vllm := sh(`vllm serve %s --tensor-parallel-size %d`, modelID(w), w.TP)
	if w.PP > 1 {
		vllm = sh(`vllm serve %s --tensor-parallel-size %d --pipeline-parallel-size %d`, modelID(w), w.TP, w.PP)
	}
	torch := py(`# launch: torchrun --nproc-per-node %d infer.py
model = AutoModelForCausalLM.from_pretrained("%s", tp_plan="auto")`, w.TP, modelID(w))
	if w.PP > 1 { // transformers has no pipeline-parallel serving across nodes
		torch = sh("# across nodes, serve with vLLM:\n%s", vllm.text)
	}
	return snippets{fix.FrameworkVLLM: vllm, fix.FrameworkPyTorch: torch}
}
