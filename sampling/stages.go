package sampling

import (
	"math"
	"slices"
)

// better orders candidates: higher logit first, lower id on ties; NaN logits go last.
func better(a, b Candidate) bool {
	aNaN, bNaN := a.Logit != a.Logit, b.Logit != b.Logit
	if aNaN != bNaN {
		return bNaN
	}
	if !aNaN && a.Logit != b.Logit {
		return a.Logit > b.Logit
	}
	return a.ID < b.ID
}

func compare(a, b Candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// penalize applies the repetition, frequency and presence penalties to the candidates of
// the tokens among the last RepeatLastN accepted (llama_sample_repetition_penalties): a
// positive logit is divided by RepeatPenalty, another multiplied; then count·frequency +
// presence is subtracted. The candidates are still in id order here.
func (s *Sampler) penalize() {
	if !s.penalties() {
		return
	}
	p := s.p
	clear(s.counts)
	for i := 0; i < s.histLen; i++ {
		s.counts[s.hist[i]]++ // the ring holds exactly the window once full
	}
	for tok, n := range s.counts {
		if tok < 0 || int(tok) >= len(s.cands) {
			continue
		}
		c := &s.cands[tok]
		if c.Logit <= 0 {
			c.Logit *= p.RepeatPenalty
		} else {
			c.Logit /= p.RepeatPenalty
		}
		c.Logit -= float32(n)*p.FrequencyPenalty + p.PresencePenalty
	}
}

// penalties reports whether the penalties would change anything now.
func (s *Sampler) penalties() bool {
	p := s.p
	return s.histLen > 0 && (p.RepeatPenalty != 1 || p.FrequencyPenalty != 0 || p.PresencePenalty != 0)
}

// sort orders the candidates by logit, highest first (ties: lower id; NaN last), if they
// are not yet. It sorts packed integer keys (the logit's bits made monotonic and inverted,
// then the index), which is several times faster than sorting with a comparison function.
func (s *Sampler) sort() {
	if s.sorted {
		return
	}
	c := s.cands
	if cap(s.keys) < len(c) {
		s.keys = make([]uint64, len(c), cap(c))
	}
	keys := s.keys[:len(c)]
	for i, x := range c {
		b := math.Float32bits(x.Logit)
		switch {
		case x.Logit != x.Logit:
			b = 0
		case b&0x80000000 != 0:
			b = ^b
		default:
			b |= 0x80000000
		}
		keys[i] = uint64(^b)<<32 | uint64(i)
	}
	slices.Sort(keys)
	if cap(s.tmp) < len(c) {
		s.tmp = make([]Candidate, 0, cap(c))
	}
	tmp := s.tmp[:len(c)]
	for i, k := range keys {
		tmp[i] = c[uint32(k)]
	}
	// Equal logits came out in position order; put each run of them in id order.
	for i := 0; i < len(tmp); {
		j := i + 1
		for j < len(tmp) && (tmp[j].Logit == tmp[i].Logit || tmp[j].Logit != tmp[j].Logit && tmp[i].Logit != tmp[i].Logit) {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(tmp[i:j], compare)
		}
		i = j
	}
	copy(c, tmp)
	s.sorted = true
}

// softmax sorts the candidates and sets their probabilities.
func (s *Sampler) softmax() {
	s.sort()
	top := float64(s.cands[0].Logit)
	var sum float64
	for i := range s.cands {
		l := float64(s.cands[i].Logit)
		var p float64
		switch {
		case math.IsInf(top, 0) || top != top:
			// +Inf wins outright (shared among equals); all −Inf or NaN: uniform.
			if l == top || !math.IsInf(top, 1) {
				p = 1
			}
		case l == l:
			p = math.Exp(l - top)
		}
		s.cands[i].P = float32(p)
		sum += p
	}
	for i := range s.cands {
		s.cands[i].P = float32(float64(s.cands[i].P) / sum)
	}
}

// topK keeps the k best candidates (k ≤ 0: all), sorted.
func (s *Sampler) topK(k int) {
	n := len(s.cands)
	if k <= 0 || k >= n {
		s.sort()
		return
	}
	if s.sorted || k > n/8 {
		s.sort()
		s.cands = s.cands[:k]
		return
	}
	// A heap of the k best seen so far, the worst of them on top.
	h := s.heap[:0]
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && better(h[m], h[l]) {
				m = l
			}
			if r < len(h) && better(h[m], h[r]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, c := range s.cands {
		if len(h) == k && c.Logit < h[0].Logit {
			continue // the common case: not among the k best
		}
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0 && better(h[(i-1)/2], h[i]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		} else if better(c, h[0]) {
			h[0] = c
			down(0)
		}
	}
	s.heap = h
	s.cands = append(s.cands[:0], h...)
	slices.SortFunc(s.cands, compare)
	s.sorted = true
}

// tailFree keeps candidates until the normalised absolute second differences of the sorted
// probabilities add up to more than z (Tail Free Sampling, llama_sample_tail_free).
func (s *Sampler) tailFree(z float32) {
	if z >= 1 || len(s.cands) <= 2 {
		return
	}
	s.softmax()
	c := s.cands
	d := s.shiftBuf(len(c) - 2)
	var sum float64
	for i := range d {
		d1a := float64(c[i].P) - float64(c[i+1].P)
		d1b := float64(c[i+1].P) - float64(c[i+2].P)
		d[i] = math.Abs(d1a - d1b)
		sum += d[i]
	}
	for i := range d {
		if sum > 1e-6 {
			d[i] /= sum
		} else {
			d[i] = 1 / float64(len(d))
		}
	}
	keep := len(c)
	var cum float64
	for i, x := range d {
		cum += x
		if cum > float64(z) && i >= 1 {
			keep = i
			break
		}
	}
	s.cands = c[:keep]
}

// typical keeps the candidates whose surprise −log p is closest to the entropy, until their
// probabilities add up to more than p (locally typical sampling, llama_sample_typical). The
// kept candidates are in that order afterwards.
func (s *Sampler) typical(p float32) {
	if p >= 1 {
		return
	}
	s.softmax()
	c := s.cands
	var entropy float64
	for _, x := range c {
		if x.P > 0 {
			entropy -= float64(x.P) * math.Log(float64(x.P))
		}
	}
	if cap(s.order) < cap(s.cands) { // sized for the vocabulary once, not per call
		s.order = make([]typicalEntry, 0, cap(s.cands))
		s.tmp = make([]Candidate, 0, cap(s.cands))
	}
	s.order = s.order[:0]
	for i, x := range c {
		s.order = append(s.order, typicalEntry{math.Abs(-math.Log(float64(x.P)) - entropy), int32(i)})
	}
	slices.SortFunc(s.order, func(a, b typicalEntry) int {
		switch {
		case a.shift < b.shift:
			return -1
		case a.shift > b.shift:
			return 1
		}
		return int(a.idx - b.idx)
	})
	keep := len(c)
	var cum float64
	for i, e := range s.order {
		cum += float64(c[e.idx].P)
		if cum > float64(p) {
			keep = i + 1
			break
		}
	}
	s.tmp = s.tmp[:0]
	for _, e := range s.order[:keep] {
		s.tmp = append(s.tmp, c[e.idx])
	}
	s.cands = append(s.cands[:0], s.tmp...)
	s.sorted = false
}

// topP keeps the most likely candidates until their probabilities reach p (nucleus
// sampling, llama_sample_top_p).
func (s *Sampler) topP(p float32) {
	if p >= 1 {
		return
	}
	s.softmax()
	var cum float64
	for i, x := range s.cands {
		cum += float64(x.P)
		if cum >= float64(p) {
			s.cands = s.cands[:i+1]
			return
		}
	}
}

// minP drops the candidates less likely than p times the most likely one (llama_sample_min_p).
func (s *Sampler) minP(p float32) {
	if p <= 0 {
		return
	}
	s.softmax()
	limit := p * s.cands[0].P
	for i := 1; i < len(s.cands); i++ {
		if s.cands[i].P < limit {
			s.cands = s.cands[:i]
			return
		}
	}
}

// temperature divides the logits by t.
func (s *Sampler) temperature(t float32) {
	for i := range s.cands {
		s.cands[i].Logit /= t
	}
}

func (s *Sampler) shiftBuf(n int) []float64 {
	if cap(s.shift) < n {
		s.shift = make([]float64, n, max(n, cap(s.cands)))
	}
	s.shift = s.shift[:n]
	return s.shift
}

// typicalEntry is a candidate's distance from the entropy and its index, for sorting.
type typicalEntry struct {
	shift float64
	idx   int32
}
