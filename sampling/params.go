package sampling

import (
	"fmt"
	"math"
)

// Params configures a Sampler. The zero value is not useful; start from DefaultParams.
type Params struct {
	// Temp is the temperature the logits are divided by after the truncation stages.
	// At Temp ≤ 0 the Sampler is greedy: the argmax of the penalised logits.
	Temp float32
	// TopK keeps the TopK most likely tokens; ≤ 0 keeps all.
	TopK int
	// TailFreeZ is the tail-free sampling parameter z in (0, 1]; 1 turns it off.
	TailFreeZ float32
	// TypicalP is the locally typical sampling mass in (0, 1]; 1 turns it off.
	TypicalP float32
	// TopP keeps the smallest set of most likely tokens whose probability reaches TopP,
	// in (0, 1]; 1 turns it off.
	TopP float32
	// MinP drops tokens less likely than MinP times the most likely one, in [0, 1];
	// 0 turns it off.
	MinP float32
	// RepeatPenalty divides the positive logits (multiplies the others) of the tokens in the
	// history; 1 turns it off. Must be > 0.
	RepeatPenalty float32
	// RepeatLastN is how many of the last accepted tokens the penalties look at; 0 turns
	// the penalties off. (llama.cpp's -1, "the context size", is the caller's to resolve.)
	RepeatLastN int
	// FrequencyPenalty is subtracted from a history token's logit once per occurrence.
	FrequencyPenalty float32
	// PresencePenalty is subtracted once from the logit of every token in the history.
	PresencePenalty float32
	// Seed starts the random generator (SplitMix64); the same seed and inputs give the
	// same tokens. Use a random seed for varied output.
	Seed uint64
}

// DefaultParams returns llama.cpp's command-line defaults of that date: temperature 0.8,
// top-k 40, tail-free and typical off (1), top-p 0.95, min-p 0.05, repetition penalty 1.1
// over the last 64 tokens, no frequency or presence penalty, and seed 0.
func DefaultParams() Params {
	return Params{
		Temp:          0.8,
		TopK:          40,
		TailFreeZ:     1,
		TypicalP:      1,
		TopP:          0.95,
		MinP:          0.05,
		RepeatPenalty: 1.1,
		RepeatLastN:   64,
	}
}

// GreedyParams returns parameters for greedy decoding without penalties: Sample is then
// Greedy.
func GreedyParams() Params {
	p := DefaultParams()
	p.Temp = 0
	p.RepeatPenalty = 1
	p.RepeatLastN = 0
	return p
}

// validate reports the first parameter out of range and what to change.
func (p *Params) validate() error {
	finite := func(name string, x float32) error {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("sampling: %s is %v: give a finite number", name, x)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		x    float32
	}{{"Temp", p.Temp}, {"TailFreeZ", p.TailFreeZ}, {"TypicalP", p.TypicalP}, {"TopP", p.TopP}, {"MinP", p.MinP},
		{"RepeatPenalty", p.RepeatPenalty}, {"FrequencyPenalty", p.FrequencyPenalty}, {"PresencePenalty", p.PresencePenalty}} {
		if err := finite(f.name, f.x); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		x    float32
	}{{"TopP", p.TopP}, {"TailFreeZ", p.TailFreeZ}, {"TypicalP", p.TypicalP}} {
		if f.x <= 0 || f.x > 1 {
			return fmt.Errorf("sampling: %s = %v is outside (0, 1]: use 1 to turn it off", f.name, f.x)
		}
	}
	if p.MinP < 0 || p.MinP > 1 {
		return fmt.Errorf("sampling: MinP = %v is outside [0, 1]: use 0 to turn it off", p.MinP)
	}
	if p.RepeatPenalty <= 0 {
		return fmt.Errorf("sampling: RepeatPenalty = %v must be positive: use 1 to turn it off", p.RepeatPenalty)
	}
	if p.RepeatLastN < 0 {
		return fmt.Errorf("sampling: RepeatLastN = %d is negative: give a window of tokens (the context size for all), or 0 for no penalties", p.RepeatLastN)
	}
	return nil
}
