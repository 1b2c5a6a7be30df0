tune run --nproc_per_node 2 lora_finetune_distributed --config llama3/8B_lora
