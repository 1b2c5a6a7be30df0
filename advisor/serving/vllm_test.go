package serving

import (
	"math"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// TestVLLMProfileTerms: the activation peak and non-torch memory of
// vLLM's profile against the terms its 0.19 logs print ("torch peak
// memory increase", "non-torch forward increase memory";
// testdata/SOURCES.md, llm-d-planner), within 10%; and the release-bound
// sampler of 0.8-0.16.
func TestVLLMProfileTerms(t *testing.T) {
	for _, c := range []struct {
		name, model, gpu string
		tp               int
		version          string
		act, nonTorch    float64 // GiB
	}{
		{"dense, sampler-bound", "llama-3.1-8b", "h100", 1, "", 1.89, 0.25},
		{"large vocabulary", "gemma-2-9b", "h100", 1, "", 3.65, 0.25},
		{"MoE workspace kept for the sampler", "qwen3-30b-a3b", "h100", 1, "", 2.68, 0.25},
		{"MXFP4 experts keep no workspace", "gpt-oss-20b", "h100", 2, "", 2.87, 2.07},
		{"NVSwitch all-reduce buffers", "qwen2.5-72b", "h100", 2, "", 2.29, 2.09},
		{"0.15's sorting sampler", "qwen3-14b", "h100", 1, "0.15.0", 5.64, 0.13},
	} {
		m, ok := catalog.LookupModel(c.model)
		if !ok {
			t.Fatalf("%s: no model %q", c.name, c.model)
		}
		g, _ := catalog.LookupGPU(c.gpu)
		d := Deployment{Engine: EngineVLLM, Model: m, GPU: g, TP: c.tp, PP: 1, DenseBytes: 2, MemoryFraction: 0.95, MaxModelLen: 8192, Version: c.version, Generation: GenerationOf(c.version)}
		d = vllmDefaults(d, func(string, ...any) {})
		act := activationPeak(m, d, true) / (1 << 30)
		if math.Abs(act-c.act) > 0.1*c.act {
			t.Errorf("%s: activation peak %.2f GiB, logged %.2f", c.name, act, c.act)
		}
		if nt := vllmNonTorch(d) / (1 << 30); math.Abs(nt-c.nonTorch) > math.Max(0.1*c.nonTorch, 0.15) {
			t.Errorf("%s: non-torch %.2f GiB, logged %.2f", c.name, nt, c.nonTorch)
		}
	}
	// PCIe cards and A100s have no NVLink SHARP: the smaller TP buffers.
	for _, name := range []string{"a100", "l4", "rtx4090", "h100-pcie", "rtxpro6000"} {
		g, _ := catalog.LookupGPU(name)
		if nvSwitched(g) {
			t.Errorf("%s counted as NVSwitch-connected", name)
		}
	}
	for _, name := range []string{"h100", "h200", "b200", "gb200"} {
		g, _ := catalog.LookupGPU(name)
		if !nvSwitched(g) {
			t.Errorf("%s not counted as NVSwitch-connected", name)
		}
	}
}
