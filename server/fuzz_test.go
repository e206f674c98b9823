package server

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every POST endpoint: the answer is a 200 or a
// 4xx with an OpenAI error object, never a 500 or a panic.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		okChat, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true}`,
		`{"prompt":[1,2,3],"max_tokens":2}`, `{"prompt":"abc","echo":true,"stop":["b"]}`, `{"input":["a","b"]}`,
		`{"content":"ab","with_pieces":true}`, `{"tokens":[97,98]}`, `{"messages":[{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{}"}}]}]}`,
		`{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}}}`,
		`{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":3,"logit_bias":{"5":-100,"7":3}}`,
		`{"prompt":"x","logprobs":2,"echo":true,"stream":true}`,
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","stream":true}`,
		"{\"messages\":\xff}", `[]`, `null`, `{"max_tokens":1e400}`,
		`{"input":"x","stream":true,"max_output_tokens":2}`, `{"instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"r"}]}]}`,
		`{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"},"stream":true}`,
		`{"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`,
		`{"max_tokens":4,"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":[{"type":"tool_use","id":"i","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"i","content":"r"}]}],"stream":true}`,
		`{"max_tokens":8,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"}}`,
	} {
		f.Add(seed)
	}
	s := New(newFake(), Config{MaxBodyBytes: 1 << 14})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens", "/v1/embeddings", "/tokenize", "/detokenize"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			if rec.Code >= 500 {
				t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
			}
			if rec.Code != 200 {
				var e errorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" {
					t.Fatalf("%s %q: %d without an error object: %s", path, body, rec.Code, rec.Body)
				}
			}
		}
	})
}
