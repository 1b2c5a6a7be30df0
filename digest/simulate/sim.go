package simulate

import (
	"context"
	"slices"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// Sim answers the digest's questions from days of series without a
// Prometheus, reducing each bucket as the range queries of digest/prom do.
type Sim struct{ Days []Day }

// Fleet implements the digest's Metrics.
func (s Sim) Fleet(_ context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error) {
	if err := w.Validate(); err != nil {
		return fleet.Fleet{}, err
	}
	step := fleet.StepFor(w.Duration())
	return fleet.Analyze(w, step, th, Raw(w, step, s.Days...)), nil
}

// Raw is what digest/prom's seven range queries return over w.
func Raw(w fleet.Window, step time.Duration, days ...Day) fleet.Raw {
	n := w.Buckets(step)
	ends := make([]time.Time, n)
	for i := range ends {
		ends[i] = w.BucketEnd(i, n, step)
	}
	q := func(fn, metric string) []fleet.Series { return Evaluate(days, fn, metric, ends, step) }
	return fleet.Raw{
		UsedMax:  q("max_over_time", fleet.MetricFBUsed),
		UsedAvg:  q("avg_over_time", fleet.MetricFBUsed),
		UsedMin:  q("min_over_time", fleet.MetricFBUsed),
		Free:     q("avg_over_time", fleet.MetricFBFree),
		Reserved: q("avg_over_time", fleet.MetricFBReserved),
		Engine:   q("avg_over_time", fleet.MetricEngineActive),
		Util:     q("avg_over_time", fleet.MetricGPUUtil),
	}
}

// Evaluate is fn(metric[step]) at each of ends (equally spaced by step):
// each point reduces the samples in (end-step, end].
func Evaluate(days []Day, fn, metric string, ends []time.Time, step time.Duration) []fleet.Series {
	if len(ends) == 0 {
		return nil
	}
	var out []fleet.Series
	for _, d := range days {
		for _, s := range d.Series {
			if s.Metric != metric {
				continue
			}
			vals := make([][]float64, len(ends))
			for _, t := range d.Times() {
				v, ok := s.Value(t)
				if !ok {
					continue
				}
				x := t.Sub(ends[0])
				k := int(x / step)
				if x > time.Duration(k)*step {
					k++
				}
				if k >= 0 && k < len(ends) {
					vals[k] = append(vals[k], v)
				}
			}
			var pts []fleet.Point
			for k, vs := range vals {
				if len(vs) > 0 {
					pts = append(pts, fleet.Point{T: ends[k], V: reduce(fn, vs)})
				}
			}
			if len(pts) > 0 {
				out = append(out, fleet.Series{Labels: s.Labels, Points: pts})
			}
		}
	}
	return out
}

func reduce(fn string, vs []float64) float64 {
	switch fn {
	case "max_over_time":
		return slices.Max(vs)
	case "min_over_time":
		return slices.Min(vs)
	}
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	return sum / float64(len(vs))
}
