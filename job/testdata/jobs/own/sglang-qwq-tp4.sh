python3 -m sglang.launch_server --model-path Qwen/QwQ-32B --tp 4 --context-length 16384 --mem-fraction-static 0.85 --host 0.0.0.0 --port 30000
