# %% [cell 16]
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

# Select a Nemotron 3 checkpoint below
model_id = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
# model_id = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-Base-BF16"

output_dir = "nemotron-3-sft"

model = AutoModelForCausalLM.from_pretrained(
    model_id,
    attn_implementation="eager",
    dtype=torch.bfloat16,
)
tokenizer = AutoTokenizer.from_pretrained(model_id)

# %% [cell 18]
from peft import LoraConfig

peft_config = LoraConfig(
    r=8,
    lora_alpha=16,
    target_modules=[
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    ],
)

# %% [cell 20]
from trl import SFTConfig

training_args = SFTConfig(
    # Training schedule / optimization
    per_device_train_batch_size=1,                          # Batch size per GPU
    gradient_accumulation_steps=4,                          # Effective batch size = per_device_train_batch_size * gradient_accumulation_steps
    num_train_epochs=1,                                     # Number of full dataset passes
    learning_rate=2e-4,                                     # Learning rate for the optimizer
    optim="paged_adamw_8bit",                               # Memory-efficient 8-bit optimizer

    # Logging / reporting
    logging_steps=10,                                       # Log training metrics every N steps
    report_to="trackio",                                    # Experiment tracking tool
    trackio_space_id=output_dir,                            # HF Space where the experiment tracking will be saved
    output_dir=output_dir,                                  # Where to save model checkpoints and logs

    max_length=128,                                         # Kept short due to VRAM constraints; increase for better results
    gradient_checkpointing=False,                           # NemotronH does not support gradient checkpointing

    # Hub integration
    push_to_hub=True,                                       # Push the trained model to the Hugging Face Hub
)

# %% [cell 22]
from trl import SFTTrainer

trainer = SFTTrainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    peft_config=peft_config,
)

# %% [cell 24]
gpu_stats = torch.cuda.get_device_properties(0)
start_gpu_memory = round(torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024, 3)
max_memory = round(gpu_stats.total_memory / 1024 / 1024 / 1024, 3)

print(f"GPU = {gpu_stats.name}. Max memory = {max_memory} GB.")
print(f"{start_gpu_memory} GB of memory reserved.")

# [output of cell 24]
# GPU = NVIDIA A100-SXM4-80GB. Max memory = 79.251 GB.
# 58.939 GB of memory reserved.

# %% [cell 26]
trainer_stats = trainer.train()

# [output of cell 26]
# The tokenizer has new PAD/BOS/EOS tokens that differ from the model config and generation config. The model config and generation config were aligned accordingly, being updated with the tokenizer's values. Updated tokens: {'eos_token_id': 11, 'pad_token_id': None}.
# * Trackio project initialized: huggingface
# * Trackio metrics will be synced to Hugging Face Dataset: sergiopaniego/nemotron-3-sft-dataset
# * Creating new space: https://huggingface.co/spaces/sergiopaniego/nemotron-3-sft
# * View dashboard by going to: https://sergiopaniego-nemotron-3-sft.hf.space/
# <IPython.core.display.HTML object>* NVIDIA GPU detected, enabling automatic GPU metrics logging
# * Created new run: sergiopaniego-1773149018
# /usr/local/lib/python3.12/dist-packages/transformers/models/nemotron_h/modeling_nemotron_h.py:1215: FutureWarning: `input_embeds` is deprecated and will be removed in version 5.6.0 for `create_causal_mask`. Use `inputs_embeds` instead.
#   causal_mask = create_causal_mask(
# <IPython.core.display.HTML object>* Run finished. Uploading logs to Trackio Space (please wait...)

# %% [cell 28]
used_memory = round(torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024, 3)
used_memory_for_lora = round(used_memory - start_gpu_memory, 3)
used_percentage = round(used_memory / max_memory * 100, 3)
lora_percentage = round(used_memory_for_lora / max_memory * 100, 3)

print(f"{trainer_stats.metrics['train_runtime']} seconds used for training.")
print(f"{round(trainer_stats.metrics['train_runtime']/60, 2)} minutes used for training.")
print(f"Peak reserved memory = {used_memory} GB.")
print(f"Peak reserved memory for training = {used_memory_for_lora} GB.")
print(f"Peak reserved memory % of max memory = {used_percentage} %.")
print(f"Peak reserved memory for training % of max memory = {lora_percentage} %.")

# [output of cell 28]
# 542.949 seconds used for training.
# 9.05 minutes used for training.
# Peak reserved memory = 61.922 GB.
# Peak reserved memory for training = 2.983 GB.
# Peak reserved memory % of max memory = 78.134 %.
# Peak reserved memory for training % of max memory = 3.764 %.
