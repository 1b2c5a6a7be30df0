package fix

import "github.com/vrambot/vrambot/advisor/units"

// Params are the named values a fix's detail and snippets are written
// with. A zero value means "not known": the detail leaves it out, and Make
// puts the placeholder of Placeholders into the snippet instead.
type Params struct {
	// ModelID is the Hugging Face id (or GGUF file) of the model.
	ModelID string
	// GPUName names the GPU the advice is for ("A100 80GB").
	GPUName string
	// NoBF16 marks a GPU without bf16 (V100, T4): fp16 with loss scaling
	// instead, and SDPA instead of FlashAttention-2 (which needs Ampere).
	NoBF16 bool
	// FP8 marks a GPU with fp8 tensor cores (Hopper, Ada, MI300).
	FP8 bool

	// MicroBatch and AccumSteps split the effective batch Batch.
	MicroBatch, AccumSteps, Batch int
	// Paged selects the paged variant of the 8-bit optimizer.
	Paged bool
	// LoRARank is the adapter rank; GradCheckpointing whether it is on.
	LoRARank          int
	GradCheckpointing bool
	// TrainableParams and WasTrainableParams are parameter counts as
	// words ("40M", "6.74B").
	TrainableParams, WasTrainableParams string

	// ZeroStage is the ZeRO stage the fix sets up; Offload "optimizer" or
	// "param" (parameters and optimizer states) or "".
	ZeroStage int
	Offload   string
	// HostRAM is the host memory an offload needs, as words ("160 GiB").
	HostRAM string
	// GPUs is the GPU count the fix runs on; TP and PP its layout.
	GPUs, TP, PP int
	// WasGPUs is the count the user has, set when a fix adds GPUs.
	WasGPUs int

	// MaxModelLen is the context the fix caps at, WasMaxModelLen what it
	// was, EngineMaxModelLen the engine's own estimate of what fits.
	MaxModelLen, WasMaxModelLen, EngineMaxModelLen int
	// Sequences is how many sequences to serve at once, WasSequences before.
	Sequences, WasSequences int
	// LogitsTokens and Vocab size the logits a chunked loss avoids.
	LogitsTokens, Vocab int
	// GPUMemoryUtilization is the share of the GPU to give the engine.
	GPUMemoryUtilization float64
	// BatchedTokens is the prefill token budget (TGI, vLLM, llama.cpp -ub).
	BatchedTokens int

	// GPULayers is how many layers to keep on the GPU, of TotalLayers.
	GPULayers, TotalLayers int
	// Quant is the GGUF quantisation to use ("Q4_K_M"); QuantFile the
	// model's file in it, when the paste names the file.
	Quant, QuantFile string
	// Checkpoint is a published quantised checkpoint of the model to
	// serve instead ("Qwen/Qwen3-32B-AWQ"), when one is known;
	// CheckpointModelLen the context it is served with, when capped.
	Checkpoint         string
	CheckpointModelLen int

	// Workers is the DataLoader worker count to use.
	Workers int
	// ShmSize is the shared-memory size for a container ("16g").
	ShmSize string
	// NeedBytes is the per-GPU memory a bigger GPU must have.
	NeedBytes int64
}

// Placeholders is what a snippet shows where a value is unknown: values a
// user can run as they are and then tune.
var Placeholders = Params{
	ModelID:              "your-org/your-model",
	MicroBatch:           1,
	AccumSteps:           8,
	LoRARank:             16,
	ZeroStage:            3,
	GPUs:                 8,
	TP:                   2,
	PP:                   1,
	MaxModelLen:          8192,
	Sequences:            16,
	GPUMemoryUtilization: 0.95,
	BatchedTokens:        2048,
	GPULayers:            20,
	Quant:                "Q4_K_M",
	Workers:              2,
	ShmSize:              "16g",
}

// withPlaceholders fills p's unknown values from Placeholders.
func (p Params) withPlaceholders() Params {
	q := Placeholders
	set := func(v *int, ph int) {
		if *v == 0 {
			*v = ph
		}
	}
	setS := func(v *string, ph string) {
		if *v == "" {
			*v = ph
		}
	}
	setS(&p.ModelID, q.ModelID)
	if p.MicroBatch == 0 && p.AccumSteps == 0 {
		p.MicroBatch, p.AccumSteps = q.MicroBatch, q.AccumSteps
	}
	set(&p.MicroBatch, 1)
	set(&p.AccumSteps, 1)
	set(&p.LoRARank, q.LoRARank)
	set(&p.ZeroStage, q.ZeroStage)
	set(&p.GPUs, q.GPUs)
	set(&p.TP, min(p.GPUs, q.TP))
	set(&p.PP, q.PP)
	set(&p.MaxModelLen, q.MaxModelLen)
	set(&p.Sequences, q.Sequences)
	set(&p.BatchedTokens, q.BatchedTokens)
	set(&p.GPULayers, q.GPULayers)
	setS(&p.Quant, q.Quant)
	set(&p.Workers, q.Workers)
	setS(&p.ShmSize, q.ShmSize)
	if p.GPUMemoryUtilization == 0 {
		p.GPUMemoryUtilization = q.GPUMemoryUtilization
	}
	return p
}

// gpusPerNode is the common server size (8 GPUs: DGX/HGX, p4d/p5), for
// launch lines across nodes.
const gpusPerNode = 8

// The methods below are derived values the templates use.

// Half is the 16-bit type the GPU computes in: "bf16", else "fp16".
func (p Params) Half() string {
	if p.NoBF16 {
		return "fp16"
	}
	return "bf16"
}

// TorchDtype is Half as a torch dtype.
func (p Params) TorchDtype() string {
	if p.NoBF16 {
		return "torch.float16"
	}
	return "torch.bfloat16"
}

// Dtype is Half as vLLM's --dtype and NumPy name it.
func (p Params) Dtype() string {
	if p.NoBF16 {
		return "float16"
	}
	return "bfloat16"
}

// AttnImpl is the transformers attention implementation the GPU runs:
// FlashAttention-2 needs Ampere or newer (the GPUs with bf16).
func (p Params) AttnImpl() string {
	if p.NoBF16 {
		return "sdpa"
	}
	return "flash_attention_2"
}

// Nodes is the node count when GPUs fill whole 8-GPU nodes beyond one,
// else 0 (one node).
func (p Params) Nodes() int {
	if p.GPUs > gpusPerNode && p.GPUs%gpusPerNode == 0 {
		return p.GPUs / gpusPerNode
	}
	return 0
}

// PerNode is the GPUs per node of a multi-node launch.
func (p Params) PerNode() int { return gpusPerNode }

// OffloadsOptimizer reports an offload of the optimizer states (alone or
// with the parameters).
func (p Params) OffloadsOptimizer() bool { return p.Offload == "optimizer" || p.Offload == "param" }

// OffloadsParams reports an offload of the parameters too.
func (p Params) OffloadsParams() bool { return p.Offload == "param" }

// MoreGPUs is how many GPUs a fix adds to the user's.
func (p Params) MoreGPUs() int { return max(0, p.GPUs-p.WasGPUs) }

// LoRAAlpha is the usual alpha of twice the rank.
func (p Params) LoRAAlpha() int { return 2 * p.LoRARank }

// PyBool writes GradCheckpointing as Python does.
func (p Params) PyBool() string {
	if p.GradCheckpointing {
		return "True"
	}
	return "False"
}

// NeedGiB is NeedBytes in GiB with one decimal, for a hardware detail.
func (p Params) NeedGiB() string { return units.FormatGiB(p.NeedBytes) }
