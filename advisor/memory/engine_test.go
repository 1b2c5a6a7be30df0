package memory

import (
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/serving"
)

// TestServingTotal: under a serving engine the total is the smallest GPU
// on which the engine (its own arithmetic, advisor/serving) starts and
// holds the requested batch × seq_len, and the KV cache is that load's.
func TestServingTotal(t *testing.T) {
	w := Workload{ModelName: "llama-3-8b", Method: MethodInference, Precision: PrecisionBF16, Batch: 8, SeqLen: 8192, Engine: "vllm"}
	b := Estimate(w)
	if b.KVCacheBytes != 8*8192*131072 {
		t.Errorf("KV %d, want 8·8192·128 KiB", b.KVCacheBytes)
	}
	rw := Resolve(w)
	holds := func(bytes int64) bool {
		g := catalog.GPU{Name: "test", UsableBytes: bytes, MemoryBytes: bytes, BF16: true, FP8: true}
		return serving.HoldsLoad(8)(serving.Plan(ServingDeployment(rw, g)))
	}
	if !holds(b.TotalBytes) {
		t.Errorf("vLLM does not hold 8 × 8192 tokens on the %d bytes Estimate says suffice", b.TotalBytes)
	}
	if holds(b.TotalBytes - 256<<20) {
		t.Errorf("Estimate's %d bytes are not the smallest GPU that holds the load", b.TotalBytes)
	}
	if b.WeightsBytes < 16e9 || b.WeightsBytes > 16.2e9 {
		t.Errorf("weights %d, want vLLM's ~14.96 GiB for Llama-3-8B", b.WeightsBytes)
	}
}

// TestServingDeployment maps precision and KV dtype onto the engine's terms.
func TestServingDeployment(t *testing.T) {
	w := Resolve(Workload{ModelName: "llama-3-8b", Method: MethodInference, Precision: PrecisionNF4, KVCacheDtype: "fp8", Engine: "vllm", Users: 12, TP: 2, GPUs: 2})
	d := ServingDeployment(w, catalog.GPU{})
	if d.Model.Quant == nil || d.Model.Quant.Method != "nf4" || d.KVCacheDtype != serving.KVFP8 || d.Users != 12 || d.TP != 2 || d.Engine != serving.EngineVLLM {
		t.Errorf("deployment %+v", d)
	}
	if d := ServingDeployment(Resolve(Workload{ModelName: "llama-3-8b", Method: MethodInference, Precision: PrecisionFP32, Batch: 4, Engine: "sglang"}), catalog.GPU{}); d.DenseBytes != 4 || d.Users != 4 {
		t.Errorf("fp32 batch 4: dense %v users %d", d.DenseBytes, d.Users)
	}
}
