$ HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456 vllm serve Qwen/Qwen3-8B \
    --tensor-parallel-size 2 --max-model-len 32k \
    --gpu-memory-utilization 0.92 --kv-cache-dtype fp8 --enforce-eager --port 8000
