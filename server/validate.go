package server

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
)

// Limits on request parameters.
const (
	maxStopStrings = 16
	maxStopBytes   = 256
)

// generation builds the model-independent part of a GenerateRequest from the sampling
// fields, checking every value against the model's info (a slot's context, the vocabulary).
func (f *samplingFields) generation(info ModelInfo) (GenerateRequest, *APIError) {
	ctxLen := info.ContextLength
	var g GenerateRequest
	if f.N != nil && *f.N != 1 {
		return g, badRequest("n", "n is %d: this server makes one choice per request (n = 1)", *f.N)
	}
	mt, param := f.MaxTokens, "max_tokens"
	if f.MaxCompletionTokens != nil {
		mt, param = f.MaxCompletionTokens, "max_completion_tokens"
	}
	if mt != nil {
		switch {
		case *mt < 1:
			return g, badRequest(param, "%s is %d: it must be at least 1", param, *mt)
		case *mt > int64(ctxLen):
			return g, badRequest(param, "%s is %d, more than the %d tokens of a slot's context: ask for at most %d", param, *mt, ctxLen, ctxLen).withCode("context_length_exceeded")
		}
		g.MaxTokens = int(*mt)
	}
	p := sampling.DefaultParams()
	p.RepeatPenalty, p.RepeatLastN = 1, 0 // OpenAI has no repetition penalty by default
	p.Temp = 1                            // OpenAI's default temperature
	p.TopK, p.MinP = 0, 0
	p.TopP = 1
	if t := f.Temperature; t != nil {
		if math.IsNaN(*t) || *t < 0 || *t > 2 {
			return g, badRequest("temperature", "temperature is %v: it must be between 0 and 2", *t)
		}
		p.Temp = float32(*t)
	}
	if t := f.TopP; t != nil {
		if math.IsNaN(*t) || *t <= 0 || *t > 1 {
			return g, badRequest("top_p", "top_p is %v: it must be in (0, 1]", *t)
		}
		p.TopP = float32(*t)
	}
	for _, pen := range []struct {
		v    *float64
		name string
		dst  *float32
	}{{f.FrequencyPenalty, "frequency_penalty", &p.FrequencyPenalty}, {f.PresencePenalty, "presence_penalty", &p.PresencePenalty}} {
		if pen.v == nil {
			continue
		}
		if math.IsNaN(*pen.v) || *pen.v < -2 || *pen.v > 2 {
			return g, badRequest(pen.name, "%s is %v: it must be between -2 and 2", pen.name, *pen.v)
		}
		*pen.dst = float32(*pen.v)
		if *pen.v != 0 {
			p.RepeatLastN = 64
		}
	}
	if f.Seed != nil {
		p.Seed = uint64(*f.Seed)
	} else {
		p.Seed = randomSeed()
	}
	g.Sampling = p
	if e := f.logitBias(&g, info.VocabSize); e != nil {
		return g, e
	}
	if len(f.Stop) > maxStopStrings {
		return g, badRequest("stop", "%d stop strings: at most %d", len(f.Stop), maxStopStrings)
	}
	for _, s := range f.Stop {
		if len(s) > maxStopBytes {
			return g, badRequest("stop", "a stop string of %d bytes: at most %d", len(s), maxStopBytes)
		}
		if s != "" {
			g.Stop = append(g.Stop, s)
		}
	}
	if rf := f.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			g.Grammar = grammar.JSONObject()
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 || string(rf.JSONSchema.Schema) == "null" {
				return g, badRequest("response_format", "response_format json_schema needs json_schema.schema")
			}
			gr, err := grammar.FromJSONSchema(rf.JSONSchema.Schema)
			if err != nil {
				return g, badRequest("response_format", "response_format.json_schema.schema is not supported: %v", err)
			}
			g.Grammar = gr
		default:
			return g, badRequest("response_format", "response_format type %q: use \"text\", \"json_object\" or \"json_schema\"", rf.Type)
		}
	}
	return g, nil
}

// checkPrompt refuses an empty prompt and one that leaves no room in a slot's context.
func checkPrompt(n, ctxLen int) *APIError {
	if n == 0 {
		return badRequest("", "the prompt is empty")
	}
	if n >= ctxLen {
		return badRequest("messages", "the prompt has %d tokens; a slot's context holds %d, which must leave room for at least one generated token: shorten the prompt or start the server with a larger -c (or fewer -np slots)", n, ctxLen).withCode("context_length_exceeded")
	}
	return nil
}

var knownRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// checkMessages checks the messages of a chat request.
func checkMessages(msgs []ChatMessage) *APIError {
	if len(msgs) == 0 {
		return badRequest("messages", "messages is empty: send at least one message")
	}
	for i, m := range msgs {
		if m.Role == "" {
			return badRequest("messages", "messages[%d] has no role: use \"system\", \"user\", \"assistant\" or \"tool\"", i)
		}
		if !knownRoles[m.Role] {
			return badRequest("messages", "messages[%d] has role %q: use \"system\", \"user\", \"assistant\" or \"tool\"", i, m.Role)
		}
		if !m.Content.Set && !(m.Role == "assistant" && len(m.ToolCalls) > 0) {
			return badRequest("messages", "messages[%d] (%s) has no content", i, m.Role)
		}
		if !utf8.ValidString(m.Content.Text) {
			return badRequest("messages", "messages[%d] is not valid UTF-8", i)
		}
	}
	return nil
}

// maxLogitBiases bounds the entries of logit_bias (OpenAI allows 300).
const maxLogitBiases = 1024

// logitBias checks logit_bias: keys are token ids written as decimal strings, inside the
// vocabulary (when its size is known), values in [-100, 100].
func (f *samplingFields) logitBias(g *GenerateRequest, vocab int) *APIError {
	if len(f.LogitBias) == 0 {
		return nil
	}
	if len(f.LogitBias) > maxLogitBiases {
		return badRequest("logit_bias", "logit_bias has %d entries: at most %d", len(f.LogitBias), maxLogitBiases)
	}
	g.LogitBias = make(map[int32]float32, len(f.LogitBias))
	for k, v := range f.LogitBias {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return badRequest("logit_bias", "logit_bias key %q is not a token id: the keys are token ids as strings, such as \"15339\"", k)
		}
		if id < 0 || vocab > 0 && id >= int64(vocab) {
			return badRequest("logit_bias", "logit_bias names token %d, outside the vocabulary of %d tokens", id, vocab)
		}
		if math.IsNaN(v) || v < -100 || v > 100 {
			return badRequest("logit_bias", "logit_bias for token %d is %v: it must be between -100 and 100", id, v)
		}
		g.LogitBias[int32(id)] = float32(v)
	}
	return nil
}
