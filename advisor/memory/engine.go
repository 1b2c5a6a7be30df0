package memory

import (
	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/serving"
)

// ServingDeployment is w as a deployment of its serving engine on gpu:
// the model (its checkpoint's quantisation, or the precision's: int8 and
// nf4 are bitsandbytes, fp32 doubles every weight), parallelism, KV dtype,
// context (seq_len is max_model_len) and the engine settings. The load is
// Users, else the batch when it is more than one sequence.
func ServingDeployment(w Workload, gpu catalog.GPU) serving.Deployment {
	m := w.Model
	dense := 2.0
	if m.Quant == nil {
		switch w.Precision {
		case PrecisionFP32:
			dense = 4
		case PrecisionInt8:
			m.Quant = arch.NewQuantization("int8", "bitsandbytes", arch.Int8Bytes, arch.LinearGroups)
		case PrecisionNF4:
			m.Quant = arch.NewQuantization("nf4", "bitsandbytes", arch.NF4Bytes, arch.LinearGroups)
		}
	}
	kv := serving.KVAuto
	switch w.KVCacheDtype {
	case "fp8":
		kv = serving.KVFP8
	case "int8":
		kv = serving.KVInt8
	}
	return serving.Deployment{
		Engine:              serving.Engine(w.Engine),
		Model:               m,
		GPU:                 gpu,
		TP:                  w.TP,
		PP:                  w.PP,
		DenseBytes:          dense,
		KVCacheDtype:        kv,
		MemoryFraction:      w.GPUMemoryUtilization,
		MaxModelLen:         w.SeqLen,
		MaxNumSeqs:          w.MaxNumSeqs,
		MaxNumBatchedTokens: w.MaxNumBatchedTokens,
		Users:               ServingLoad(w),
		Generation:          serving.GenerationOf(w.EngineVersion),
		Version:             w.EngineVersion,
		GPULayers:           w.GPULayers,
	}
}

// ServingLoad is the concurrent sequences a serving workload asks for:
// users=, else a batch of more than one (bs= under a serving engine is
// the sequences in flight), else none.
func ServingLoad(w Workload) int {
	if w.Users > 0 {
		return w.Users
	}
	if w.Batch > 1 {
		return w.Batch
	}
	return 0
}

// servingEstimate is the breakdown of a serving workload in the engine's
// own terms: weights and activation peak as the engine profiles them, the
// KV cache of the load, and as Total the smallest GPU on which the engine
// starts and holds it (see Breakdown).
func servingEstimate(w Workload) Breakdown {
	d := ServingDeployment(w, catalog.GPU{BF16: true, FP8: true})
	load := max(1, ServingLoad(w))
	total, r, ok := serving.Requirement(d, load)
	if !ok {
		r = serving.Plan(d)
		total = int64(serving.MaxParallel) << 40
	}
	b := Breakdown{
		WeightsBytes:     r.WeightsBytes,
		ActivationsBytes: r.ActivationBytes,
		KVCacheBytes:     sat(serving.LoadKVBytes(r, load)),
		TotalBytes:       total,
	}
	b.PeakAllocatedBytes = sat(float64(b.WeightsBytes) + float64(b.ActivationsBytes) + float64(b.KVCacheBytes))
	b.TotalBytes = max(b.TotalBytes, b.PeakAllocatedBytes)
	b.RuntimeOverheadBytes = max(0, b.TotalBytes-b.PeakAllocatedBytes)
	return b
}
