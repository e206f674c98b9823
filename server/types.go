package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ChatMessage is one message of a chat completion request.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    MessageContent  `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
}

// MessageContent is a message's content: a string, an array of content parts of which the
// text parts are used, or null.
type MessageContent struct {
	Text string
	Set  bool // false for null or absent
}

// UnmarshalJSON accepts a string, null, or an array of {"type":"text","text":...} parts.
func (c *MessageContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = MessageContent{}
		return nil
	case len(b) > 0 && b[0] == '"':
		c.Set = true
		return json.Unmarshal(b, &c.Text)
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return errors.New("content parts must be objects like {\"type\": \"text\", \"text\": \"...\"}")
		}
		var sb bytes.Buffer
		for i, p := range parts {
			if p.Type != "text" || p.Text == nil {
				return fmt.Errorf("content part %d has type %q: only \"text\" parts are supported", i, p.Type)
			}
			sb.WriteString(*p.Text)
		}
		c.Text, c.Set = sb.String(), true
		return nil
	}
	return errors.New("content must be a string, an array of text parts, or null")
}

// MarshalJSON writes the text (null when not set).
func (c MessageContent) MarshalJSON() ([]byte, error) {
	if !c.Set {
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}

// StopList is the stop parameter: a string or an array of strings.
type StopList []string

// UnmarshalJSON accepts null, a string or an array of strings.
func (s *StopList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = StopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// ResponseFormat is the response_format parameter.
type ResponseFormat struct {
	Type       string `json:"type"` // "text", "json_object" or "json_schema"
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// StreamOptions is the stream_options parameter.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// samplingFields are the sampling parameters shared by chat completions and completions.
type samplingFields struct {
	Model               string          `json:"model"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	Stop                StopList        `json:"stop"`
	Seed                *int64          `json:"seed"`
	N                   *int64          `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *StreamOptions  `json:"stream_options"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	// LogitBias maps token ids (as strings, as JSON object keys are) to a bias in [-100, 100].
	LogitBias map[string]float64 `json:"logit_bias"`
}

// ChatCompletionRequest is the body of POST /v1/chat/completions (the fields used; others
// are ignored).
type ChatCompletionRequest struct {
	samplingFields
	Messages    []ChatMessage     `json:"messages"`
	Tools       []json.RawMessage `json:"tools"`
	ToolChoice  json.RawMessage   `json:"tool_choice"` // "none", "auto", "required" or {"type": "function", "function": {"name"}}
	Logprobs    bool              `json:"logprobs"`
	TopLogprobs *int64            `json:"top_logprobs"` // 0 to 20, with logprobs
}

// CompletionPrompt is the prompt of a completion: a string, an array of one string, or an
// array of token ids.
type CompletionPrompt struct {
	Text   string
	Tokens []int32
	Set    bool
}

// UnmarshalJSON accepts a string, [string] or [int...].
func (p *CompletionPrompt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*p = CompletionPrompt{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		p.Set = true
		return json.Unmarshal(b, &p.Text)
	}
	var strs []string
	if err := json.Unmarshal(b, &strs); err == nil {
		if len(strs) != 1 {
			return fmt.Errorf("an array of %d prompts: this server takes one prompt per request", len(strs))
		}
		p.Text, p.Set = strs[0], true
		return nil
	}
	var toks []int32
	if err := json.Unmarshal(b, &toks); err == nil {
		p.Tokens, p.Set = toks, true
		return nil
	}
	return errors.New("prompt must be a string, an array of one string, or an array of token ids")
}

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	samplingFields
	Prompt   CompletionPrompt `json:"prompt"`
	Echo     bool             `json:"echo"`
	Logprobs *int64           `json:"logprobs"` // 0 to 5 alternatives per token; null: none
}

// EmbeddingInput is the input of an embeddings request: a string or an array of strings.
type EmbeddingInput []string

// UnmarshalJSON accepts a string or an array of strings.
func (in *EmbeddingInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*in = EmbeddingInput{s}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("input must be a string or an array of strings")
	}
	*in = many
	return nil
}

// EmbeddingRequest is the body of POST /v1/embeddings.
type EmbeddingRequest struct {
	Model          string         `json:"model"`
	Input          EmbeddingInput `json:"input"`
	EncodingFormat string         `json:"encoding_format"` // "float" (default) or "base64"
}

// Usage counts the tokens of a request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(r Result) *Usage {
	return &Usage{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, TotalTokens: r.PromptTokens + r.CompletionTokens}
}

// responseMessage is the delta of a chat completion chunk.
type responseMessage struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// wholeMessage is the assistant message of a chat completion (content null when the
// message is only tool calls).
type wholeMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// toolCallJSON is a tool call in OpenAI's shape; Index is set in stream deltas only.
type toolCallJSON struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"` // a JSON object as a string
	} `json:"function"`
}

type chatChoice struct {
	Index        int              `json:"index"`
	Message      *wholeMessage    `json:"message,omitempty"`
	Delta        *responseMessage `json:"delta,omitempty"`
	Logprobs     *chatLogprobs    `json:"logprobs"`
	FinishReason *string          `json:"finish_reason"`
}

// chatLogprobs is OpenAI's choices[i].logprobs of a chat completion.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
	Refusal []chatTokenLogprob `json:"refusal"`
}

type chatTokenLogprob struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []chatTopLogprob `json:"top_logprobs"`
}

type chatTopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// completionLogprobs is the legacy logprobs object of a completion choice.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *Usage       `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

type completionResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             *Usage             `json:"usage,omitempty"`
}

type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32 or a base64 string
}

type embeddingResponse struct {
	Object string          `json:"object"`
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}
