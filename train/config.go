package train

import "fmt"

// Config is the shape of a LLaMA-architecture model. Zero fields take the defaults of
// DefaultConfig (NVocab comes from the vocabulary).
type Config struct {
	NVocab       int     // vocabulary size
	NEmbd        int     // embedding width (default 256)
	NLayer       int     // transformer blocks (default 6)
	NHead        int     // attention heads (default 8); n_embd must be a multiple
	NFF          int     // feed-forward width (default: about 8/3 n_embd, a multiple of 32)
	NCtx         int     // training sequence length, written as llama.context_length (default 256)
	NormEps      float32 // RMS norm epsilon (default 1e-5)
	RopeFreqBase float32 // RoPE base (default 10000)
}

// DefaultConfig is the shape of the module's default model.
var DefaultConfig = Config{NEmbd: 256, NLayer: 6, NHead: 8, NCtx: 256}

func (c *Config) defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.NEmbd, DefaultConfig.NEmbd)
	def(&c.NLayer, DefaultConfig.NLayer)
	def(&c.NHead, DefaultConfig.NHead)
	def(&c.NCtx, DefaultConfig.NCtx)
	def(&c.NFF, (c.NEmbd*8/3+31)/32*32)
	if c.NormEps == 0 {
		c.NormEps = 1e-5
	}
	if c.RopeFreqBase == 0 {
		c.RopeFreqBase = 10000
	}
}

func (c Config) validate() error {
	switch {
	case c.NVocab < 260:
		return fmt.Errorf("train: the vocabulary has %d tokens; it needs at least 260", c.NVocab)
	case c.NEmbd < 1 || c.NLayer < 1 || c.NHead < 1 || c.NFF < 1 || c.NCtx < 2:
		return fmt.Errorf("train: invalid shape %+v: every size must be positive (and the context at least 2)", c)
	case c.NEmbd%c.NHead != 0 || (c.NEmbd/c.NHead)%2 != 0:
		return fmt.Errorf("train: n_embd %d must be a multiple of n_head %d with an even head size", c.NEmbd, c.NHead)
	case c.NormEps <= 0 || c.RopeFreqBase <= 0:
		return fmt.Errorf("train: norm epsilon and rope base must be positive")
	}
	return nil
}

// ParamCount returns the number of weights of a model of this shape.
func (c Config) ParamCount() int64 {
	e, v, ff := int64(c.NEmbd), int64(c.NVocab), int64(c.NFF)
	perLayer := 2*e + 4*e*e + 3*e*ff
	return 2*e*v + e + int64(c.NLayer)*perLayer
}
