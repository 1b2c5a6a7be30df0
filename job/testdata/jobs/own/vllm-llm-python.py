from vllm import LLM, SamplingParams

llm = LLM(model="Qwen/Qwen2.5-7B-Instruct", tensor_parallel_size=2, max_model_len=16384,
          gpu_memory_utilization=0.85, kv_cache_dtype="fp8", enforce_eager=True)
outputs = llm.generate(["Hello"], SamplingParams(temperature=0.8, max_tokens=64))
