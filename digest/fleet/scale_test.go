package fleet

import (
	"fmt"
	"testing"
	"time"
)

// TestManyJobsCostLinear: a fleet where every GPU is its own job (issue
// 26's 10,000 GPUs) costs allocations in proportion to its GPUs: naming
// every GPU once per job made it quadratic (10^8 names, minutes).
func TestManyJobsCostLinear(t *testing.T) {
	cost := func(gpus int) float64 {
		var raw Raw
		for i := range gpus {
			l := map[string]string{"hostname": fmt.Sprintf("node-%d", i/8), "gpu": fmt.Sprint(i % 8), "UUID": fmt.Sprintf("GPU-%d", i), "modelName": a100,
				"namespace": "ml", "pod": fmt.Sprintf("job-%d", i)}
			raw.UsedMax = append(raw.UsedMax, series(l, repeat(40000, 60)...))
			raw.UsedAvg = append(raw.UsedAvg, series(l, repeat(40000, 60)...))
			raw.UsedMin = append(raw.UsedMin, series(l, repeat(40000, 60)...))
			raw.Free = append(raw.Free, series(l, repeat(40000, 60)...))
		}
		var jobs int
		allocs := testing.AllocsPerRun(1, func() { jobs = len(Analyze(hourWindow, time.Minute, Thresholds{}, raw).Jobs) })
		if jobs != gpus {
			t.Fatalf("%d jobs for %d GPUs of one job each", jobs, gpus)
		}
		return allocs
	}
	small, large := cost(200), cost(1600)
	if ratio := large / small; ratio > 12 {
		t.Errorf("8 times the GPUs cost %.1f times the allocations (%.0f, %.0f): not linear", ratio, small, large)
	}
}
