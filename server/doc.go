// Package server is an OpenAI-compatible HTTP server for a language model: chat completions
// and completions (streamed as server-sent events in OpenAI's chunk format, or whole), the
// Responses API (stateless: /v1/responses runs as a chat request and answers with output
// items, or their named stream events), Anthropic's Messages API (/v1/messages, the same way,
// with Anthropic's shapes and errors), embeddings, the model list, llama.cpp-style
// /tokenize and /detokenize, a health check, Prometheus metrics at /metrics and a chat page
// at /.
//
// The server talks to the model only through the Backend interface (generation as a stream
// of pieces, tokenization, chat prompts, embeddings); LlamaBackend implements it over package
// llama. Around it the server adds what a shared service needs: requests validated before
// they reach the model (a malformed body, a wrong type, invalid UTF-8, an empty conversation,
// a prompt longer than the context, an absurd max_tokens all get a 400 in OpenAI's error
// format that says what to change; unknown fields are ignored, as OpenAI does), a bounded
// queue in front of the slots (429 with Retry-After when it is full), a per-request timeout,
// cancellation the moment a client disconnects, an optional bearer API key, a request body
// limit, and a drain on shutdown (Server.Drain, then http.Server.Shutdown).
//
// Besides the sampling fields, requests may ask for log-probabilities (chat logprobs and
// top_logprobs, completions logprobs, from the model's raw logits), bias tokens (logit_bias,
// token ids as string keys, -100 to 100) and call tools: with tools and a tool_choice other
// than "none", the output is parsed for a call (chat.ParseToolCalls) and answered as
// message.tool_calls (delta.tool_calls in a stream) with finish_reason "tool_calls";
// tool_choice "required" or a named function constrains the output with a grammar made from
// the functions' parameter schemas.
//
// A prompt never gets truncated: one that does not fit in a slot's context is refused with a
// 400 whose code is "context_length_exceeded". A generation that reaches the end of the
// context stops with finish_reason "length".
package server
