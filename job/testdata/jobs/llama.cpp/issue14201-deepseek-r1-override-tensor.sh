CUDA_VISIBLE_DEVICES="0," \
numactl --physcpubind="8,10,12,14, 24,26,28,30, 9,11,13,15, 25,27,29,31" --membind=1 /home/ai/LLAMA_CPP/8f47e25f56e9792093b7497c68e9f80bab82ed19/llama.cpp/build/bin/llama-server \
--model /mnt/AI/LLM/DeepSeek-R1-UD-Q2_K_XL/DeepSeek-R1-UD-Q2_K_XL-00001-of-00006.gguf \
--threads 16 \
--n-gpu-layers 99 \
--temp 0.6 --top_p 0.95 --min_p 0.01 \
--ctx-size 32768 \
--flash-attn \
--override-tensor ".ffn_.*_exps.=CPU"
