package server

// Helpers of the endpoints that translate another API into a chat request (/v1/responses,
// /v1/messages): the chat shapes of a function tool and of a named tool_choice, and errors
// renamed to the other API's parameter names.

import (
	"encoding/json"
	"strings"
)

// chatTool returns the chat completions tool {"type": "function", "function": {...}} of a
// function with the given name, description and JSON-schema parameters (either may be empty).
func chatTool(name, description string, params json.RawMessage) json.RawMessage {
	fn := map[string]any{"name": name}
	if description != "" {
		fn["description"] = description
	}
	if len(params) > 0 && string(params) != "null" {
		fn["parameters"] = params
	}
	b, _ := json.Marshal(map[string]any{"type": "function", "function": fn})
	return b
}

// namedToolChoice returns the chat completions tool_choice that forces the function name.
func namedToolChoice(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": name}})
	return b
}

// renamed returns e with the chat parameter names in its message and param replaced by the
// other API's (pairs: old, new, ...).
func renamed(e *APIError, pairs ...string) *APIError {
	r := strings.NewReplacer(pairs...)
	out := *e
	out.Message = r.Replace(e.Message)
	if e.Param != nil {
		p := r.Replace(*e.Param)
		out.Param = &p
	}
	return &out
}
