// Package job reads a job as people write it: a training config
// (axolotl, LLaMA-Factory, torchtune, DeepSpeed, accelerate), a training
// script or notebook cell (TRL, transformers, Unsloth), or a serving
// launch (vllm serve, SGLang, llama.cpp, Ollama, docker run, a Kubernetes
// container), and says what it runs in the /vram grammar's words: the
// model as the file writes it, the method and the query settings
// (query.Settings), with the keys it read, those that do not change
// memory, and those it does not know (docs/jobs.md).
//
// It is pure: it reads text and returns what it read. Nothing in the text
// is executed (Python is read as literals, shell as words), every reader
// is bounded (MaxBytes, node counts, depths), and values of keys that look
// like secrets are never returned.
package job
