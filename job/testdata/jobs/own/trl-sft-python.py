import torch
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from trl import SFTConfig, SFTTrainer

model_id = "meta-llama/Llama-3.1-8B"
bnb_config = BitsAndBytesConfig(
    load_in_4bit=True,
    bnb_4bit_quant_type="nf4",
    bnb_4bit_compute_dtype=torch.bfloat16,
)
model = AutoModelForCausalLM.from_pretrained(model_id, quantization_config=bnb_config, attn_implementation="sdpa")
peft_config = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
args = SFTConfig(
    output_dir="llama-sft",
    per_device_train_batch_size=4,
    gradient_accumulation_steps=4,
    max_length=2048,
    learning_rate=2e-4,
    report_to="none",
    hub_token="hf_abcdefghijklmnopqrstuvwxyz0123456789",
)
trainer = SFTTrainer(model=model, args=args, train_dataset=load_dataset("trl-lib/Capybara", split="train"), peft_config=peft_config)
trainer.train()
