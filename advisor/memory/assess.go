package memory

import "github.com/vrambot/vrambot/advisor/catalog"

// TightFraction is the "tight" band: an estimate within 10% of the usable
// memory fits on paper but not with confidence, since the estimator's own
// median error on measured cases is of that order (see the accuracy report).
const TightFraction = 0.10

// Assess compares an estimate's Total with the GPU's usable memory (what
// CUDA reports, not the marketed size) and returns the band and the headroom
// (negative when it does not fit).
func Assess(b Breakdown, gpu catalog.GPU) (Fit, int64) {
	headroom := gpu.UsableBytes - b.TotalBytes
	switch {
	case gpu.UsableBytes <= 0 || headroom < 0:
		return FitDoesNotFit, headroom
	case float64(headroom) < TightFraction*float64(gpu.UsableBytes):
		return FitTight, headroom
	default:
		return FitFits, headroom
	}
}
