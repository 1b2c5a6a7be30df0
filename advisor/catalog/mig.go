package catalog

import (
	"strconv"
	"strings"
)

// MIGProfile is one Multi-Instance GPU profile of a GPU: how much of the
// GPU's compute and memory it takes, how many of it fit, and the memory a
// CUDA process in it sees.
type MIGProfile struct {
	// Name is the profile as dcgm-exporter's GPU_I_PROFILE and nvidia-smi
	// write it: "3g.40gb".
	Name string
	// ComputeSlices and MemorySlices are its share of the GPU's compute
	// slices (of MIGGPU.ComputeSlices: 7, or 4 on an A30) and memory slices
	// (of MIGGPU.MemorySlices: 8, or 4 on an A30): the user guide's
	// "Fraction of SMs" and "Fraction of Memory" columns.
	ComputeSlices, MemorySlices int
	// Instances is how many of it one GPU holds ("Number of Instances
	// Available").
	Instances int
	// MemoryBytes is the memory of one instance as `nvidia-smi mig -lgip`
	// prints it (GiB with two decimals), the lowest value seen across
	// drivers: what a job in the slice can allocate.
	MemoryBytes int64
}

// MIGGPU is a MIG-capable GPU and its profiles, smallest first.
type MIGGPU struct {
	// GPUKey is the catalog key of the GPU (gpus.csv).
	GPUKey string
	// ComputeSlices and MemorySlices are how many of each the whole GPU has.
	ComputeSlices, MemorySlices int
	// Profiles leave out the whole-GPU profile (7g.80gb, 4g.24gb): it is no
	// smaller than the GPU itself. Media-extension variants (+me) are not
	// listed either: they have the memory and compute of their base profile.
	Profiles []MIGProfile
}

// ComputeShare is the profile's share of its GPU's compute slices (3/7 for
// a 3g.40gb): how the digest counts a slice's GPU-hours and prices it. A
// GPU split into a valid layout (3g + 2g + 1g + 1g) has shares adding up to
// one, in compute and in memory alike.
func (g MIGGPU) ComputeShare(p MIGProfile) float64 {
	return float64(p.ComputeSlices) / float64(g.ComputeSlices)
}

// MemoryShare is the profile's share of its GPU's memory slices, and so of
// its memory bandwidth (each memory slice is a set of memory controllers).
func (g MIGGPU) MemoryShare(p MIGProfile) float64 {
	return float64(p.MemorySlices) / float64(g.MemorySlices)
}

// Profile finds a profile by name; a media-extension suffix ("1g.10gb+me")
// is read as its base profile.
func (g MIGGPU) Profile(name string) (MIGProfile, bool) {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(name)), "+")
	for _, p := range g.Profiles {
		if p.Name == base {
			return p, true
		}
	}
	return MIGProfile{}, false
}

// migGiB is a size as nvidia-smi prints it, in GiB with two decimals.
func migGiB(g float64) int64 { return int64(g * float64(gib)) }

// migGPUs is the MIG profile table, the one place these facts live
// (docs/digest.md §8.3 lists it with its sources). Profile names, slices and
// instance counts are the tables of NVIDIA's MIG User Guide, "Supported MIG
// Profiles"; the memory is what `nvidia-smi mig -lgip` prints for the
// profile, the lowest value seen (drivers differ by up to 0.25 GiB).
var migGPUs = []MIGGPU{
	{GPUKey: "A100-40GB", ComputeSlices: 7, MemorySlices: 8, Profiles: []MIGProfile{
		{Name: "1g.5gb", ComputeSlices: 1, MemorySlices: 1, Instances: 7, MemoryBytes: migGiB(4.75)},
		{Name: "1g.10gb", ComputeSlices: 1, MemorySlices: 2, Instances: 4, MemoryBytes: migGiB(9.62)},
		{Name: "2g.10gb", ComputeSlices: 2, MemorySlices: 2, Instances: 3, MemoryBytes: migGiB(9.62)},
		{Name: "3g.20gb", ComputeSlices: 3, MemorySlices: 4, Instances: 2, MemoryBytes: migGiB(19.50)},
		{Name: "4g.20gb", ComputeSlices: 4, MemorySlices: 4, Instances: 1, MemoryBytes: migGiB(19.50)},
	}},
	{GPUKey: "A100-80GB", ComputeSlices: 7, MemorySlices: 8, Profiles: []MIGProfile{
		{Name: "1g.10gb", ComputeSlices: 1, MemorySlices: 1, Instances: 7, MemoryBytes: migGiB(9.50)},
		{Name: "1g.20gb", ComputeSlices: 1, MemorySlices: 2, Instances: 4, MemoryBytes: migGiB(19.50)},
		{Name: "2g.20gb", ComputeSlices: 2, MemorySlices: 2, Instances: 3, MemoryBytes: migGiB(19.50)},
		{Name: "3g.40gb", ComputeSlices: 3, MemorySlices: 4, Instances: 2, MemoryBytes: migGiB(39.25)},
		{Name: "4g.40gb", ComputeSlices: 4, MemorySlices: 4, Instances: 1, MemoryBytes: migGiB(39.25)},
	}},
	{GPUKey: "H100-SXM", ComputeSlices: 7, MemorySlices: 8, Profiles: h100Profiles},
	{GPUKey: "H100-PCIe", ComputeSlices: 7, MemorySlices: 8, Profiles: h100Profiles},
	{GPUKey: "H100-NVL", ComputeSlices: 7, MemorySlices: 8, Profiles: []MIGProfile{
		{Name: "1g.12gb", ComputeSlices: 1, MemorySlices: 1, Instances: 7, MemoryBytes: migGiB(10.75)},
		{Name: "1g.24gb", ComputeSlices: 1, MemorySlices: 2, Instances: 4, MemoryBytes: migGiB(21.62)},
		{Name: "2g.24gb", ComputeSlices: 2, MemorySlices: 2, Instances: 3, MemoryBytes: migGiB(21.62)},
		{Name: "3g.47gb", ComputeSlices: 3, MemorySlices: 4, Instances: 2, MemoryBytes: migGiB(46.38)},
		{Name: "4g.47gb", ComputeSlices: 4, MemorySlices: 4, Instances: 1, MemoryBytes: migGiB(46.38)},
	}},
	{GPUKey: "H200", ComputeSlices: 7, MemorySlices: 8, Profiles: []MIGProfile{
		{Name: "1g.18gb", ComputeSlices: 1, MemorySlices: 1, Instances: 7, MemoryBytes: migGiB(16.00)},
		{Name: "1g.35gb", ComputeSlices: 1, MemorySlices: 2, Instances: 4, MemoryBytes: migGiB(32.25)},
		{Name: "2g.35gb", ComputeSlices: 2, MemorySlices: 2, Instances: 3, MemoryBytes: migGiB(32.25)},
		{Name: "3g.71gb", ComputeSlices: 3, MemorySlices: 4, Instances: 2, MemoryBytes: migGiB(69.50)},
		{Name: "4g.71gb", ComputeSlices: 4, MemorySlices: 4, Instances: 1, MemoryBytes: migGiB(69.50)},
	}},
	{GPUKey: "A30", ComputeSlices: 4, MemorySlices: 4, Profiles: []MIGProfile{
		{Name: "1g.6gb", ComputeSlices: 1, MemorySlices: 1, Instances: 4, MemoryBytes: migGiB(5.81)},
		{Name: "2g.12gb", ComputeSlices: 2, MemorySlices: 2, Instances: 2, MemoryBytes: migGiB(11.69)},
	}},
}

// h100Profiles are the H100 80GB's, SXM and PCIe alike.
var h100Profiles = []MIGProfile{
	{Name: "1g.10gb", ComputeSlices: 1, MemorySlices: 1, Instances: 7, MemoryBytes: migGiB(9.75)},
	{Name: "1g.20gb", ComputeSlices: 1, MemorySlices: 2, Instances: 4, MemoryBytes: migGiB(19.62)},
	{Name: "2g.20gb", ComputeSlices: 2, MemorySlices: 2, Instances: 3, MemoryBytes: migGiB(19.62)},
	{Name: "3g.40gb", ComputeSlices: 3, MemorySlices: 4, Instances: 2, MemoryBytes: migGiB(39.50)},
	{Name: "4g.40gb", ComputeSlices: 4, MemorySlices: 4, Instances: 1, MemoryBytes: migGiB(39.50)},
}

// defaultComputeSlices is the compute-slice count of every MIG-capable GPU
// but the A30, for profiles of GPUs the table does not list.
const defaultComputeSlices = 7

// MIGGPUs returns the MIG profile table (a copy).
func MIGGPUs() []MIGGPU {
	out := make([]MIGGPU, len(migGPUs))
	for i, g := range migGPUs {
		g.Profiles = append([]MIGProfile(nil), g.Profiles...)
		out[i] = g
	}
	return out
}

// LookupMIG returns the MIG table entry of the catalog GPU gpuKey; ok is
// false for a GPU without MIG, or one the table does not list.
func LookupMIG(gpuKey string) (MIGGPU, bool) {
	for _, g := range migGPUs {
		if g.GPUKey == gpuKey {
			g.Profiles = append([]MIGProfile(nil), g.Profiles...)
			return g, true
		}
	}
	return MIGGPU{}, false
}

// MIGComputeShare is the share of a whole GPU that the MIG profile is on the
// GPU dcgm-exporter's modelName names: 3/7 for a "3g.40gb" on an A100 or
// H100, 2/4 for a "2g.12gb" on an A30. A profile the table lacks is read
// from its name ("Ng.…": N compute slices). It is 1 for no profile, for a
// whole-GPU profile and for a name it cannot read.
func MIGComputeShare(profile, dcgmModelName string) float64 {
	if strings.TrimSpace(profile) == "" {
		return 1
	}
	total := defaultComputeSlices
	if gpu, ok := NormalizeGPU(dcgmModelName, 0, ""); ok {
		if mg, ok := LookupMIG(gpu.Key); ok {
			if p, ok := mg.Profile(profile); ok {
				return mg.ComputeShare(p)
			}
			total = mg.ComputeSlices
		}
	}
	g, _, ok := strings.Cut(strings.ToLower(profile), "g.")
	if !ok {
		return 1
	}
	slices, err := strconv.Atoi(strings.TrimSpace(g))
	if err != nil || slices <= 0 || slices >= total {
		return 1
	}
	return float64(slices) / float64(total)
}
