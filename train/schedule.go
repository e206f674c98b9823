package train

import "math"

// Schedule is a learning-rate multiplier: a linear warm-up from 0 to 1 over Warmup steps,
// then a cosine decay to MinFactor at step Total (and MinFactor afterwards).
type Schedule struct {
	Warmup, Total int
	MinFactor     float64
}

// At returns the multiplier of step (0-based): the optimizer uses alpha · At(step).
func (s Schedule) At(step int) float32 {
	if s.Warmup > 0 && step < s.Warmup {
		return float32(step+1) / float32(s.Warmup)
	}
	if s.Total <= s.Warmup || step >= s.Total {
		if step >= s.Total && s.Total > 0 {
			return float32(s.MinFactor)
		}
		return 1
	}
	p := float64(step-s.Warmup) / float64(s.Total-s.Warmup)
	return float32(s.MinFactor + (1-s.MinFactor)*0.5*(1+math.Cos(math.Pi*p)))
}
