trl sft --model_name_or_path Qwen/Qwen2.5-0.5B --dataset_name trl-lib/Capybara --per_device_train_batch_size 4 --use_peft --lora_r 32 --load_in_4bit --output_dir Qwen2.5-0.5B-SFT
