package catalog

import (
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMIGTable checks the MIG profile table against itself and the GPU
// catalog: every GPU is a catalog row; a profile's memory is what its name
// says, less at most 15% (nvidia-smi prints GiB, the names round GB); its
// memory is its memory slices' share of the card; and as many instances as
// the user guide allows fit in the GPU's slices.
func TestMIGTable(t *testing.T) {
	for _, g := range MIGGPUs() {
		gpu, ok := LookupGPU(g.GPUKey)
		if !ok {
			t.Errorf("%s: not a catalog GPU", g.GPUKey)
			continue
		}
		if len(g.Profiles) == 0 {
			t.Errorf("%s: no profiles", g.GPUKey)
		}
		for i, p := range g.Profiles {
			name := g.GPUKey + " " + p.Name
			c, gb, ok := parseProfileName(p.Name)
			if !ok || c != p.ComputeSlices {
				t.Errorf("%s: name says %d compute slices, table %d", name, c, p.ComputeSlices)
			}
			if r := float64(p.MemoryBytes) / float64(gib) / gb; r < 0.85 || r > 1 {
				t.Errorf("%s: %.2f GiB is %.2f of the %g its name says", name, float64(p.MemoryBytes)/float64(gib), r, gb)
			}
			want := g.MemoryShare(p) * float64(gpu.UsableBytes)
			if d := math.Abs(float64(p.MemoryBytes)-want) / want; d > 0.1 {
				t.Errorf("%s: %d bytes, %.0f%% off its %d/%d of the card's %d", name, p.MemoryBytes, d*100, p.MemorySlices, g.MemorySlices, gpu.UsableBytes)
			}
			if p.Instances*p.ComputeSlices > g.ComputeSlices || p.Instances*p.MemorySlices > g.MemorySlices || p.Instances < 1 {
				t.Errorf("%s: %d instances do not fit %d compute and %d memory slices", name, p.Instances, g.ComputeSlices, g.MemorySlices)
			}
			if p.ComputeSlices >= g.ComputeSlices {
				t.Errorf("%s: a whole-GPU profile is listed", name)
			}
			if i > 0 && p.MemoryBytes < g.Profiles[i-1].MemoryBytes {
				t.Errorf("%s: profiles are not smallest first", name)
			}
		}
	}
}

// parseProfileName reads "3g.40gb" as 3 compute slices and 40 GB.
func parseProfileName(s string) (int, float64, bool) {
	g, rest, ok := strings.Cut(s, "g.")
	if !ok || !strings.HasSuffix(rest, "gb") {
		return 0, 0, false
	}
	c, err1 := strconv.Atoi(g)
	gb, err2 := strconv.ParseFloat(strings.TrimSuffix(rest, "gb"), 64)
	return c, gb, err1 == nil && err2 == nil
}

func TestMIGComputeShare(t *testing.T) {
	const a100, h100 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"
	tests := []struct {
		profile, model string
		want           float64
	}{
		{"", a100, 1},
		{"1g.10gb", a100, 1.0 / 7},
		{"1g.20gb", a100, 1.0 / 7},
		{"3g.40gb", a100, 3.0 / 7},
		{"7g.80gb", a100, 1},
		{"2g.12gb", "NVIDIA A30", 0.5},
		{"1g.10gb+me", h100, 1.0 / 7},
		{"3g.47gb", "NVIDIA H100 NVL", 3.0 / 7},
		{"2g.45gb", "NVIDIA B200", 2.0 / 7}, // not in the table: read from the name
		{"weird", a100, 1},
		{"0g.1gb", a100, 1},
		{"4g.24gb", "NVIDIA A30", 1},
	}
	for _, tt := range tests {
		if got := MIGComputeShare(tt.profile, tt.model); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MIGComputeShare(%q, %q) = %v, want %v", tt.profile, tt.model, got, tt.want)
		}
	}
}

func TestMIGProfileLookup(t *testing.T) {
	h, ok := LookupMIG("H100-SXM")
	if !ok {
		t.Fatal("H100-SXM has no MIG entry")
	}
	tests := []struct {
		name    string
		want    string
		wantGiB float64
		ok      bool
	}{
		{"3g.40gb", "3g.40gb", 39.5, true},
		{"1g.10gb+me", "1g.10gb", 9.75, true},
		{" 2G.20GB ", "2g.20gb", 19.62, true},
		{"7g.80gb", "", 0, false},
		{"3g.39gb", "", 0, false},
	}
	for _, tt := range tests {
		p, ok := h.Profile(tt.name)
		if ok != tt.ok || p.Name != tt.want || (ok && p.MemoryBytes != migGiB(tt.wantGiB)) {
			t.Errorf("Profile(%q) = %+v, %v; want %s (%v GiB), %v", tt.name, p, ok, tt.want, tt.wantGiB, tt.ok)
		}
	}
	if _, ok := LookupMIG("L40S"); ok {
		t.Error("L40S has a MIG entry; it has no MIG")
	}
}

// TestMIGTableInDocs: docs/digest.md §8.3 shows the table; it must say
// what the code says, row for row.
func TestMIGTableInDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/digest.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\|\s*(.*?)\s*\|\s*(\d+g\.\d+gb)\s*\|\s*(\d)/(\d)\s*\|\s*(\d)/(\d)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|$`)
	key := regexp.MustCompile("`([^`]+)`")
	var keys []string
	got := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "" {
			keys = nil
			for _, k := range key.FindAllStringSubmatch(m[1], -1) {
				keys = append(keys, k[1])
			}
		}
		for _, k := range keys {
			got[k+" "+m[2]] = strings.Join(m[3:], " ")
		}
	}
	want := map[string]string{}
	for _, g := range MIGGPUs() {
		for _, p := range g.Profiles {
			want[g.GPUKey+" "+p.Name] = fmt.Sprintf("%d %d %d %d %d %.2f", p.ComputeSlices, g.ComputeSlices, p.MemorySlices, g.MemorySlices, p.Instances, float64(p.MemoryBytes)/float64(gib))
		}
	}
	if !maps.Equal(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: docs say %q, code %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: in the docs, not in the code", k)
			}
		}
	}
}
