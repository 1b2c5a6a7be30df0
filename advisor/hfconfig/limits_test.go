package hfconfig

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
)

// withPadding is qwen3_8b with an extra key holding pad, so the file stays
// a valid, readable config whatever else it carries.
func withPadding(pad string) []byte {
	return []byte(strings.TrimSuffix(qwen3_8b, "}") + `, "padding": ` + pad + "}")
}

// miniMaxShape is a config.json shaped like nvidia/MiniMax-M3-NVFP4's, the
// largest real one (3,087,083 bytes): a quantization_config that lists
// 22,422 quantised modules by name.
func miniMaxShape() []byte {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(qwen3_8b, "}"))
	b.WriteString(`, "quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "exclude_modules": ["lm_head"], "quantized_layers": {`)
	for i := range 22422 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"language_model.model.layers.%d.block_sparse_moe.experts.%d.w%d": {"quant_algo": "NVFP4", "group_size": 16}`, i/384, i%128, i%3+1)
	}
	b.WriteString("}}}")
	return []byte(b.String())
}

// emptyArrays is n empty arrays in lists of per (0: one list).
func emptyArrays(n, per int) string {
	if per == 0 {
		per = n
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < n; i += per {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("[" + strings.Repeat("[],", min(per, n-i)-1) + "[]]")
	}
	b.WriteString("]")
	return b.String()
}

// TestBoundsRefuseHostileConfigs: text past a bound is refused as Invalid
// with what is wrong, whatever valid config it also carries; the largest
// real shape is read.
func TestBoundsRefuseHostileConfigs(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string // "" reads
	}{
		{"the largest real shape", miniMaxShape(), ""},
		{"8 MiB of empty arrays", withPadding(emptyArrays(2_800_000, 0)), "is 8400"},
		{"4 MiB of empty arrays in short lists", withPadding(emptyArrays(1_390_000, 1000)), "holds more than 262144 values and keys"},
		{"4 MiB of empty arrays in one list", withPadding(emptyArrays(1_390_000, 0)), "more than 65536 entries"},
		{"deep nesting", withPadding(strings.Repeat("[", 17) + strings.Repeat("]", 17)), "nests more than 16 levels deep"},
		{"one long list", withPadding("[" + strings.Repeat("1,", 70000) + "1]"), "more than 65536 entries"},
		{"unbalanced", []byte(`{"hidden_size": 8]]`), "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := Read(tt.data, "acme/hostile")
			if tt.want == "" {
				if err != nil || m.NumLayers != 36 {
					t.Fatalf("Read = %v, %d layers", err, m.NumLayers)
				}
				return
			}
			if errs.KindOf(err) != errs.Invalid || !strings.Contains(errs.UserMessage(err), tt.want) {
				t.Fatalf("Read = %v, want Invalid with %q", err, tt.want)
			}
		})
	}
}

// TestBoundsCostLittle: refusing the 8 MiB file of the issue allocates
// nothing like the 240 MB its decode took, and reading the largest real
// shape stays within a few times its size.
func TestBoundsCostLittle(t *testing.T) {
	hostile := withPadding(emptyArrays(1_390_000, 1000))
	real := miniMaxShape()
	for _, tt := range []struct {
		name  string
		data  []byte
		limit uint64
	}{
		{"hostile", hostile, 1 << 20},
		{"largest real shape", real, 20 * uint64(len(real))},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, _ = Read(tt.data, "acme/x")
		runtime.ReadMemStats(&after)
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes allocated for %d bytes", tt.name, got, len(tt.data))
		if got > tt.limit {
			t.Errorf("%s: %d bytes allocated, want at most %d", tt.name, got, tt.limit)
		}
	}
}

func TestReadContextGivesUp(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := ReadContext(ctx, []byte(qwen3_8b), "Qwen/Qwen3-8B")
	if errs.KindOf(err) != errs.Unavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("ReadContext = %v, want Unavailable", err)
	}
}

// BenchmarkReadLargestRealShape is the cost of one read of the largest
// real config.json's shape: what the parsed cache saves per answer.
func BenchmarkReadLargestRealShape(b *testing.B) {
	data := miniMaxShape()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Read(data, "nvidia/MiniMax-M3-NVFP4"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRefuseHostile is the cost of refusing 4 MiB of empty arrays.
func BenchmarkRefuseHostile(b *testing.B) {
	data := withPadding(emptyArrays(1_390_000, 1000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Read(data, "acme/hostile"); err == nil {
			b.Fatal("read")
		}
	}
}

// TestLayerIndex: the scan reads a layer number as the pattern
// `layers\.(\d+)[.*]` would.
func TestLayerIndex(t *testing.T) {
	re := regexp.MustCompile(`layers\.(\d+)[.*]`)
	for _, p := range []string{"model.layers.3.self_attn*", "model.layers.12.mlp.experts.7.down_proj.", "layers.7*", "model.layers.x.layers.5.mlp",
		"model.layers.", "model.layers.3", "lm_head", "model.layers.3x.layers.4*", "", "layers..1.", "model.layers.0001.attn"} {
		layer, ok := layerIndex(p)
		want, wantOK := "", false
		if m := re.FindStringSubmatch(p); m != nil {
			want, wantOK = m[1], true
		}
		if layer != want || ok != wantOK {
			t.Errorf("layerIndex(%q) = %q, %v; the pattern reads %q, %v", p, layer, ok, want, wantOK)
		}
	}
}
