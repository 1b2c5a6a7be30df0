package fix

// Framework is the training or serving stack a snippet is written for.
type Framework string

// Frameworks a snippet can be written for. Unknown means "plain PyTorch is
// a safe default". The values are the query grammar's framework= and
// engine= words (docs/contracts.md §2).
const (
	FrameworkUnknown   Framework = ""
	FrameworkPyTorch   Framework = "pytorch"
	FrameworkHF        Framework = "hf-trainer" // transformers Trainer / TRL / accelerate
	FrameworkLightning Framework = "lightning"
	FrameworkDeepSpeed Framework = "deepspeed"
	FrameworkKeras     Framework = "keras" // TensorFlow / Keras
	FrameworkJAX       Framework = "jax"
	FrameworkVLLM      Framework = "vllm"
	FrameworkSGLang    Framework = "sglang"
	FrameworkTGI       Framework = "tgi" // Hugging Face text-generation-inference
	FrameworkLlamaCPP  Framework = "llama.cpp"
	FrameworkOllama    Framework = "ollama"
	// Training stacks configured by their own files (docs/contracts.md §2,
	// framework=): Unsloth runs the user's Python (FastLanguageModel and
	// the HF/TRL trainers); axolotl, torchtune and LLaMA-Factory read a
	// YAML config.
	FrameworkUnsloth      Framework = "unsloth"
	FrameworkAxolotl      Framework = "axolotl"
	FrameworkTorchtune    Framework = "torchtune"
	FrameworkLlamaFactory Framework = "llama-factory"
)

// Any keys a snippet that holds whatever the stack (a shell command, an
// environment variable of the CUDA runtime, a driver setting).
const Any Framework = "*"

// stack is what the catalogue knows of a framework: its display name, the
// frameworks whose snippets it may fall back to (in order), and whether it
// runs the user's own PyTorch code, so that a PyTorch idiom applies to it.
type stack struct {
	name      string
	fallbacks []Framework
	torch     bool
}

// stacks is every framework. Adding one is adding a row here and its
// snippets in defs.go.
var stacks = map[Framework]stack{
	FrameworkUnknown:   {name: "PyTorch", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}, torch: true},
	FrameworkPyTorch:   {name: "PyTorch / transformers", fallbacks: []Framework{FrameworkHF}, torch: true},
	FrameworkHF:        {name: "transformers Trainer", fallbacks: []Framework{FrameworkPyTorch}, torch: true},
	FrameworkLightning: {name: "Lightning", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}, torch: true},
	FrameworkDeepSpeed: {name: "DeepSpeed", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}, torch: true},
	FrameworkUnsloth:   {name: "Unsloth", fallbacks: []Framework{FrameworkHF, FrameworkPyTorch}, torch: true},
	// Config-driven trainers: a PyTorch idiom is shown to them only as a
	// marked fallback.
	FrameworkAxolotl:      {name: "axolotl", fallbacks: []Framework{FrameworkHF, FrameworkPyTorch}},
	FrameworkTorchtune:    {name: "torchtune", fallbacks: []Framework{FrameworkPyTorch}},
	FrameworkLlamaFactory: {name: "LLaMA-Factory", fallbacks: []Framework{FrameworkHF, FrameworkPyTorch}},
	// The stacks below do not run the user's PyTorch code: a PyTorch idiom
	// is shown to them only as a marked fallback (the planner), and the
	// diagnosis proposes only fixes they have an idiom for.
	FrameworkKeras:    {name: "keras", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}},
	FrameworkJAX:      {name: "jax", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}},
	FrameworkVLLM:     {name: "vllm", fallbacks: []Framework{FrameworkPyTorch, FrameworkHF}},
	FrameworkSGLang:   {name: "sglang"},
	FrameworkTGI:      {name: "tgi"},
	FrameworkLlamaCPP: {name: "llama.cpp"},
	FrameworkOllama:   {name: "ollama"},
}

// Frameworks lists every framework the catalogue knows, Unknown included.
func Frameworks() []Framework {
	out := make([]Framework, 0, len(stacks))
	for fw := range stacks {
		out = append(out, fw)
	}
	return out
}

// RunsTorch reports whether fw runs the user's own PyTorch code (plain
// PyTorch, the HF Trainer, Lightning, DeepSpeed), so that PyTorch idioms
// apply to it; unknown frameworks count as PyTorch.
func RunsTorch(fw Framework) bool {
	s, ok := stacks[fw]
	return !ok || s.torch
}
