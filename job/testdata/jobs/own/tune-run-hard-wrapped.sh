# Full fine-tune of Llama 3.1 8B on 2 GPUs, as pasted from an 80-column terminal
tune download meta-llama/Meta-Llama-3.1-8B-Instruct --output-dir /tmp/Meta-Llama-3.1-8B-Instruct --ignore-patterns "original/consolidated.00.pth"
tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full
batch_size=4 enable_activation_checkpointing=True compile=True gradient_accumula
tion_steps=2 tokenizer.max_seq_len=4096
