// Package chat renders a model's chat template (the Jinja text of the GGUF key
// tokenizer.chat_template) into the prompt the model was trained on, as Hugging Face's
// apply_chat_template does: messages with roles, add_generation_prompt, bos_token and
// eos_token, tool definitions (variable tools) and tool calls for the templates that use
// them. raise_exception in a template becomes an error wrapping ErrTemplate with its
// message.
//
// The Jinja engine is github.com/ardanlabs/jinja: pure Go, no dependencies, written for
// exactly these templates (its own tests render the templates of Qwen, Llama, Mistral,
// Gemma and gpt-oss files and requests of the kronk server), released often (v1.1 to
// v1.14 in autumn 2026). v1.8.0 is the newest release that builds with Go 1.26 (later
// ones need Go 1.27). Where it differs from
// Hugging Face's Jinja in ways that change prompts, this package compensates:
// tojson(indent=N) (Llama 3.x tool lists) keeps key order and does not escape <, >, &
// (the common form {{ x | tojson(indent=N) }} is rewritten to an encoder of ours); JSON
// given as tools or tool-call arguments keeps its key order.
//
// ParseToolCalls reads the tool calls a model wrote in the formats these templates ask for
// (Hermes/Qwen <tool_call> blocks, Llama 3.x JSON with or without <|python_tag|>, Mistral
// [TOOL_CALLS]); ToolCallStart tells a stream how much text to hold back.
//
// A file without a template gets Default, ChatML ("<|im_start|>role\ncontent<|im_end|>\n",
// llama.cpp's fallback too).
//
// # Hostile templates
//
// Templates come with model files, so they are bounded: New rejects sources over
// MaxSourceBytes and templates that could recurse (a macro calling itself or a later macro,
// a macro's name reassigned, caller(), recursive for loops), since the engine has no depth
// limit and a Go stack overflow ends the process; range() is limited per call and per
// render; Render gives up after Limits.Timeout and rejects output over Limits.MaxOutput.
// Not bounded: memory of a template that doubles a string in a loop (the engine cannot be
// interrupted; a render that times out goes on in a background goroutine until it ends).
package chat
