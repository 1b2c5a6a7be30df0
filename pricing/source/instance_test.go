package source

import (
	"testing"
)

// TestInstanceFamilies covers the instance types whose GPU variant the
// provider fixes when its catalog names only "H100" or "A100" with no memory.
func TestInstanceFamilies(t *testing.T) {
	tests := []struct {
		gpu, instance string
		memoryGB      float64
		wantKey       string
	}{
		{"H100", "p5.48xlarge", 80, "H100-SXM"},
		{"H100", "a3-highgpu-8g", 0, "H100-SXM"},
		{"H100", "Standard_ND96isr_H100_v5", 0, "H100-SXM"},
		{"H100", "BM.GPU.H100.8", 80, "H100-SXM"},
		{"H100", "paperspace_H100", 0, "H100-PCIe"},
		{"A100", "p4de.24xlarge", 0, "A100-80GB"},
		{"A100", "a2-ultragpu-1g", 0, "A100-80GB"},
		{"A100", "Standard_NC24ads_A100_v4", 0, "A100-80GB"},
		{"A100", "p4d.24xlarge", 0, "A100-40GB"},
		{"A100", "p4de.24xlarge", 40, "A100-40GB"}, // a stated memory wins over the family
	}
	for _, tt := range tests {
		o, ok := row{provider: "p", instance: tt.instance, gpuName: tt.gpu, memoryGB: tt.memoryGB, hint: tt.instance,
			count: 1, price: 1, asOf: "2026-11-29"}.offer()
		if !ok || o.GPUKey != tt.wantKey {
			t.Errorf("%s on %s (%g GB) = %q, %v; want %s", tt.gpu, tt.instance, tt.memoryGB, o.GPUKey, ok, tt.wantKey)
		}
	}
}
