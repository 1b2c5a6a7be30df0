package memory

import (
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// FLOPs per token per parameter a token passes through (docs/memory-model.md §7.1).
const (
	// forwardFLOPsPerParam: a multiply and an add per weight (Kaplan et
	// al. 2020, PaLM appendix B).
	forwardFLOPsPerParam = 2
	// backwardFLOPsPerParam: the gradient of the activations and of the
	// weights, each as costly as the forward (the 4 of 6N).
	backwardFLOPsPerParam = 4
	// inputGradFLOPsPerParam: the activation gradient alone, all a frozen
	// weight needs (LoRA: ≈ 4N per token, plus the adapters' 6A).
	inputGradFLOPsPerParam = 2
)

// JobFLOPs is the compute of w over w.Tokens tokens (training) or
// generated tokens (inference), with the formula that gave it: per token,
// full fine-tuning 6N; LoRA, QLoRA and DoRA 4N through the frozen base plus
// 6 per adapter parameter; freeze 2N plus 4 per trained parameter;
// checkpointing adds the recomputed forward (2N for full checkpointing,
// the share of matmuls the per-op policy drops for selective); inference
// 2N. N counts the parameters a token passes through: the active experts
// of a mixture of experts (arch.Model.ActiveParams). w is resolved first.
func JobFLOPs(w Workload) (flops float64, formula string) {
	w = resolve(w, false)
	if w.Tokens <= 0 {
		return 0, ""
	}
	n := float64(w.Model.ActiveParams())
	if w.Model.Params > 0 {
		n *= float64(w.Params) / float64(w.Model.Params)
	}
	trained := float64(w.TrainableParams)
	var perToken float64
	var terms []string
	switch {
	case w.Method == MethodInference:
		perToken = forwardFLOPsPerParam * n
		terms = append(terms, "2N")
	case w.Method == MethodFull:
		perToken = (forwardFLOPsPerParam + backwardFLOPsPerParam) * n
		terms = append(terms, "6N")
	case w.Method == MethodFreeze:
		perToken = forwardFLOPsPerParam*n + backwardFLOPsPerParam*trained
		terms = append(terms, "2N + 4·trained")
	default:
		perToken = (forwardFLOPsPerParam+inputGradFLOPsPerParam)*n + (forwardFLOPsPerParam+backwardFLOPsPerParam)*trained
		terms = append(terms, "4N + 6·adapters")
	}
	switch w.Checkpointing {
	case CheckpointFull, CheckpointOffloaded:
		perToken += forwardFLOPsPerParam * n
		terms = append(terms, "2N recomputed")
	case CheckpointSelective:
		share := selectiveRecomputeShare(w.Model)
		perToken += forwardFLOPsPerParam * n * share
		terms = append(terms, fmt.Sprintf("%.0f%% of 2N recomputed", 100*share))
	}
	active := ""
	if w.Model.IsMoE() {
		active = ", N the active parameters"
	}
	return perToken * float64(w.Tokens), fmt.Sprintf("(%s) × %s tokens%s", strings.Join(terms, " + "), catalog.FormatSize(w.Tokens), active)
}

// selectiveRecomputeShare is the share of the blocks' matmul FLOPs that
// per-op selective checkpointing recomputes: the 2nd, 4th and 6th matmuls
// of the forward order (k, o and up; selectiveBytesPerToken), weighted by
// the layers of each group.
func selectiveRecomputeShare(m catalog.Model) float64 {
	var all, dropped float64
	for g := range m.NumLayerGroups() {
		ls := shapeAt(m, g)
		q, kv, i := ls.q, ls.kv, ls.i
		a, d := 2*q+2*kv+2*i, kv+q+i
		if ls.gated {
			a += i
		} else {
			d = kv + q
		}
		all += ls.layers * a
		dropped += ls.layers * d
	}
	if all <= 0 {
		return 0
	}
	return dropped / all
}

// GPUClass groups GPUs by the training utilisation they reach.
type GPUClass string

// Utilisation is the share of a GPU's dense bf16 (fp16 tensor) peak that a
// training job's executed FLOPs reach, for one class of GPU, with the
// measurement it is taken from (docs/memory-model.md §7.2).
type Utilisation struct {
	Class  GPUClass `json:"class"`
	Share  float64  `json:"share"`
	Source string   `json:"source"`
}

// The utilisation table. Each figure is a published measurement of
// training on that class of GPU; where a class has none, the nearest
// measured one is used and the source says so.
var (
	utilHopper = Utilisation{Class: "hopper", Share: 0.36,
		Source: "torchtitan, Llama 3.1 8B FSDP on 8-128 H100: 33-39% MFU"}
	utilA100 = Utilisation{Class: "a100", Share: 0.50,
		Source: "torchtitan, Llama 3 8B/70B FSDP on 64 A100: 50-58% MFU"}
	utilPreAmpere = Utilisation{Class: "volta-turing", Share: 0.30,
		Source: "Megatron-LM (Shoeybi et al. 2019): 39 TFLOPS on one V100, 30% of peak"}
	utilGDDR = Utilisation{Class: "gddr", Share: 0.30,
		Source: "no published MFU for GDDR cards (RTX, L-series, A10, A40, A6000): the V100 figure of Megatron-LM"}
	utilOther = Utilisation{Class: "other", Share: 0.30,
		Source: "no published training MFU for this GPU: the V100 figure of Megatron-LM"}
)

// UtilisationFor is the training utilisation assumed for gpu.
func UtilisationFor(g catalog.GPU) Utilisation {
	key := strings.ToUpper(g.Key)
	switch {
	case strings.HasPrefix(key, "H100"), strings.HasPrefix(key, "H200"), strings.HasPrefix(key, "GH200"):
		return utilHopper
	case strings.HasPrefix(key, "A100"):
		return utilA100
	case strings.HasPrefix(key, "V100"), key == "T4":
		return utilPreAmpere
	case g.Vendor == "NVIDIA" && g.BandwidthGBps > 0 && g.BandwidthGBps < 1200:
		return utilGDDR
	}
	return utilOther
}
