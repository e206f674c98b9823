package sampling

import (
	"fmt"
	"math"
)

// MaxLogitBias is the largest bias magnitude SetLogitBias accepts (OpenAI's range is
// [-100, 100]; -100 effectively bans a token, +100 effectively forces it).
const MaxLogitBias = 100

// SetLogitBias makes every later draw add bias[t] to the logit of token t before the rest of
// the chain (before the penalties, the constraint and the truncation stages); nil or an
// empty map removes the biases. Ids outside the logits of a draw are ignored there. It
// returns an error, and changes nothing, for a negative id or a bias that is NaN, infinite
// or outside [-MaxLogitBias, MaxLogitBias]. The map is copied.
func (s *Sampler) SetLogitBias(bias map[int32]float32) error {
	if len(bias) == 0 {
		s.bias = nil
		return nil
	}
	out := make([]tokenBias, 0, len(bias))
	for id, b := range bias {
		if id < 0 {
			return fmt.Errorf("sampling: logit bias for token %d: token ids are not negative", id)
		}
		if math.IsNaN(float64(b)) || b < -MaxLogitBias || b > MaxLogitBias {
			return fmt.Errorf("sampling: logit bias %v for token %d is outside [-%d, %d]", b, id, MaxLogitBias, MaxLogitBias)
		}
		out = append(out, tokenBias{id, b})
	}
	s.bias = out
	return nil
}

// LogitBias returns a copy of the biases set by SetLogitBias (nil when none).
func (s *Sampler) LogitBias() map[int32]float32 {
	if len(s.bias) == 0 {
		return nil
	}
	m := make(map[int32]float32, len(s.bias))
	for _, b := range s.bias {
		m[b.id] = b.bias
	}
	return m
}

type tokenBias struct {
	id   int32
	bias float32
}

// applyBias adds the biases to the candidates, which are still in id order (the first stage
// after load).
func (s *Sampler) applyBias() {
	for _, b := range s.bias {
		if int(b.id) < len(s.cands) {
			s.cands[b.id].Logit += b.bias
		}
	}
}
