package catalog

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLookupGPU(t *testing.T) {
	tests := []struct{ in, key string }{
		{"a100", "A100-80GB"}, {"A100", "A100-80GB"}, {"a100-80gb", "A100-80GB"}, {"A100 80GB", "A100-80GB"},
		{"a100-40gb", "A100-40GB"}, {"a100-40g", "A100-40GB"}, {"a100 40gb", "A100-40GB"},
		{"h100", "H100-SXM"}, {"H100", "H100-SXM"}, {"h100-pcie", "H100-PCIe"}, {"H100-NVL", "H100-NVL"},
		{"h200", "H200"}, {"l4", "L4"}, {"l40s", "L40S"}, {"a10g", "A10G"}, {"a10", "A10"}, {"t4", "T4"},
		{"v100", "V100-16GB"}, {"v100-32gb", "V100-32GB"}, {"3090", "RTX3090"}, {"rtx3090", "RTX3090"},
		{"4090", "RTX4090"}, {"rtx-4090", "RTX4090"}, {"RTX 4090", "RTX4090"}, {"NVIDIA GeForce RTX 4090", "RTX4090"},
		{"a6000", "RTXA6000"}, {"rtx-a6000", "RTXA6000"}, {"mi300x", "MI300X"}, {"gh200", "GH200"},
		{"NVIDIA A100", "A100-80GB"}, {"Tesla T4", "T4"},
		// nvidia-smi / DCGM modelName spellings.
		{"NVIDIA A100-SXM4-80GB", "A100-80GB"}, {"NVIDIA H100 80GB HBM3", "H100-SXM"}, {"Tesla V100-SXM2-16GB", "V100-16GB"},
		{"NVIDIA A100-SXM4-40GB", "A100-40GB"}, {"NVIDIA RTX A6000", "RTXA6000"}, {"NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada"},
		{"AMD Instinct MI300X", "MI300X"}, {"NVIDIA GH200 480GB", "GH200"}, {"NVIDIA H100 NVL", "H100-NVL"},
		// The GPUs of 2025-26 and the cards people still run on (issue 10).
		{"b200", "B200"}, {"B300", "B300"}, {"gb200", "GB200"}, {"gb300", "GB300"}, {"5090", "RTX5090"},
		{"rtx 5080", "RTX5080"}, {"rtx pro 6000", "RTXPRO6000"}, {"RTX PRO 6000 Blackwell", "RTXPRO6000"},
		{"h20", "H20"}, {"l20", "L20"}, {"mi325x", "MI325X"}, {"MI355X", "MI355X"}, {"gaudi3", "Gaudi3"},
		{"Gaudi 3", "Gaudi3"}, {"m4-max-128gb", "M4-Max-128GB"}, {"rtx 4060", "RTX4060"}, {"4070", "RTX4070"},
		{"rtx4080", "RTX4080"}, {"3060", "RTX3060"}, {"rtx 3060 12gb", "RTX3060"}, {"3080", "RTX3080"},
		{"2080 ti", "RTX2080Ti"}, {"2080ti", "RTX2080Ti"}, {"p100", "P100"}, {"a4000", "RTXA4000"},
		{"rtx a5000", "RTXA5000"}, {"h200 nvl", "H200-NVL"},
		// The accelerators of 2026 people name (issue 25). A bare "rtx pro
		// 5000" is the 48 GB card; the 72 GB one is named with its memory.
		{"gb10", "GB10"}, {"NVIDIA GB10", "GB10"}, {"dgx spark", "GB10"}, {"DGX-Spark", "GB10"},
		{"rtx pro 5000", "RTXPRO5000"}, {"RTX PRO 5000 Blackwell", "RTXPRO5000"}, {"rtx pro 5000 72gb", "RTXPRO5000-72GB"},
		{"rtx pro 4500", "RTXPRO4500"}, {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTXPRO6000"}, {"rtx pro 4000 blackwell", "RTXPRO4000"}, {"mi350x", "MI350X"}, {"AMD Instinct MI350X", "MI350X"},
		// Cards of public vLLM and OOM reports. A bare "4060 ti" is the 16 GB
		// card LLM users run; the 8 GB one is named with its memory.
		{"4060ti", "RTX4060Ti-16GB"}, {"4060-ti", "RTX4060Ti-16GB"}, {"4060 ti", "RTX4060Ti-16GB"},
		{"rtx4060ti", "RTX4060Ti-16GB"}, {"rtx 4060 ti", "RTX4060Ti-16GB"}, {"RTX-4060-Ti", "RTX4060Ti-16GB"},
		{"geforce rtx 4060 ti", "RTX4060Ti-16GB"}, {"NVIDIA GeForce RTX 4060 Ti", "RTX4060Ti-16GB"},
		{"4060ti-16gb", "RTX4060Ti-16GB"}, {"4060 ti 16gb", "RTX4060Ti-16GB"}, {"rtx 4060 ti 16gb", "RTX4060Ti-16GB"},
		{"4060ti-8gb", "RTX4060Ti-8GB"}, {"4060 ti 8gb", "RTX4060Ti-8GB"}, {"rtx 4060 ti 8gb", "RTX4060Ti-8GB"},
		{"4060", "RTX4060"}, {"RTX4060", "RTX4060"}, {"geforce rtx 4060", "RTX4060"}, // the plain 4060 is unchanged
		{"4070 ti", "RTX4070Ti"}, {"4070ti", "RTX4070Ti"}, {"rtx 4070 ti", "RTX4070Ti"},
		{"4070 ti super", "RTX4070TiSUPER"}, {"4070tisuper", "RTX4070TiSUPER"}, {"4070tis", "RTX4070TiSUPER"},
		{"rtx 4070 ti super", "RTX4070TiSUPER"}, {"NVIDIA GeForce RTX 4070 Ti SUPER", "RTX4070TiSUPER"},
		{"4070 super", "RTX4070SUPER"}, {"4070s", "RTX4070SUPER"}, {"rtx-4070-super", "RTX4070SUPER"},
		{"4080 super", "RTX4080SUPER"}, {"4080s", "RTX4080SUPER"}, {"rtx 4080 super", "RTX4080SUPER"},
		{"4070", "RTX4070"}, {"rtx 4080", "RTX4080"}, // and neither is the plain 4070 or 4080
		{"3090 ti", "RTX3090Ti"}, {"3090ti", "RTX3090Ti"}, {"rtx 3090 ti", "RTX3090Ti"}, {"3090", "RTX3090"},
		{"3080 ti", "RTX3080Ti"}, {"rtx3080ti", "RTX3080Ti"}, {"3080", "RTX3080"},
		{"3070", "RTX3070"}, {"rtx 3070", "RTX3070"}, {"NVIDIA GeForce RTX 3070", "RTX3070"},
		{"5060 ti", "RTX5060Ti-16GB"}, {"5060ti", "RTX5060Ti-16GB"}, {"rtx 5060 ti 16gb", "RTX5060Ti-16GB"},
		{"5070 ti", "RTX5070Ti"}, {"rtx5070ti", "RTX5070Ti"}, {"5070", "RTX5070"}, {"rtx 5070", "RTX5070"},
		{"h800", "H800"}, {"H800", "H800"}, {"nvidia h800", "H800"}, {"NVIDIA H800 80GB HBM3", "H800"}, {"h800-sxm", "H800"},
		{"a800", "A800-80GB"}, {"NVIDIA A800-SXM4-80GB", "A800-80GB"}, {"NVIDIA A800 80GB PCIe", "A800-80GB"},
		{"a30", "A30"}, {"NVIDIA A30", "A30"},
		{"p40", "P40"}, {"tesla p40", "P40"}, {"Tesla P40", "P40"}, {"p100", "P100"},
		{"1080", "GTX1080"}, {"gtx 1080", "GTX1080"}, {"NVIDIA GeForce GTX 1080", "GTX1080"},
		{"1080ti", "GTX1080Ti"}, {"1080 ti", "GTX1080Ti"}, {"gtx 1080 ti", "GTX1080Ti"}, {"gtx1080ti", "GTX1080Ti"},
		{"GeForce GTX 1080 Ti", "GTX1080Ti"},
		{"titan rtx", "TITANRTX"}, {"titanrtx", "TITANRTX"}, {"NVIDIA TITAN RTX", "TITANRTX"}, {"2080 ti", "RTX2080Ti"},
	}
	for _, tt := range tests {
		g, ok := LookupGPU(tt.in)
		if !ok || g.Key != tt.key {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", tt.in, g.Key, ok, tt.key)
		}
	}
	for _, bad := range []string{"", "a1000", "24gb", "h1000", "\x00", "b100", "5050", "5060", "3060ti", "4060ti-12gb", "a800-40gb", "h800 pcie", "titan", "spark", "gb20", "rtx pro 3000"} {
		if g, ok := LookupGPU(bad); ok {
			t.Errorf("LookupGPU(%q) = %q, want not found", bad, g.Key)
		}
	}
}

func TestGPUAliasesDoNotCollide(t *testing.T) {
	seen := map[string]string{}
	for _, g := range gpuList {
		for _, k := range gpuKeys(g) {
			if prev, ok := seen[compact(k)]; ok && prev != g.Key {
				t.Errorf("alias %q of %s also names %s", k, g.Key, prev)
			}
			seen[compact(k)] = g.Key
		}
	}
}

func TestGPUCatalogRows(t *testing.T) {
	for _, g := range GPUs() {
		// Unified memory (Apple) leaves the OS its share: only the working-set
		// limit is usable, so it is exempt from the discrete-card bound.
		low := 0.88
		if g.Vendor == "Apple" {
			low = 0.5
		}
		if g.UsableBytes >= g.MemoryBytes || float64(g.UsableBytes) < low*float64(g.MemoryBytes) {
			t.Errorf("%s: usable %d vs marketed %d", g.Key, g.UsableBytes, g.MemoryBytes)
		}
		if g.Source == "" || g.Name == "" || g.BandwidthGBps <= 0 || g.DenseTFLOPS <= 0 || g.Family == "" {
			t.Errorf("%s: missing name, source, family, bandwidth or TFLOPS", g.Key)
		}
		if g.FP8 && !g.BF16 {
			t.Errorf("%s: fp8 without bf16: no such card", g.Key)
		}
		// NVIDIA numbers every architecture; the feature columns follow it
		// (bf16 from Ampere, 8.0; fp8 from Ada, 8.9).
		cc := g.ComputeCapability
		switch {
		case g.Vendor != "NVIDIA" && cc != 0:
			t.Errorf("%s: compute capability %.1f on a %s card", g.Key, cc, g.Vendor)
		case g.Vendor == "NVIDIA" && (cc < 6 || cc > 12.1):
			t.Errorf("%s: compute capability %.1f", g.Key, cc)
		case g.Vendor == "NVIDIA" && (g.BF16 != (cc >= 8) || g.FP8 != (cc >= 8.9)):
			t.Errorf("%s: bf16 %v, fp8 %v at compute capability %.1f", g.Key, g.BF16, g.FP8, cc)
		}
		// Every card is found by its own key and name, as the price sources
		// and the grammar spell them.
		for _, name := range []string{g.Key, g.Name} {
			if got, ok := LookupGPU(name); !ok || got.Key != g.Key {
				t.Errorf("LookupGPU(%q) = %q, %v", name, got.Key, ok)
			}
			if got, ok := NormalizeGPU(name, 0, ""); !ok || got.Family != g.Family {
				t.Errorf("NormalizeGPU(%q) = %q, %v; want family %s", name, got.Key, ok, g.Family)
			}
		}
	}
	a100, _ := LookupGPU("a100")
	if a100.UsableBytes != 84987740160 { // 79.15 GiB as vLLM and PyTorch report it
		t.Errorf("A100 80GB usable = %d", a100.UsableBytes)
	}
	// Variants of one family must differ in their variant or their memory,
	// or NormalizeGPU could not tell them apart.
	type shape struct {
		family, variant string
		memory          int64
	}
	seen := map[shape]string{}
	for _, g := range GPUs() {
		s := shape{g.Family, g.Variant, g.MemoryBytes}
		if prev, ok := seen[s]; ok {
			t.Errorf("%s and %s: same family, variant and memory", prev, g.Key)
		}
		seen[s] = g.Key
	}
}

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
		// H200 and its NVL card, GH200.
		{"H200", 141, "H200"},
		{"NVIDIA H200", 0, "H200"},
		{"H200-SXM-141GB", 0, "H200"},
		{"H200 NVL", 141, "H200-NVL"},
		{"NVIDIA H200 NVL", 0, "H200-NVL"},
		{"nvidia-h200-141gb", 0, "H200"}, // variant not stated: not the NVL pair card
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
		{"RTX4090", 48, ""}, // a modified 48 GB card is not the catalog's 24 GB one
		{"RTX3090", 0, "RTX3090"},
		{"NVIDIA GeForce RTX 3090", 24, "RTX3090"},
		{"RTXA6000", 48, "RTXA6000"},
		{"RTX A6000", 0, "RTXA6000"},
		{"RTX_A6000", 0, "RTXA6000"},
		{"NVIDIA RTX A6000", 0, "RTXA6000"},
		{"A6000", 48, "RTXA6000"},
		{"RTX 6000 Ada", 48, "RTX6000-Ada"},
		{"RTX6000-Ada", 0, "RTX6000-Ada"},
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
		{"Tesla V100-SXM2-32GB", 0, "V100-32GB"},
		{"NVIDIA A100-PCIE-40GB", 0, "A100-40GB"},
		{"NVIDIA H100 NVL", 0, "H100-NVL"},
		{"nvidia-tesla-v100", 16, "V100-16GB"},
		{"T4", 16, "T4"},
		{"Tesla T4", 0, "T4"},
		{"nvidia-tesla-t4", 0, "T4"},
		{"MI300X", 192, "MI300X"},
		{"AMD Instinct MI300X", 0, "MI300X"},
		{"MI300X-192GB", 0, "MI300X"},
		// The 2025-26 cards as providers and nvidia-smi spell them.
		{"B200", 180, "B200"},
		{"NVIDIA B200", 0, "B200"},
		{"B200-SXM-180GB", 0, "B200"},
		{"NVIDIA B200 Blackwell", 0, "B200"},
		{"HGX B300", 0, "B300"},
		{"NVIDIA GB200", 186, "GB200"},
		{"GB200-NVL-186GB", 0, "GB200"},
		{"GB300", 0, "GB300"},
		{"RTX5090", 32, "RTX5090"},
		{"NVIDIA GeForce RTX 5090", 0, "RTX5090"},
		{"RTX 5080", 16, "RTX5080"},
		{"RTXPRO6000S", 96, "RTXPRO6000"},
		{"RTXPro6000", 96, "RTXPRO6000"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", 0, "RTXPRO6000"},
		{"NVIDIA H20", 96, "H20"},
		{"NVIDIA L20", 0, "L20"},
		{"AMD Instinct MI325X", 256, "MI325X"},
		{"MI355X_288GB", 0, "MI355X"},
		{"Intel Gaudi 3", 128, "Gaudi3"},
		{"Apple M4 Max 128GB", 0, "M4-Max-128GB"},
		{"M4 Max", 64, ""}, // the 64 GB machine is not the catalog's 128 GB one
		{"NVIDIA GeForce RTX 4080", 16, "RTX4080"},
		{"RTX4070", 12, "RTX4070"},
		{"RTX4070", 16, ""}, // SkyPilot names a 4070 Ti Super "RTX4070": 16 GB is not the 12 GB card
		{"RTX4060", 8, "RTX4060"},
		{"RTX4060", 16, ""}, // nor a 16 GB 4060 Ti the 8 GB 4060
		{"RTX3080", 10, "RTX3080"},
		{"RTX3060", 12, "RTX3060"},
		{"RTX3060", 8, ""}, // the 8 GB 3060 Ti
		{"NVIDIA GeForce RTX 2080 Ti", 0, "RTX2080Ti"},
		{"Tesla P100-PCIE-16GB", 0, "P100"},
		{"nvidia-tesla-p100", 16, "P100"},
		{"NVIDIA RTX A4000", 0, "RTXA4000"},
		{"A5000", 24, "RTXA5000"},
		// Cards of public vLLM and OOM reports, as nvidia-smi and providers
		// spell them. A 4060 Ti of unknown memory is the 8 GB one (the card
		// that promises least), as a bare A100 is the 40 GB one.
		{"NVIDIA GeForce RTX 4060 Ti", 16, "RTX4060Ti-16GB"},
		{"NVIDIA GeForce RTX 4060 Ti", 8, "RTX4060Ti-8GB"},
		{"RTX4060Ti", 16, "RTX4060Ti-16GB"},
		{"RTX 4060 Ti", 0, "RTX4060Ti-8GB"},
		{"RTX 4060 Ti 16GB", 0, "RTX4060Ti-16GB"},
		{"rtx4060ti-16gb", 0, "RTX4060Ti-16GB"},
		{"RTX 4060", 8, "RTX4060"},
		{"NVIDIA GeForce RTX 4070 Ti", 12, "RTX4070Ti"},
		{"NVIDIA GeForce RTX 4070 Ti SUPER", 16, "RTX4070TiSUPER"},
		{"RTX4070TiSuper", 0, "RTX4070TiSUPER"},
		{"NVIDIA GeForce RTX 4070 SUPER", 12, "RTX4070SUPER"},
		{"RTX 4080 SUPER", 16, "RTX4080SUPER"},
		{"NVIDIA GeForce RTX 4080", 16, "RTX4080"},
		{"NVIDIA GeForce RTX 3090 Ti", 24, "RTX3090Ti"},
		{"RTX 3080 Ti", 12, "RTX3080Ti"},
		{"RTX3070", 8, "RTX3070"},
		{"NVIDIA GeForce RTX 5060 Ti", 16, "RTX5060Ti-16GB"},
		{"RTX 5060 Ti", 8, ""}, // the 8 GB 5060 Ti is not in the catalog
		{"NVIDIA GeForce RTX 5070 Ti", 16, "RTX5070Ti"},
		{"RTX5070", 12, "RTX5070"},
		{"NVIDIA H800", 80, "H800"},
		{"NVIDIA H800 80GB HBM3", 0, "H800"},
		{"H800 SXM5", 0, "H800"},
		{"NVIDIA A800-SXM4-80GB", 0, "A800-80GB"},
		{"NVIDIA A800 80GB PCIe", 0, "A800-80GB"},
		{"A800", 40, ""}, // the 40 GB A800 is not in the catalog
		{"NVIDIA A30", 24, "A30"},
		{"Tesla P40", 24, "P40"},
		{"nvidia-tesla-p40", 0, "P40"},
		{"NVIDIA GeForce GTX 1080 Ti", 11, "GTX1080Ti"},
		{"GeForce GTX 1080", 8, "GTX1080"},
		{"NVIDIA TITAN RTX", 24, "TITANRTX"},
		{"Titan RTX 24GB", 0, "TITANRTX"},
		// Not GPUs the catalog knows.
		{"Tesla K80", 12, ""},
		{"p100a", 28, ""}, // a Tenstorrent card, not a P100
		{"nvidia-tesla-p4", 8, ""},
		{"H20", 141, ""},
		{"", 0, ""},
		{"   ", 24, ""},
		{"24GB", 24, ""},
		{"H100", math.NaN(), "H100-PCIe"},
		{"A100", math.Inf(1), "A100-40GB"},
	}
	for _, tt := range tests {
		g, ok := NormalizeGPU(tt.name, tt.memoryGB, "")
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
		{"H100", "1x-H100_NVL-32-65536", 0, "H100-NVL"},
		{"H100", "H100 SXM - Secure Cloud", 0, "H100-SXM"},
		{"H100", "paperspace_H100", 0, "H100-PCIe"},
		{"H100 PCIe", "gpu_1x_h100_sxm5", 0, "H100-PCIe"}, // the name's variant wins
		{"A100", "1x_A100-80GB_SECURE", 0, "A100-80GB"},
		{"A100", "a2-highgpu-8g", 0, "A100-40GB"},        // "8g" in an instance name is a GPU count
		{"A100", "1x_A100-80GB_SECURE", 40, "A100-40GB"}, // a stated memory wins over the hint
	}
	for _, tt := range tests {
		g, ok := NormalizeGPU(tt.name, tt.memoryGB, tt.hint)
		if !ok || g.Key != tt.wantKey {
			t.Errorf("NormalizeGPU(%q, %g, %q) = %q, %t; want %s", tt.name, tt.memoryGB, tt.hint, g.Key, ok, tt.wantKey)
		}
	}
}

func TestFindGPUs(t *testing.T) {
	tests := []struct {
		in   string
		want []string // keys in catalog order; nil for not found
	}{
		{"h100", []string{"H100-SXM", "H100-PCIe", "H100-NVL"}},
		{"H100", []string{"H100-SXM", "H100-PCIe", "H100-NVL"}},
		{"nvidia h100", []string{"H100-SXM", "H100-PCIe", "H100-NVL"}},
		{"a100", []string{"A100-80GB", "A100-40GB"}},
		{"v100", []string{"V100-16GB", "V100-32GB"}},
		{"h200", []string{"H200", "H200-NVL"}},
		{"a100 80gb", []string{"A100-80GB"}},
		{"a100-40gb", []string{"A100-40GB"}},
		{"h100-pcie", []string{"H100-PCIe"}},
		{"h100 nvl", []string{"H100-NVL"}},
		{"rtx 4090", []string{"RTX4090"}},
		{"RTX4090", []string{"RTX4090"}},
		{"4090", []string{"RTX4090"}},
		{"mi300x", []string{"MI300X"}},
		{"b200", []string{"B200"}},
		{"rtx pro 6000", []string{"RTXPRO6000"}},
		{"NVIDIA H100 80GB HBM3", []string{"H100-SXM"}},
		{"h100 80 gb", []string{"H100-SXM"}}, // the alias h100-80gb, as in /vram
		{"H100 (80 GB)", []string{"H100-SXM", "H100-PCIe"}},
		{"h100 sxm5 80gb", []string{"H100-SXM"}},
		{"4060ti", []string{"RTX4060Ti-16GB", "RTX4060Ti-8GB"}}, // the family: both memory sizes
		{"rtx 4060 ti", []string{"RTX4060Ti-16GB", "RTX4060Ti-8GB"}},
		{"4060 ti 8gb", []string{"RTX4060Ti-8GB"}},
		{"4060", []string{"RTX4060"}},
		{"4070 ti super", []string{"RTX4070TiSUPER"}},
		{"4070 ti", []string{"RTX4070Ti"}},
		{"h800", []string{"H800"}},
		{"1080", []string{"GTX1080"}},
		{"gtx 1080 ti", []string{"GTX1080Ti"}},
		{"quantum-toaster", nil},
		{"a1000", nil},
		{"", nil},
	}
	for _, tt := range tests {
		gpus, ok := FindGPUs(tt.in)
		var got []string
		for _, g := range gpus {
			got = append(got, g.Key)
		}
		if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
			t.Errorf("FindGPUs(%q) = %v, %v; want %v", tt.in, got, ok, tt.want)
		}
	}
}

func TestSuggestGPU(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a1000", "a100"}, {"h10", "h100"}, {"rtx4900", "rtx4090"}, {"banana-split-sundae", ""},
		// Suggestions stay in the generation (issue 10): a Blackwell name never
		// becomes a Hopper one, a 50-series never a 40-series.
		{"b2000", "b200"}, {"rtx5900", "rtx5090"}, {"gb2000", "gb200"}, {"mi3255x", "mi325x"},
		// Another model number of the same series is another card, not a typo.
		{"5050", ""}, {"rtx 5050", ""}, {"b100", ""}, {"h300", ""}, {"mi340x", ""}, {"1070", ""},
		{"", ""}, {"\x00", ""},
	}
	for _, tt := range tests {
		if got := SuggestGPU(tt.in); got != tt.want {
			t.Errorf("SuggestGPU(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, s := range []string{"b200", "5090", "rtx 5090", "b300"} {
		if got := SuggestGPU(s + "x"); strings.HasPrefix(got, "h") || strings.Contains(got, "4090") {
			t.Errorf("SuggestGPU(%q) = %q: a previous generation", s+"x", got)
		}
	}
}

func TestGPUGeneration(t *testing.T) {
	tests := []struct{ in, want string }{
		{"b200", "b"}, {"h200", "h"}, {"5090", "5"}, {"rtx 4090", "4"}, {"RTX-5080", "5"}, {"rtx a6000", "rtxa"},
		{"NVIDIA GeForce RTX 3060", "3"}, {"mi355x", "mi"}, {"gb200", "gb"}, {"AMD Instinct MI300X", "mi"},
		{"gaudi3", "gaudi"}, {"grace hopper", "gracehopper"}, {"", ""}, {"---", ""},
	}
	for _, tt := range tests {
		if got := gpuGeneration(tt.in); got != tt.want {
			t.Errorf("gpuGeneration(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzNormalizeGPU(f *testing.F) {
	for _, s := range []string{"NVIDIA H100 80GB HBM3", "A100-SXM4-80GB", "RTX 4090", "rtx", "h100nvl", "80 GB", "V100-32G", "rtx pro 6000 s"} {
		f.Add(s, 0.0, "")
	}
	f.Add("A100", 80.0, "p4de.24xlarge 80gb")
	f.Fuzz(func(t *testing.T, name string, memoryGB float64, hint string) {
		g, ok := NormalizeGPU(name, memoryGB, hint)
		if ok {
			if _, known := LookupGPU(g.Key); !known {
				t.Fatalf("NormalizeGPU(%q) = %q, not a catalog key", name, g.Key)
			}
		}
		if gpus, ok := FindGPUs(name); ok && len(gpus) == 0 {
			t.Fatalf("FindGPUs(%q) found nothing but reported ok", name)
		}
		SuggestGPU(name)
	})
}

// BenchmarkNormalizeGPU is one provider row's GPU name: a catalog refresh
// maps thousands (SkyPilot's AWS file has ~10,000 rows).
func BenchmarkNormalizeGPU(b *testing.B) {
	for b.Loop() {
		NormalizeGPU("NVIDIA H100 80GB HBM3", 80, "p5.48xlarge sxm")
	}
}

func TestAppleChip(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"m3-max", "Apple M3 Max", true},
		{"M2 Ultra", "Apple M2 Ultra", true},
		{"m4pro", "Apple M4 Pro", true},
		{"apple-m1", "Apple M1", true},
		{"m3", "Apple M3", true},
		{"m60", "", false},     // no such chip
		{"mi300x", "", false},  // AMD
		{"m3-maxx", "", false}, // not a chip's name
	}
	for _, tt := range tests {
		got, ok := AppleChip(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AppleChip(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestParseGPUsRejects: a malformed row is a build defect the tests catch,
// each with the row and what is wrong.
func TestParseGPUsRejects(t *testing.T) {
	header := strings.Join(gpuColumns, ",")
	good := "X1,X 1,x1,x1,,NVIDIA,24,24000,yes,no,8.6,70,600,,test row"
	if _, err := parseGPUs([]byte(header + "\n" + good + "\n")); err != nil {
		t.Fatalf("good row: %v", err)
	}
	for _, tc := range []struct{ row, want string }{
		{strings.Replace(good, ",8.6,", ",eight,", 1), "row 2 (X1)"},
		{strings.Replace(good, ",24000,", ",99999,", 1), "usable"},
		{strings.Replace(good, ",x1,x1,,", ",x1,X 1,,", 1), "family"},
		{strings.Replace(good, ",600,,", ",600,30000,", 1), "host"}, // the host cannot hold it all
	} {
		if _, err := parseGPUs([]byte(header + "\n" + tc.row + "\n")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %q", tc.row, err, tc.want)
		}
	}
	if _, err := parseGPUs([]byte(strings.Replace(header, "compute_capability,", "", 1) + "\n")); err == nil {
		t.Error("a header without compute_capability is accepted")
	}
}

// TestUnifiedMemory: only the GB10 shares its memory with the host, and
// the host's share is what separates the CUDA total (121.69 GiB) from what
// vLLM finds free at an idle start (113.69 GiB; docs/gpu-specs.md).
func TestUnifiedMemory(t *testing.T) {
	for _, g := range GPUs() {
		if g.Unified() != (g.Key == "GB10") {
			t.Errorf("%s: unified %v", g.Key, g.Unified())
		}
	}
	g, _ := LookupGPU("dgx spark")
	if got := float64(g.UsableBytes-g.HostBytes) / (1 << 30); math.Abs(got-113.69) > 0.01 {
		t.Errorf("GB10 free at an idle start = %.2f GiB, want 113.69", got)
	}
}
