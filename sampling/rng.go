package sampling

// splitMix64 is the SplitMix64 generator (Steele, Lea and Flood, 2014): a 64-bit counter
// stepped by the golden-ratio constant and passed through a mixing function. It is fixed
// here so that a seed gives the same draws on every platform and Go version.
type splitMix64 struct{ state uint64 }

func (r *splitMix64) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	z := r.state
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// float64 returns a uniform number in [0, 1) with 53 random bits.
func (r *splitMix64) float64() float64 {
	return float64(r.next()>>11) * (1.0 / (1 << 53))
}
