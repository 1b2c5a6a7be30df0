tune download meta-llama/Meta-Llama-3.1-8B-Instruct --output-dir /tmp/Meta-Llama-3.1-8B-Instruct --hf-token $HF_TOKEN
tune run lora_finetune_single_device --config llama3_1/8B_qlora_single_device batch_size=4 tokenizer.max_seq_len=4096 enable_activation_checkpointing=True
