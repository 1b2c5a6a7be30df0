~/llama.cpp$ ./build/bin/llama-server -m models/Qwen3-30B-A3B-Q4_K_M.gguf -c 32768 -ngl 99 -fa -ctk q8_0 -ctv q8_0 -np 4 --host 0.0.0.0
