package accuracy

import (
	"math"

	"github.com/vrambot/vrambot/advisor/memory"
)

// gpu_poor ("Can my GPU run this LLM?", RahulSChand/gpu_poor src/App.js at
// commit ad2fc0e, 2024-12) is the most used web calculator that also
// estimates training. gpuPoorBytes reproduces its getAllComputedData for
// the workload, in bytes (its MB are MiB): model size, gradients and
// optimizer, activations and a fixed 650 MiB "cuda + other overhead"; for
// inference a KV cache that ignores GQA. It has no notion of GPUs, ZeRO
// or LoRA rank; every tensor is 2 bytes (convertToBytes returns 2.0).
func gpuPoorBytes(w memory.Workload) float64 {
	const mib = 1 << 20
	const overheadMiB = 650
	cfg := gpuPoorConfigFor(w)
	quant := "no_quant"
	switch w.Precision {
	case memory.PrecisionNF4:
		quant = "bnb_q4"
	case memory.PrecisionInt8:
		quant = "bnb_int8"
	}
	trn := "full_trn"
	switch {
	case w.Method == memory.MethodQLoRA:
		trn, quant = "qlora", "no_quant"
	case w.Method.IsAdapter():
		trn = "lora_trn"
	}
	modelMiB := gpuPoorModelMiB(cfg.params, quant, trn)
	ctx := float64(w.SeqLen)
	batch := float64(w.Batch)
	h, l, heads, inter := cfg.hidden, cfg.layers, cfg.heads, cfg.inter

	if w.Method == memory.MethodInference {
		kv := batch * 2 * ctx * 2 * 2 * h * l / mib
		act := batch * (ctx*h*5*2 + ctx*ctx*heads*2) / mib
		return (kv + modelMiB + overheadMiB + act) * mib
	}
	const fb = 2.0
	attn := ctx*h*3*fb + ctx*h*2*fb + ctx*ctx*heads*fb + ctx*ctx*heads*4 + ctx*ctx*heads*fb + 3*ctx*h*fb
	ffn := 2*h*ctx*fb + fb*5*ctx*inter + inter*ctx*fb
	norm := ctx*4*2 + ctx*h*fb*6
	act := (attn + ffn + norm) * l * batch / mib
	if w.GradCheckpointing {
		act *= 0.15
	}
	adam := w.Optimizer != memory.OptimizerSGD
	extra := gpuPoorExtraBytes(cfg, quant, trn, ctx) * batch
	var gradOpt float64
	switch trn {
	case "qlora":
		k := 3.0
		if !adam {
			k = 1
		}
		gradOpt = l*8*h*0.5*4*k + gpuPoorExtraBytes(cfg, "qlora", "qlora", ctx)*batch
	case "full_trn":
		k := 3.0
		if !adam {
			k = 1
		}
		switch quant {
		case "bnb_int8":
			gradOpt = cfg.params*k*1 + extra
		case "bnb_q4":
			gradOpt = cfg.params*k*0.5 + extra
		default:
			gradOpt = cfg.params * k * fb
		}
	default: // lora_trn
		k := 3.0
		if !adam {
			k = 1
		}
		if quant == "no_quant" {
			gradOpt = l * 8 * h * 2 * 4 * k * 2
			if !adam {
				gradOpt = l * 8 * h * 2 * 4 * 2
			}
		} else {
			gradOpt = l*8*h*2*4*k + extra
		}
	}
	return (modelMiB + gradOpt/mib + act + overheadMiB) * mib
}

// gpuPoorConfig is what gpu_poor reads from a config.json (getParseConfig).
type gpuPoorConfig struct {
	vocab, hidden, heads, inter, layers, params float64
}

// gpuPoorConfigFor reads the workload's architecture the way gpu_poor
// reads a config.json; for a size-only model it guesses the shape as its
// getDefault does.
func gpuPoorConfigFor(w memory.Workload) gpuPoorConfig {
	m := w.Model
	if m.Scaled || m.HiddenSize == 0 {
		return gpuPoorDefault(float64(w.Params) / 1e9)
	}
	c := gpuPoorConfig{
		vocab: float64(m.VocabSize), hidden: float64(m.HiddenSize), heads: float64(m.NumAttentionHeads),
		inter: float64(m.IntermediateSize), layers: float64(m.NumLayers),
	}
	if c.inter == 0 {
		c.inter = 4 * c.hidden
	}
	// computeModelSize: vocab·h·2 + L·4h² + L·3·I·h.
	c.params = c.vocab*c.hidden*2 + c.layers*4*c.hidden*c.hidden + c.layers*3*c.inter*c.hidden
	return c
}

// gpuPoorDefault is gpu_poor's getDefault: layers and heads by size band,
// a 32k vocabulary and the hidden size that solves its parameter count.
func gpuPoorDefault(sizeB float64) gpuPoorConfig {
	heads, layers := 64.0, 80.0
	switch {
	case sizeB < 5:
		heads, layers = 32, 24
	case sizeB < 10:
		heads, layers = 32, 32
	case sizeB < 24:
		heads, layers = 40, 40
	case sizeB < 55:
		heads, layers = 64, 48
	}
	const vocab = 32000
	a := layers*4 + 3*4*layers
	b := 2.0 * vocab
	c := -sizeB * 1e9
	h := math.Ceil((-b + math.Sqrt(b*b-4*a*c)) / (2 * a))
	return gpuPoorConfig{vocab: vocab, hidden: h, heads: heads, inter: 4 * h, layers: layers, params: sizeB * 1e9}
}

// gpuPoorModelMiB is convertToMBModelSize.
func gpuPoorModelMiB(params float64, quant, trn string) float64 {
	size := params * 2 / (1 << 20)
	extra := 0.0
	if quant == "bnb_int8" || quant == "bnb_q4" || trn == "qlora" {
		extra = 0.06 * size
	}
	switch {
	case quant == "bnb_int8":
		size /= 2
	case quant == "bnb_q4":
		size /= 4
	}
	if trn == "qlora" {
		size = size/4 - params*2/(64*(1<<20))
	}
	return size + extra
}

// gpuPoorExtraBytes is getExtraMemory, gpu_poor's fitted bitsandbytes
// overhead that grows with the square root of the context.
func gpuPoorExtraBytes(c gpuPoorConfig, quant, trn string, ctx float64) float64 {
	common := (10*c.hidden + 5*c.hidden + 4*c.inter + 2*c.inter) * c.layers
	root := 1.0
	if r := ctx / 50; r > 1 {
		root = math.Sqrt(r)
	}
	switch {
	case trn == "qlora" || quant == "qlora":
		return 0.75 * common * 50 * root
	case quant == "bnb_int8":
		return 0.75 * common * 50 * root * 1.25
	case quant == "bnb_q4":
		return 1.0 * common * 50 * root
	}
	return 0
}
