package server

import "math"

// This file turns the log-probabilities of a Backend into OpenAI's two shapes: the chat
// one (choices[i].logprobs.content) and the legacy one of completions.

// Limits of OpenAI: chat top_logprobs 0..20, completions logprobs 0..5.
const (
	maxChatTopLogprobs       = 20
	maxCompletionTopLogprobs = 5
)

// finiteLogprob replaces -Inf (a token the model gives no chance; JSON has no infinity)
// by -9999, as OpenAI reports such tokens.
func finiteLogprob(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || x < -9999 {
		return -9999
	}
	return x
}

func byteInts(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// chatLogprobsOf converts lps for a chat response (nil when lps is nil: logprobs off).
func chatLogprobsOf(lps []TokenLogprob) *chatLogprobs {
	if lps == nil {
		return nil
	}
	out := &chatLogprobs{Content: make([]chatTokenLogprob, len(lps))}
	for i, lp := range lps {
		e := chatTokenLogprob{Token: lp.Token, Logprob: finiteLogprob(lp.Logprob), Bytes: byteInts(lp.Bytes), TopLogprobs: make([]chatTopLogprob, len(lp.Top))}
		for j, t := range lp.Top {
			e.TopLogprobs[j] = chatTopLogprob{Token: t.Token, Logprob: finiteLogprob(t.Logprob), Bytes: byteInts(t.Bytes)}
		}
		out.Content[i] = e
	}
	return out
}

// completionLogprobsOf converts lps for a completion response; offset is the text offset
// (in bytes of the choice's text) of the first token, and is advanced past the tokens.
func completionLogprobsOf(lps []TokenLogprob, offset *int) *completionLogprobs {
	if lps == nil {
		return nil
	}
	out := &completionLogprobs{Tokens: make([]string, len(lps)), TokenLogprobs: make([]float64, len(lps)),
		TopLogprobs: make([]map[string]float64, len(lps)), TextOffset: make([]int, len(lps))}
	for i, lp := range lps {
		out.Tokens[i] = lp.Token
		out.TokenLogprobs[i] = finiteLogprob(lp.Logprob)
		top := make(map[string]float64, len(lp.Top))
		for _, t := range lp.Top {
			if _, seen := top[t.Token]; !seen { // tokens of equal text: keep the likelier
				top[t.Token] = finiteLogprob(t.Logprob)
			}
		}
		out.TopLogprobs[i] = top
		out.TextOffset[i] = *offset
		*offset += len(lp.Bytes)
	}
	return out
}

// appendLogprobs appends b to a (a nil a stays nil only when b is nil).
func appendLogprobs(a, b []TokenLogprob) []TokenLogprob {
	if b == nil {
		return a
	}
	if a == nil {
		a = []TokenLogprob{}
	}
	return append(a, b...)
}
