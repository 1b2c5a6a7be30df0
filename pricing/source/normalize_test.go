package source

import (
	"math"
	"testing"
)

func TestNormalizeGPU(t *testing.T) {
	tests := []struct {
		name     string
		memoryGB float64
		wantKey  string // "" for not mappable
	}{
		// H100: form factor from the name, memory or nvidia-smi spelling.
		{"H100-SXM", 0, "H100-SXM"},
		{"H100 SXM", 80, "H100-SXM"},
		{"H100_SXM", 0, "H100-SXM"},
		{"H100 SXM5", 0, "H100-SXM"},
		{"NVIDIA H100 80GB HBM3", 0, "H100-SXM"},
		{"H100 (80 GB SXM5)", 0, "H100-SXM"},
		{"HGX H100 (8 GPU)", 0, "H100-SXM"},
		{"H100-SXM-80GB", 0, "H100-SXM"},
		{"H100-MEGA", 80, "H100-SXM"},
		{"nvidia-h100-mega-80gb", 0, "H100-SXM"},
		{"H100-PCIe", 0, "H100-PCIe"},
		{"NVIDIA H100 PCIe", 80, "H100-PCIe"},
		{"H100 PCIe - Community Cloud", 0, "H100-PCIe"},
		{"H100-NVL", 0, "H100-NVL"},
		{"H100NVL", 94, "H100-NVL"},
		{"H100 NVL", 0, "H100-NVL"},
		{"H100_NVL", 0, "H100-NVL"},
		{"H100", 94, "H100-NVL"},  // only the NVL has 94 GB
		{"H100", 80, "H100-PCIe"}, // variant not stated: the slower 80 GB card
		{"H100", 0, "H100-PCIe"},
		{"nvidia-h100-80gb", 0, "H100-PCIe"},
		// H200, GH200.
		{"H200", 141, "H200"},
		{"NVIDIA H200", 0, "H200"},
		{"H200-SXM-141GB", 0, "H200"},
		{"H200 NVL", 141, ""}, // not in the catalog, not the SXM H200
		{"nvidia-h200-141gb", 0, "H200"},
		{"GH200", 96, "GH200"},
		{"NVIDIA GH200 480GB", 0, "GH200"},
		// A100: 40 or 80 GB, by name first, then by memory.
		{"A100", 40, "A100-40GB"},
		{"A100", 80, "A100-80GB"},
		{"A100", 0, "A100-40GB"}, // unknown memory: the smaller card
		{"A100-80GB", 0, "A100-80GB"},
		{"A100-80G", 0, "A100-80GB"},
		{"A100 80GB", 0, "A100-80GB"},
		{"A100-40GB", 80, "A100-40GB"}, // the name wins over a wrong memory column
		{"A100-SXM4-80GB", 0, "A100-80GB"},
		{"NVIDIA A100-SXM4-40GB", 0, "A100-40GB"},
		{"NVIDIA A100 80GB PCIe", 0, "A100-80GB"},
		{"A100 PCIe 80GB - Secure Cloud", 0, "A100-80GB"},
		{"A100 SXM 80GB - Community Cloud", 0, "A100-80GB"},
		{"A100-PCIe-40GB", 0, "A100-40GB"},
		{"A100_PCIE", 80, "A100-80GB"},
		{"A100_SXM4", 40, "A100-40GB"},
		{"A100-sxm4", 40, "A100-40GB"},
		{"nvidia-tesla-a100", 40, "A100-40GB"},
		{"nvidia-a100-80gb", 0, "A100-80GB"},
		// A10 is not the A10G, neither is an A100.
		{"A10G", 24, "A10G"},
		{"NVIDIA A10G", 0, "A10G"},
		{"A10", 24, "A10"},
		{"NVIDIA A10", 0, "A10"},
		// Ada and Ampere workstation and consumer cards.
		{"L40S", 48, "L40S"},
		{"NVIDIA L40S", 0, "L40S"},
		{"L40S-48GB", 0, "L40S"},
		{"L40", 48, "L40"},
		{"L4", 24, "L4"},
		{"nvidia-l4", 0, "L4"},
		{"RTX4090", 24, "RTX4090"},
		{"RTX 4090", 0, "RTX4090"},
		{"RTX_4090", 0, "RTX4090"},
		{"NVIDIA GeForce RTX 4090", 0, "RTX4090"},
		{"4090", 0, "RTX4090"},
		{"RTX3090", 0, "RTX3090"},
		{"NVIDIA GeForce RTX 3090", 24, "RTX3090"},
		{"RTXA6000", 48, "RTXA6000"},
		{"RTX A6000", 0, "RTXA6000"},
		{"RTX_A6000", 0, "RTXA6000"},
		{"NVIDIA RTX A6000", 0, "RTXA6000"},
		{"A6000", 48, "RTXA6000"},
		{"RTX 6000 Ada", 48, "RTX6000-Ada"},
		{"RTX 6000", 24, ""}, // the Turing Quadro, not in the catalog
		{"A40", 48, "A40"},
		// V100 16/32 by memory, T4, MI300X.
		{"V100", 16, "V100-16GB"},
		{"V100", 32, "V100-32GB"},
		{"V100", 0, "V100-16GB"},
		{"V100-16GB", 0, "V100-16GB"},
		{"V100-32GB", 0, "V100-32GB"},
		{"V100-32G", 0, "V100-32GB"},
		{"Tesla V100", 0, "V100-16GB"},
		{"Tesla_V100", 32, "V100-32GB"},
		{"V100-SXM2-16GB", 0, "V100-16GB"},
		{"Tesla V100-SXM2-32GB", 0, "V100-32GB"}, // nvidia-smi / DCGM modelName spellings
		{"NVIDIA A100-PCIE-40GB", 0, "A100-40GB"},
		{"NVIDIA H100 NVL", 0, "H100-NVL"},
		{"nvidia-tesla-v100", 16, "V100-16GB"},
		{"T4", 16, "T4"},
		{"Tesla T4", 0, "T4"},
		{"nvidia-tesla-t4", 0, "T4"},
		{"MI300X", 192, "MI300X"},
		{"AMD Instinct MI300X", 0, "MI300X"},
		{"MI300X-192GB", 0, "MI300X"},
		// Not GPUs the catalog knows.
		{"B200", 180, ""},
		{"Tesla K80", 12, ""},
		{"P100", 16, ""},
		{"nvidia-tesla-p4", 8, ""},
		{"", 0, ""},
		{"   ", 24, ""},
		{"24GB", 24, ""},
		{"H100", math.NaN(), "H100-PCIe"},
		{"A100", math.Inf(1), "A100-40GB"},
	}
	for _, tt := range tests {
		g, ok := NormalizeGPU(tt.name, tt.memoryGB)
		switch {
		case tt.wantKey == "" && ok:
			t.Errorf("NormalizeGPU(%q, %g) = %s, want not mappable", tt.name, tt.memoryGB, g.Key)
		case tt.wantKey != "" && (!ok || g.Key != tt.wantKey):
			t.Errorf("NormalizeGPU(%q, %g) = %q, %t; want %s", tt.name, tt.memoryGB, g.Key, ok, tt.wantKey)
		}
	}
}

// TestNormalizeGPUHints covers the row text that tells variants apart when a
// catalog names only "H100" or "A100" with no memory.
func TestNormalizeGPUHints(t *testing.T) {
	tests := []struct {
		name, hint string
		memoryGB   float64
		wantKey    string
	}{
		{"H100", "gpu_1x_h100_sxm5", 80, "H100-SXM"},
		{"H100", "gpu_1x_h100_pcie", 80, "H100-PCIe"},
		{"H100", "p5.48xlarge", 80, "H100-SXM"},
		{"H100", "a3-highgpu-8g", 0, "H100-SXM"},
		{"H100", "standard_nd96isr_h100_v5", 0, "H100-SXM"},
		{"H100", "BM.GPU.H100.8", 80, "H100-SXM"},
		{"H100", "1x-H100_NVL-32-65536", 0, "H100-NVL"},
		{"H100", "H100 SXM - Secure Cloud", 0, "H100-SXM"},
		{"H100", "paperspace_H100", 0, "H100-PCIe"},
		{"A100", "p4de.24xlarge", 0, "A100-80GB"},
		{"A100", "a2-ultragpu-1g", 0, "A100-80GB"},
		{"A100", "standard_nc24ads_a100_v4", 0, "A100-80GB"},
		{"A100", "1x_A100-80GB_SECURE", 0, "A100-80GB"},
		{"A100", "p4d.24xlarge", 0, "A100-40GB"},
		{"A100", "p4de.24xlarge", 40, "A100-40GB"}, // a stated memory wins over the family
	}
	for _, tt := range tests {
		g, ok := normalizeGPU(tt.name, tt.memoryGB, tt.hint)
		if !ok || g.Key != tt.wantKey {
			t.Errorf("normalizeGPU(%q, %g, %q) = %q, %t; want %s", tt.name, tt.memoryGB, tt.hint, g.Key, ok, tt.wantKey)
		}
	}
}
