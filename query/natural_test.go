package query

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/models"
)

// phrasings are questions and queries as people type them in Slack, with
// the model, method and GPU they mean. gpu is a catalog key, or
// "budget:24gb" for a memory budget; gpus the GPU count.
var phrasings = []struct {
	text   string
	model  string
	method string
	gpu    string
	gpus   int
}{
	{"can I finetune llama 3 8b on a 4090?", "llama-3-8b", "lora", "RTX4090", 1},
	{"Can I fine-tune Llama 3.1 8B on an RTX 4090?", "llama-3.1-8b", "lora", "RTX4090", 1},
	{"is a 3090 enough to fine tune mistral 7b", "mistral-7b", "lora", "RTX3090", 1},
	{"will qlora of llama 2 13b fit on a 24gb card", "llama-2-13b", "qlora", "budget:24gb", 1},
	{"how much vram do I need to full finetune llama-2-7b", "llama-2-7b", "full", "A100-80GB", 1},
	{"full fine-tuning of qwen2.5 7b on 8x h100", "qwen2.5-7b", "full", "H100-SXM", 8},
	{"lora on 4090 for llama 3 8b", "llama-3-8b", "lora", "RTX4090", 1},
	{"qlora llama 3 70b on two 3090s", "llama-3-70b", "qlora", "RTX3090", 2},
	{"can I train gemma 2 9b with lora on a single a100 40gb", "gemma-2-9b", "lora", "A100-40GB", 1},
	{"how much memory for lora finetuning of mistral 7b with batch size 8 and seq 4096 on an a100", "mistral-7b", "lora", "A100-80GB", 1},
	{"fine-tune phi-3 mini on a t4?", "phi-3-mini", "lora", "T4", 1},
	{"what gpu do I need to finetune llama 3 70b", "llama-3-70b", "lora", "A100-80GB", 1},
	{"qlora fine tuning of qwen 2.5 14b on an rtx 4090 with gradient checkpointing", "qwen2.5-14b", "qlora", "RTX4090", 1},
	{"lora llama-3.1-8b 4090 bs 4 seq: 8192", "llama-3.1-8b", "lora", "RTX4090", 1},
	{"`llama-3-8b` `qlora` `4090`", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora seq 8,192 4090", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama 3 8b lora 24 GB", "llama-3-8b", "lora", "budget:24gb", 1},
	{"llama-2-70b full 4 x a100 zero=3", "llama-2-70b", "full", "A100-80GB", 4},
	{"7b lora A100-SXM4-80GB", "7b", "lora", "A100-80GB", 1},
	{"mistral-7b inference h100 nvl", "mistral-7b", "inference", "H100-NVL", 1},
	{"llama-3.2-1b inference engine=llama.cpp gtx 1080 ti", "llama-3.2-1b", "inference", "GTX1080Ti", 1},
	{"qwen2.5-7b inference engine=vllm titan rtx seq=4096", "qwen2.5-7b", "inference", "TITANRTX", 1},
	// Serving words in a training question leave it a training question.
	{"can I qlora llama 3 8b on a 4090 to serve a chatbot", "llama-3-8b", "qlora", "RTX4090", 1},
	{"can I finetune llama 3 8b on a 4090 and serve it", "llama-3-8b", "lora", "RTX4090", 1},
	{"can I finetune llama 3 8b for my users on a 4090", "llama-3-8b", "lora", "RTX4090", 1},
	{"qwen2.5-7b inference engine=vllm rtx titan seq=4096", "qwen2.5-7b", "inference", "TITANRTX", 1},
	{"qwen3-8b qlora geforce rtx 4060 ti", "qwen3-8b", "qlora", "RTX4060Ti-16GB", 1},
	{"can I run qwen3-8b on 2x rtx 4070 ti super", "qwen3-8b", "inference", "RTX4070TiSUPER", 2},
	{"llama-3-8b lora gradient_checkpointing=true per_device_train_batch_size=4 max_seq_len=2048 rtx 4090", "llama-3-8b", "lora", "RTX4090", 1},
	{"llama-3.1-8b --max-model-len 8192 engine=vllm l4", "llama-3.1-8b", "inference", "L4", 1},
	{"llama-3.1-8b vllm --max-model-len=32768 --gpu-memory-utilization 0.9 4090", "llama-3.1-8b", "inference", "RTX4090", 1},
	{"how much vram for llama 3 70b inference?", "llama-3-70b", "inference", "A100-80GB", 1},
	{"how much gpu memory to run mistral 7b", "mistral-7b", "inference", "A100-80GB", 1},
	{"can I run llama 3.1 70b on two 4090s?", "llama-3.1-70b", "inference", "RTX4090", 2},
	{"can a 3090 run qwen2.5 32b", "qwen2.5-32b", "inference", "RTX3090", 1},
	{"will deepseek r1 distill qwen 32b fit on an h100", "deepseek-r1-distill-qwen-32b", "inference", "H100-SXM", 1},
	{"vram needed to serve mixtral 8x7b on 2x a100", "mixtral-8x7b", "inference", "A100-80GB", 2},
	{"how many concurrent users can llama-3.1-8b serve on h100 at 8k context", "llama-3.1-8b", "inference", "H100-SXM", 1},
	{"how many users can I serve with qwen3 8b on an L40S", "qwen3-8b", "inference", "L40S", 1},
	{"serve llama 3.1 8b to 32 concurrent users on an a10g with vllm", "llama-3.1-8b", "inference", "A10G", 1},
	{"run gpt-oss-20b on a 4090 with ollama", "gpt-oss-20b", "inference", "RTX4090", 1},
	{"inference llama 2 7b in fp16 on a t4", "llama-2-7b", "inference", "T4", 1},
	{"can my m4 max run llama 3 70b", "llama-3-70b", "inference", "M4-Max-128GB", 1},
	{"does qwen3 30b a3b fit in 24gb vram", "qwen3-30b-a3b", "inference", "budget:24gb", 1},
	{"llama 3.3 70b in 4-bit on a 4090?", "llama-3.3-70b", "inference", "RTX4090", 1},
	{"how much vram does phi 4 need", "phi-4", "inference", "A100-80GB", 1},
	{"run gemma 2 27b on an a6000", "gemma-2-27b", "inference", "RTXA6000", 1},
	{"how big a gpu for llama 3.1 405b inference", "llama-3.1-405b", "inference", "A100-80GB", 1},
	{"can 8 h100s serve deepseek v3", "deepseek-v3", "inference", "H100-SXM", 8},
	{"what's the vram for kimi k2 on 8x h200", "kimi-k2", "inference", "H200", 8},
	{"is an l4 enough for llama 3.2 3b", "llama-3.2-3b", "inference", "L4", 1},
	{"mistral nemo on a 3060 12gb?", "mistral-nemo", "inference", "RTX3060", 1},
	{"bert large full finetune on a t4", "bert-large", "full", "T4", 1},
	{"Can I do QLoRA on Llama-3-70B with a single A100 80GB?", "llama-3-70b", "qlora", "A100-80GB", 1},
	{"what batch size can I use to lora llama 3 8b on a 4090 at 2048 tokens", "llama-3-8b", "lora", "RTX4090", 1},
	{"train gpt2 from scratch on a 3060", "gpt2", "full", "RTX3060", 1},
	{"llama3 8b qlora 4090 seq=4096 bs=2", "llama-3-8b", "qlora", "RTX4090", 1},
	{"Qwen/Qwen2.5-7B-Instruct lora on an a10g", "Qwen/Qwen2.5-7B-Instruct", "lora", "A10G", 1},
	{"meta-llama/Meta-Llama-3-8B-Instruct inference on an l4", "meta-llama/Meta-Llama-3-8B-Instruct", "inference", "L4", 1},
	{"how much vram to finetune llama 3 8b with 8-bit adam on a 4090", "llama-3-8b", "lora", "RTX4090", 1},
	{"lora fine-tune of llama 2 7b with rank 64 on a v100", "llama-2-7b", "lora", "V100-16GB", 1},
	{"full finetune 7b model with deepspeed zero 3 on 8 a100s", "7b", "full", "A100-80GB", 8},
	{"how much memory does a 13b model need for inference", "13b", "inference", "A100-80GB", 1},
	{"70b inference on 2 h100", "70b", "inference", "H100-SXM", 2},
	{"can two rtx 3090 handle qlora on a 70b model", "70b", "qlora", "RTX3090", 2},
	{"will llama-3-8b fit on a t4 for inference", "llama-3-8b", "inference", "T4", 1},
	{"llama 3 8b 128k context on an h100 with vllm", "llama-3-8b", "inference", "H100-SXM", 1},
	{"serving qwen2.5 72b on 4x a100 80gb with vllm at 32k context", "qwen2.5-72b", "inference", "A100-80GB", 4},
	{"how much kv cache for llama 3.1 8b at 128k on an h100", "llama-3.1-8b", "inference", "H100-SXM", 1},
	{"llama-3.1-70b awq on 2x 4090", "llama-3.1-70b", "inference", "RTX4090", 2},
	{"mixtral 8x22b inference 8x h100", "mixtral-8x22b", "inference", "H100-SXM", 8},
	{"gemma 7b lora t4 fp16", "gemma-7b", "lora", "T4", 1},
	{"what do I need to run deepseek r1 locally on 8x h200", "deepseek-r1", "inference", "H200", 8},
	{"phi 3.5 mini on a 4060?", "phi-3.5-mini", "inference", "RTX4060", 1},
	{"qwen3 32b lora on an h100 with batch size 16", "qwen3-32b", "lora", "H100-SXM", 1},
	{"olmo 2 7b full fine-tune on an a100 80gb", "olmo-2-7b", "full", "A100-80GB", 1},
	{"smollm2 1.7b full finetune on a 3090", "smollm2-1.7b", "full", "RTX3090", 1},
	{"can i fine tune qwen3 14b on 24gb", "qwen3-14b", "lora", "budget:24gb", 1},
	{"fine tuning llama 3 8b on a 16gb gpu", "llama-3-8b", "lora", "budget:16gb", 1},
	{"llama-3-8b lora 4090 with flash attention", "llama-3-8b", "lora", "RTX4090", 1},
	{"how much vram to finetune mistral 7b without gradient checkpointing on an a100", "mistral-7b", "lora", "A100-80GB", 1},
	{"can I run llama 3 8b inference on a 3060 12gb", "llama-3-8b", "inference", "RTX3060", 1},
	{"gpt oss 120b on an h100?", "gpt-oss-120b", "inference", "H100-SXM", 1},
	{"can a single h100 serve llama 3.3 70b in fp8", "llama-3.3-70b", "inference", "H100-SXM", 1},
	{"llama 3.1 8b on l4 with 8k context, how many users?", "llama-3.1-8b", "inference", "L4", 1},
	{"How many concurrent requests can vLLM serve for llama-3.1-8b on an A10G?", "llama-3.1-8b", "inference", "A10G", 1},
	{"yi 34b qlora on a 4090", "yi-1.5-34b", "qlora", "RTX4090", 1},
	{"falcon 7b inference on a t4", "falcon-7b", "inference", "T4", 1},
	{"codellama 34b inference on an a100 40gb", "codellama-34b", "inference", "A100-40GB", 1},
	{"can I run mixtral on a 4090", "mixtral-8x7b", "inference", "RTX4090", 1},
	{"t5 large full finetune on a v100", "t5-large", "full", "V100-16GB", 1},
	{"bert-base full fine-tune on a t4 with batch size 32 and seq 512", "bert-base", "full", "T4", 1},
	{"full finetuning gemma 2b on a 3090?", "gemma-2b", "full", "RTX3090", 1},
	{"Can I LoRA-tune Llama 3.2 1B on a laptop 4060?", "llama-3.2-1b", "lora", "RTX4060", 1},
	{"qwen 3 8b lora 4090", "qwen3-8b", "lora", "RTX4090", 1},
	{"lora for llama-3.1-8b, 4090, bs=8, seq=4096", "llama-3.1-8b", "lora", "RTX4090", 1},
	{"llama-3-8b,qlora,4090", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora on rtx 4090 with gc on", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora 4090 gc: on", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora 4090 batch size: 4", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora 4090 \"seq=4096\"", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b qlora 4090 'bs=2'", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b lora h100 --max-model-len 4096", "llama-3-8b", "lora", "H100-SXM", 1},
	{"7b lora a100 num_gpus=2 zero_stage=2", "7b", "lora", "A100-80GB", 2},
	{"Llama-3.1-8B full fine-tune on 8x A100 80GB with ZeRO-3", "llama-3.1-8b", "full", "A100-80GB", 8},
	{"deepseek v2 lite lora on an a100", "deepseek-v2-lite", "lora", "A100-80GB", 1},
	{"llama-3.2-3b qlora rtx 3090", "llama-3.2-3b", "qlora", "RTX3090", 1},
	{"how much vram for qwen3 0.6b full finetune?", "qwen3-0.6b", "full", "A100-80GB", 1},
	{"mistral 7b v0.3 inference on a 4090", "mistral-7b-v0.3", "inference", "RTX4090", 1},
	{"can I serve llama 3.1 70b on 4 l40s?", "llama-3.1-70b", "inference", "L40S", 4},
	{"llama-3-70b inference 2x h100 tp=2", "llama-3-70b", "inference", "H100-SXM", 2},
	{"how much memory is needed to train llama 2 13b with lora on an a100 80gb?", "llama-2-13b", "lora", "A100-80GB", 1},
	{"lora on a 3090 for gemma 2 2b", "gemma-2-2b", "lora", "RTX3090", 1},
	{"I want to finetune qwen2.5 1.5b on a t4, possible?", "qwen2.5-1.5b", "lora", "T4", 1},
	{"is 80gb enough for full finetuning of llama 3 8b", "llama-3-8b", "full", "budget:80gb", 1},
	{"can I run llama-3.1-8b at 32k context on a 4090 with vllm?", "llama-3.1-8b", "inference", "RTX4090", 1},
	{"llama 3 8b on an a100 with 16 concurrent users", "llama-3-8b", "inference", "A100-80GB", 1},
	{"inference for llama-2-13b on an rtx a6000", "llama-2-13b", "inference", "RTXA6000", 1},
	{"deepseek-r1 on 8x h100 with vllm", "deepseek-r1", "inference", "H100-SXM", 8},
	{"could I fit qwen2.5 72b on 2 a100s for inference", "qwen2.5-72b", "inference", "A100-80GB", 2},
	{"Fine-tune Mistral-7B-Instruct-v0.3 with QLoRA on a 24 GB GPU", "mistral-7b-v0.3", "qlora", "budget:24gb", 1},
	{"llama 3 70b qlora 48gb", "llama-3-70b", "qlora", "budget:48gb", 1},
	{"how much vram does qlora need for llama 3.1 70b", "llama-3.1-70b", "qlora", "A100-80GB", 1},
	{"can I full fine tune qwen3 1.7b on a 4090", "qwen3-1.7b", "full", "RTX4090", 1},
	{"run qwen3 235b a22b on 8x h100", "qwen3-235b-a22b", "inference", "H100-SXM", 8},
	{"how much vram to serve kimi k2 on 16 h100s", "kimi-k2", "inference", "H100-SXM", 16},
	{"llama 4 scout inference on an h100", "llama-4-scout", "inference", "H100-SXM", 1},
	{"what gpu to run llama-4-maverick", "llama-4-maverick", "inference", "A100-80GB", 1},
	{"glm 5 on 8x b200", "glm-5", "inference", "B200", 8},
	{"minimax m2.5 inference on 8 h200", "minimax-m2.5", "inference", "H200", 8},
	{"nemotron 3 nano 30b a3b on an l40s", "nemotron-3-nano", "inference", "L40S", 1},
	{"Phi-4-mini inference on a t4", "phi-4-mini", "inference", "T4", 1},
	{"how much vram for gemma 3 4b inference on a 3060", "gemma-3-4b", "inference", "RTX3060", 1},
	{"gemma 3 1b full finetune on a t4", "gemma-3-1b", "full", "T4", 1},
	{"lora finetune llama-3.1-8b at seq 16k on an h100", "llama-3.1-8b", "lora", "H100-SXM", 1},
	{"QLoRA llama-3.1-8b on 4090 at 8192 context", "llama-3.1-8b", "qlora", "RTX4090", 1},
	{"llama-3.1-8b, QLoRA, RTX 4090, seq 8192, bs 2", "llama-3.1-8b", "qlora", "RTX4090", 1},
	{"What's the max batch size for llama 3 8b lora on an a100?", "llama-3-8b", "lora", "A100-80GB", 1},
	{"will llama 2 70b run on 4x 3090s?", "llama-2-70b", "inference", "RTX3090", 4},
	{"can 2 a6000s run llama 3 70b", "llama-3-70b", "inference", "RTXA6000", 2},
	{"run llama 3 8b with llama.cpp on a 3060", "llama-3-8b", "inference", "RTX3060", 1},
	{"ollama llama3.1:8b on a 3060", "llama-3.1-8b", "inference", "RTX3060", 1},
	{"can I run qwen3:8b with ollama on a 4060", "qwen3-8b", "inference", "RTX4060", 1},
	{"vllm serving llama-3.1-8b on an a10g, how much kv cache?", "llama-3.1-8b", "inference", "A10G", 1},
	{"sglang qwen2.5 7b on an l4", "qwen2.5-7b", "inference", "L4", 1},
	{"tgi llama 2 13b on an a10g", "llama-2-13b", "inference", "A10G", 1},
	{"llama 3 8b lora 4090 learning_rate=2e-4 gradient_accumulation_steps=8", "llama-3-8b", "lora", "RTX4090", 1},
	{"llama 3 8b lora 4090 bf16=true", "llama-3-8b", "lora", "RTX4090", 1},
	{"llama 3 8b 4090 load_in_4bit=true lora", "llama-3-8b", "qlora", "RTX4090", 1},
	{"llama-3-8b lora 4090 lora_r=16", "llama-3-8b", "lora", "RTX4090", 1},
	{"llama-3-8b 4090 --model-len 4096", "llama-3-8b", "inference", "RTX4090", 1},
	{"mistral 7b lora on 2 x rtx 4090 with ddp", "mistral-7b", "lora", "RTX4090", 2},
	{"how much memory do I need to train a 1b model from scratch on an a100", "1b", "full", "A100-80GB", 1},
	{"can I fine-tune gpt-2 on a t4", "gpt2", "full", "T4", 1},
	{"gpt2 medium full finetune on a 3060", "gpt2-medium", "full", "RTX3060", 1},
	{"opt 6.7b lora on a v100 32gb", "opt-6.7b", "lora", "V100-32GB", 1},
	{"can I run qwen2.5 vl 7b on a 4090", "qwen2.5-vl-7b", "inference", "RTX4090", 1},
	{"how much vram for qwen3 vl 8b inference", "qwen3-vl-8b", "inference", "A100-80GB", 1},
	{"can I finetune llama 3 8b on a 4080?", "llama-3-8b", "lora", "RTX4080", 1},
	{"how much vram to run llama 3.1 8b on a 5090", "llama-3.1-8b", "inference", "RTX5090", 1},
	{"qwen3 14b qlora on a 5080", "qwen3-14b", "qlora", "RTX5080", 1},
	{"llama 3.1 8b lora on an rtx pro 6000", "llama-3.1-8b", "lora", "RTXPRO6000", 1},
	{"run llama 3.1 70b on a gh200", "llama-3.1-70b", "inference", "GH200", 1},
	{"llama 3.1 405b fp8 on 8x h200", "llama-3.1-405b", "inference", "H200", 8},
	{"can I run deepseek v3 on 8 mi300x", "deepseek-v3", "inference", "MI300X", 8},
	{"llama 3 8b inference on a mi300x", "llama-3-8b", "inference", "MI300X", 1},
	{"mixtral 8x7b qlora on an a100 40gb", "mixtral-8x7b", "qlora", "A100-40GB", 1},
	{"how much vram does llama 3.1 8b need at 128k context", "llama-3.1-8b", "inference", "A100-80GB", 1},
	{"llama 3 8b with 4k context on a t4", "llama-3-8b", "inference", "T4", 1},
	{"serve llama 3 70b awq on an l40s", "llama-3-70b", "inference", "L40S", 1},
	{"llama-3-70b gptq inference 2x 4090", "llama-3-70b", "inference", "RTX4090", 2},
	{"llama3-8b qlora 4090?", "llama-3-8b", "qlora", "RTX4090", 1},
	{"Will Mistral 7B fit in 16GB for inference?", "mistral-7b", "inference", "budget:16gb", 1},
	{"vram for qwen2.5-7b-instruct", "qwen2.5-7b", "inference", "A100-80GB", 1},
	{"fine-tune llama 2 7b with lora on colab t4", "llama-2-7b", "lora", "T4", 1},
	{"max context for llama 3.1 8b on a 24gb gpu", "llama-3.1-8b", "inference", "budget:24gb", 1},
	{"How much GPU memory do I need to run Llama 3.1 70B in 4-bit?", "llama-3.1-70b", "inference", "A100-80GB", 1},
	{"Can Llama-3-8B run on RTX 3060 12GB?", "llama-3-8b", "inference", "RTX3060", 1},
	{"is 48GB enough to train mistral 7b with qlora", "mistral-7b", "qlora", "budget:48gb", 1},
	{"what's the minimum gpu to serve gemma 2 9b", "gemma-2-9b", "inference", "A100-80GB", 1},
	{"can i run deepseek-r1-distill-qwen-32b on my 4090", "deepseek-r1-distill-qwen-32b", "inference", "RTX4090", 1},
	{"how much memory for full fine-tuning gpt2", "gpt2", "full", "A100-80GB", 1},
	{"qlora llama-2-70b single a100?", "llama-2-70b", "qlora", "A100-80GB", 1},
	{"lora 13b on 2x3090", "13b", "lora", "RTX3090", 2},
	{"Running Mixtral 8x7B on 2 A100 40GB", "mixtral-8x7b", "inference", "A100-40GB", 2},
	{"phi-3-mini on t4 inference", "phi-3-mini", "inference", "T4", 1},
	{"Do I need an H100 to fine-tune Llama 3 8B?", "llama-3-8b", "lora", "H100-SXM", 1},
	{"llama 3 8b 4bit inference 8gb", "llama-3-8b", "inference", "budget:8gb", 1},
	{"how much vram does llama 3.1 405b need with fp8", "llama-3.1-405b", "inference", "A100-80GB", 1},
	{"train a 7b model from scratch on 8 h100s", "7b", "full", "H100-SXM", 8},
	{"RTX 4090 enough for Llama 3.1 8B lora?", "llama-3.1-8b", "lora", "RTX4090", 1},
	{"7b model 24gb vram lora", "7b", "lora", "budget:24gb", 1},
	{"Mistral-7B-Instruct-v0.2 on A10G", "mistral-7b", "inference", "A10G", 1},
	{"llama 2 7b chat fp16 on v100 32gb", "llama-2-7b", "inference", "V100-32GB", 1},
	{"what GPU should I rent to QLoRA Llama 3 70B?", "llama-3-70b", "qlora", "A100-80GB", 1},
	{"can a 3090 handle full finetuning of phi-2", "phi-2", "full", "RTX3090", 1},
	{"estimate memory for bert-base finetuning bs 32 seq 512 on a t4", "bert-base", "full", "T4", 1},
	{"gemma-2-9b-it inference with vllm on L4", "gemma-2-9b", "inference", "L4", 1},
	{"How much VRAM do I need for Llama 3 8B?", "llama-3-8b", "inference", "A100-80GB", 1},
	{"llama 3 70b on 4x 4090 with vllm, 16 users", "llama-3-70b", "inference", "RTX4090", 4},
	{"Can I serve Qwen3-30B-A3B on a single RTX 4090 with 32k context?", "qwen3-30b-a3b", "inference", "RTX4090", 1},
	{"What's the VRAM requirement to fine-tune Qwen2.5-14B with QLoRA?", "qwen2.5-14b", "qlora", "A100-80GB", 1},
	{"fine tuning mistral 7b on a single 24 GB card, batch size 4, seq len 2048", "mistral-7b", "lora", "budget:24gb", 1},
	{"LoRA fine-tune Llama 3.1 8B on an A10G (24GB)", "llama-3.1-8b", "lora", "A10G", 1},
	{"I have two 3090s, can I run llama 3.3 70b?", "llama-3.3-70b", "inference", "RTX3090", 2},
	{"can llama-3.1-8b-instruct run on an m4 max?", "llama-3.1-8b", "inference", "M4-Max-128GB", 1},
	{"how much memory to serve llama 3.1 8b with 128k context on an H100 in vLLM", "llama-3.1-8b", "inference", "H100-SXM", 1},
	{"Is one A100 80GB enough to finetune Llama 2 13B fully?", "llama-2-13b", "full", "A100-80GB", 1},
	{"qlora on llama 3 70b with a 48gb a6000", "llama-3-70b", "qlora", "RTXA6000", 1},
	{"gpt-oss-20b on a 16gb gpu", "gpt-oss-20b", "inference", "budget:16gb", 1},
	{"does gpt-oss 120b fit on one h100", "gpt-oss-120b", "inference", "H100-SXM", 1},
	// Issue 22's examples, as a new user tried them.
	{"meta-llama/Llama-3.1-8B-Instruct inference engine=vllm l4", "meta-llama/Llama-3.1-8B-Instruct", "inference", "L4", 1},
	{"deepseek-ai/DeepSeek-R1-Distill-Qwen-14B inference engine=vllm 4090", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "inference", "RTX4090", 1},
	{"can I full finetune llama 3.2 1b on a 4090 with torchtune?", "llama-3.2-1b", "full", "RTX4090", 1},
	{"deepseek-v3 inference engine=sglang 8xh200 fp8", "deepseek-v3", "inference", "H200", 8},
	{"7b lora 2x 24gb", "7b", "lora", "budget:24gb", 2},
	{"gpt-oss-20b lora h100 framework=trl", "gpt-oss-20b", "lora", "H100-SXM", 1},
	{"can I finetune llama 3 8b on a 4090?", "llama-3-8b", "lora", "RTX4090", 1},
	{"what's the vram to train llama 4 scout with lora on 8 h100s", "llama-4-scout", "lora", "H100-SXM", 8},
	{"what gpu do I need to serve llama 3.3 70b for 50 users", "llama-3.3-70b", "inference", "A100-80GB", 1},
	{"mistral-small-3.2-24b lora l40s framework=axolotl", "mistral-small-3.2-24b", "lora", "L40S", 1},
	{"qwen3-32b inference engine=vllm 4090", "qwen3-32b", "inference", "RTX4090", 1},
	{"llama-3.1-70b full 8xh100 zero=3", "llama-3.1-70b", "full", "H100-SXM", 8},
}

// minPhrasingRate is the share of phrasings that must be read right
// (issue 22: at least 97% of questions as people phrase them).
const minPhrasingRate = 0.97

// TestPhrasings reads every phrasing and checks the model, method and GPU
// read; the rate must reach minPhrasingRate, and every miss is listed.
func TestPhrasings(t *testing.T) {
	if len(phrasings) < 150 {
		t.Fatalf("only %d phrasings: the table must hold at least 150", len(phrasings))
	}
	right := 0
	for _, p := range phrasings {
		q, err := Parse(p.text)
		if err != nil {
			t.Errorf("%q: %v", p.text, err)
			continue
		}
		w := q.Workload
		gpu := q.GPU.Key
		if q.Budget {
			gpu = "budget:" + strings.TrimSuffix(budgetGiB(q.GPU.UsableBytes), " GiB") + "gb"
		}
		if w.ModelName != p.model || string(w.Method) != p.method || gpu != p.gpu || w.GPUs != p.gpus {
			t.Errorf("%q read as %q: model %s, method %s, GPU %s ×%d; want %s, %s, %s ×%d",
				p.text, q.ReadAs, w.ModelName, w.Method, gpu, w.GPUs, p.model, p.method, p.gpu, p.gpus)
			continue
		}
		right++
	}
	rate := float64(right) / float64(len(phrasings))
	t.Logf("phrasings read right: %d of %d (%.1f%%)", right, len(phrasings), 100*rate)
	if rate < minPhrasingRate {
		t.Errorf("phrasings read right: %.1f%%, want at least %.0f%%", 100*rate, 100*minPhrasingRate)
	}
}

// TestQuestionsShowTheirReading checks the three questions: each
// is read as a grammar query, which the reply shows.
func TestQuestionsShowTheirReading(t *testing.T) {
	tests := []struct{ text, readAs string }{
		{"can I finetune llama 3 8b on a 4090?", "llama-3-8b lora 4090"},
		{"how much vram for llama 3 70b inference?", "llama-3-70b inference"},
		{"how many concurrent users can llama-3.1-8b serve on h100 at 8k context", "llama-3.1-8b inference h100 seq=8k engine=vllm"},
		{"lora on 4090 for llama 3 8b", "llama-3-8b lora 4090"},
		{"llama-3-8b qlora 4090 gc: on 'seq=4096'", "llama-3-8b qlora 4090 seq=4096 gc=on"},
		{"llama 3 8b 4090 load_in_4bit=true lora", "llama-3-8b qlora 4090 precision=nf4"},
		{"llama-4-scout h100 vllm at 1M context", "llama-4-scout h100 seq=1m engine=vllm"},
		{"llama-3.1-8b 4 x a100 --max-model-len 8,192 engine=vllm", "llama-3.1-8b 4x a100 seq=8192 engine=vllm"},
		{"llama-3.1-8b lora 24 GB", "llama-3.1-8b lora 24gb"},
		{"serve gpt-oss-120b on one h100", "gpt-oss-120b inference h100 engine=vllm"},
		{"serving qwen3-8b on a 4090 with sglang", "qwen3-8b inference 4090 engine=sglang"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.text)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		if q.ReadAs != tt.readAs {
			t.Errorf("%q read as %q, want %q", tt.text, q.ReadAs, tt.readAs)
		}
		// The reading is itself a query that reads the same.
		again, err := Parse(q.ReadAs)
		if err != nil || again.ReadAs != q.ReadAs {
			t.Errorf("reading %q parses to %q, %v", q.ReadAs, again.ReadAs, err)
		}
	}
}

// TestQuestionsWithoutAModel: a question that names no model is refused
// with a message that says so, not answered with a guess.
func TestQuestionsWithoutAModel(t *testing.T) {
	for _, text := range []string{
		"how much vram for stable diffusion",
		"can I run it on a 4090?",
		"what gpu should I buy?",
	} {
		_, err := Parse(text)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("%q: %v, want a *QueryError", text, err)
		}
	}
}

// TestQuestionsAboutAFamily: a question that names a family without a
// size ("mistral"), a misspelt model or a Mac by its chip is told which
// models it may mean or what to give, not that its first word is unknown.
func TestQuestionsAboutAFamily(t *testing.T) {
	tests := []struct{ text, want string }{
		{"can I run mistral on a 4090", "'mistral' is a family — which one? mistral-"},
		{"can i finetune deepseek on 8 h100", "'deepseek' is a family — which one? "},
		{"can I run mixtrl on a 4090", "'mixtrl' is no model I know — did you mean 'mixtral'?"},
		{"can i run qwen3-8b on my m3 max", "'m3 max' is an Apple M3 Max"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		var qe *Error
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.text, err, tt.want)
		}
	}
}

// TestGrammarStaysStrict: a list of tokens with a word the grammar does
// not know is still refused (only sentences are read by keywords).
func TestGrammarStaysStrict(t *testing.T) {
	for _, text := range []string{"7b zzzzzz", "7b lora a100 foo", "7b full off", "7b 13b", "llama-2-70b 13b"} {
		if _, err := Parse(text); err == nil {
			t.Errorf("%q was accepted", text)
		}
	}
}

// sizedResolver stands in for the Hub: a name with a size resolves to the
// typical model of that size, as models.Resolver does when the Hub cannot
// say more.
type sizedResolver struct{ asked []string }

func (r *sizedResolver) Resolve(_ context.Context, ref string) (models.Resolution, error) {
	r.asked = append(r.asked, ref)
	n, ok := models.SizeInName(ref)
	if !ok {
		return models.Resolution{}, errors.New("no size in " + ref)
	}
	m := catalog.ModelForSize(n)
	m.Name = ref
	return models.Resolution{Model: m, Source: models.SourceSize}, nil
}

// TestQuestionsAboutModelsOffTheCatalog: a model the catalog lacks goes to
// the resolver under the name typed, never to another size or generation.
func TestQuestionsAboutModelsOffTheCatalog(t *testing.T) {
	tests := []struct{ text, ref string }{
		{"how much vram for granite-3.1-8b-instruct inference on an a6000", "granite-3.1-8b-instruct"},
		{"can I finetune llama 3.2 8b on a 4090?", "llama-3.2-8b"},
		{"llama 4 8b lora 4090", "llama-4-8b"},
		{"run Qwen/Qwen3-Coder-Next-80B on 2 h100s", "Qwen/Qwen3-Coder-Next-80B"},
	}
	for _, tt := range tests {
		r := &sizedResolver{}
		q, err := ParseWith(context.Background(), tt.text, r, nil)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		if len(r.asked) != 1 || r.asked[0] != tt.ref {
			t.Errorf("%q asked the resolver for %q, want %q", tt.text, r.asked, tt.ref)
		}
		if !strings.Contains(q.ReadAs, tt.ref) {
			t.Errorf("%q read as %q", tt.text, q.ReadAs)
		}
	}
	// Without a resolver, no suggestion jumps to another size or generation.
	for _, text := range []string{"llama 3.2 8b lora 4090", "llama-4-8b lora", "qwen3 9b inference"} {
		_, err := Parse(text)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if qe.Suggestion != "" {
			t.Errorf("%q: suggests %q", text, qe.Suggestion)
		}
	}
}

func FuzzTokenizeQuery(f *testing.F) {
	for _, p := range phrasings[:20] {
		f.Add(p.text)
	}
	f.Add("seq: 8,192 `bs=4` 4 x a100 24 GB --max-model-len 8192 fine tune")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > MaxBytes {
			return
		}
		tokens := tokenizeQuery(s)
		// A word gives one token, or one per comma-separated part
		// ("llama-3-8b,qlora,4090"); the joins only merge.
		if words, commas := len(strings.Fields(s)), strings.Count(s, ","); len(tokens) > words+commas+1 {
			t.Fatalf("%q: %d tokens from %d words and %d commas", s, len(tokens), words, commas)
		}
		for _, tok := range tokens {
			if tok == "" {
				t.Fatalf("%q: empty token", s)
			}
		}
		// A question never panics and errs only with a *QueryError.
		if _, err := Parse(s); err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("%q: %v is not a *QueryError", s, err)
			}
		}
	})
}

// BenchmarkParseQuestion reads one of the questions; the worst
// case is a long question with many words the grammar leaves out.
func BenchmarkParseQuestion(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("how many concurrent users can llama-3.1-8b serve on h100 at 8k context"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseQuestionManyUnknownWords(b *testing.B) {
	q := "can I " + strings.Repeat("gaming ", 30) + "finetune llama 3 8b on a 4090?"
	for b.Loop() {
		if _, err := Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}
