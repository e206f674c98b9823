package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// streamEvents posts body and returns the data of the events of the stream.
func streamEvents(t *testing.T, url, body string) []string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ev := sseEvents(t, resp.Body)
	if len(ev) == 0 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("the stream does not end with [DONE]: %q", ev)
	}
	return ev[:len(ev)-1]
}

func TestChatLogprobs(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":3}`)
	var r struct {
		Choices []struct {
			Message  wholeMessage  `json:"message"`
			Logprobs *chatLogprobs `json:"logprobs"`
		} `json:"choices"`
	}
	if status != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("%d %s", status, body)
	}
	lp := r.Choices[0].Logprobs
	if lp == nil || len(lp.Content) != 5 {
		t.Fatalf("logprobs %s", body)
	}
	var text strings.Builder
	for i, e := range lp.Content {
		text.WriteString(e.Token)
		if len(e.TopLogprobs) != 3 || e.TopLogprobs[0].Token != e.Token || e.Logprob != -0.25*float64(i+1) {
			t.Fatalf("entry %d: %+v", i, e)
		}
		if len(e.Bytes) != len(e.Token) || e.Bytes[0] != int(e.Token[0]) {
			t.Fatalf("bytes %v of %q", e.Bytes, e.Token)
		}
	}
	if text.String() != *r.Choices[0].Message.Content {
		t.Fatalf("tokens %q, content %q", text.String(), *r.Choices[0].Message.Content)
	}
	// the raw JSON has "bytes" as an array of integers
	if !strings.Contains(string(body), `"bytes":[72,101,108,108,111]`) {
		t.Fatalf("bytes not as integers: %s", body)
	}

	// streamed: each delta carries the logprobs of its tokens
	n := 0
	for _, ev := range streamEvents(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"logprobs":true,"stream":true}`) {
		var c chatResponse
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) == 0 || c.Choices[0].Delta == nil || c.Choices[0].Delta.Content == nil || *c.Choices[0].Delta.Content == "" {
			continue
		}
		lp := c.Choices[0].Logprobs
		if lp == nil || len(lp.Content) != 1 || lp.Content[0].Token != *c.Choices[0].Delta.Content || len(lp.Content[0].TopLogprobs) != 0 {
			t.Fatalf("chunk %s", ev)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("%d chunks with logprobs", n)
	}

	// not asked: null, and nothing asked of the backend
	f := newFake()
	_, ts2 := startServer(t, f, Config{})
	_, _, body = post(t, ts2.URL+"/v1/chat/completions", okChat)
	if !strings.Contains(string(body), `"logprobs":null`) || f.lastReq.Load().(GenerateRequest).Logprobs {
		t.Fatalf("%s", body)
	}
}

func TestCompletionLogprobs(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	status, _, body := post(t, ts.URL+"/v1/completions", `{"prompt":"say","logprobs":2,"echo":true}`)
	var r completionResponse
	if status != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("%d %s", status, body)
	}
	lp := r.Choices[0].Logprobs
	if lp == nil || len(lp.Tokens) != 5 || len(lp.TokenLogprobs) != 5 || len(lp.TopLogprobs) != 5 || len(lp.TextOffset) != 5 {
		t.Fatalf("%s", body)
	}
	off := len("say")
	for i, tok := range lp.Tokens {
		if lp.TextOffset[i] != off || r.Choices[0].Text[off:off+len(tok)] != tok || len(lp.TopLogprobs[i]) != 2 || lp.TopLogprobs[i][tok] != lp.TokenLogprobs[i] {
			t.Fatalf("token %d %q: %s", i, tok, body)
		}
		off += len(tok)
	}
	// streamed, offsets continue across chunks
	off = 0
	for _, ev := range streamEvents(t, ts.URL+"/v1/completions", `{"prompt":"say","logprobs":0,"stream":true}`) {
		var c completionResponse
		json.Unmarshal([]byte(ev), &c)
		if len(c.Choices) == 0 || c.Choices[0].Text == "" {
			continue
		}
		lp := c.Choices[0].Logprobs
		if lp == nil || len(lp.Tokens) != 1 || lp.TextOffset[0] != off || len(lp.TopLogprobs[0]) != 0 {
			t.Fatalf("chunk %s", ev)
		}
		off += len(lp.Tokens[0])
	}
	_, _, body = post(t, ts.URL+"/v1/completions", `{"prompt":"say"}`)
	if !strings.Contains(string(body), `"logprobs":null`) {
		t.Fatalf("%s", body)
	}
}

func TestLogitBiasReachesBackend(t *testing.T) {
	f := newFake()
	_, ts := startServer(t, f, Config{})
	status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"logit_bias":{"65":-100,"0":2.5}}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	got := f.lastReq.Load().(GenerateRequest).LogitBias
	if len(got) != 2 || got[65] != -100 || got[0] != 2.5 {
		t.Fatalf("%v", got)
	}
}

func TestNewFieldsBadInput(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ name, path, body, param, want string }{
		{"logit_bias key", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"abc":1}}`, "logit_bias", "not a token id"},
		{"logit_bias fractional key", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"1.5":1}}`, "logit_bias", "not a token id"},
		{"logit_bias vocabulary", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"300":1}}`, "logit_bias", "outside the vocabulary of 256"},
		{"logit_bias negative id", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"-1":1}}`, "logit_bias", "outside the vocabulary"},
		{"logit_bias range", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"5":150}}`, "logit_bias", "between -100 and 100"},
		{"logit_bias type", "/v1/chat/completions", `{` + msgs + `,"logit_bias":{"5":"ban"}}`, "logit_bias", "logit_bias"},
		{"completion logit_bias", "/v1/completions", `{"prompt":"x","logit_bias":{"5":-101}}`, "logit_bias", "between -100 and 100"},
		{"top_logprobs range", "/v1/chat/completions", `{` + msgs + `,"logprobs":true,"top_logprobs":21}`, "top_logprobs", "between 0 and 20"},
		{"top_logprobs without logprobs", "/v1/chat/completions", `{` + msgs + `,"top_logprobs":2}`, "top_logprobs", "needs logprobs"},
		{"logprobs type", "/v1/chat/completions", `{` + msgs + `,"logprobs":3}`, "logprobs", "logprobs"},
		{"completion logprobs range", "/v1/completions", `{"prompt":"x","logprobs":6}`, "logprobs", "between 0 and 5"},
		{"tools shape", "/v1/chat/completions", `{` + msgs + `,"tools":[{"type":"function"}]}`, "tools", "tools[0] must be"},
		{"tools duplicate", "/v1/chat/completions", `{` + msgs + `,"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]}`, "tools", "defined twice"},
		{"tool_choice word", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":"sometimes"}`, "tool_choice", "\"sometimes\""},
		{"tool_choice unknown function", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":{"type":"function","function":{"name":"rm"}}}`, "tool_choice", "not in tools"},
		{"tool_choice without tools", "/v1/chat/completions", `{` + msgs + `,"tool_choice":"required"}`, "tool_choice", "no tools"},
		{"tool_choice and response_format", "/v1/chat/completions", `{` + msgs + `,` + tools + `,"tool_choice":"required","response_format":{"type":"json_object"}}`, "tool_choice", "send one of them"},
		{"tool parameters not enforceable", "/v1/chat/completions", `{` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"$ref":"#/nowhere"}}}],"tool_choice":"required"}`, "tools", "cannot be enforced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := post(t, ts.URL+c.path, c.body)
			var e errorBody
			if status != 400 || json.Unmarshal(body, &e) != nil {
				t.Fatalf("%d %s", status, body)
			}
			if e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != c.param || !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("error %s does not name %s and say %q", body, c.param, c.want)
			}
		})
	}
}

const weatherTools = `"tools":[{"type":"function","function":{"name":"get_weather","description":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

func TestToolCalls(t *testing.T) {
	f := newFake()
	f.reply = []string{"Checking.", "\n<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}
	_, ts := startServer(t, f, Config{})
	req := `{"messages":[{"role":"user","content":"Weather in Paris?"}],` + weatherTools + `}`
	status, _, body := post(t, ts.URL+"/v1/chat/completions", req)
	var r struct {
		Choices []struct {
			Message      wholeMessage `json:"message"`
			FinishReason string       `json:"finish_reason"`
		} `json:"choices"`
	}
	if status != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("%d %s", status, body)
	}
	c := r.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content == nil || *c.Message.Content != "Checking." || len(c.Message.ToolCalls) != 1 {
		t.Fatalf("%s", body)
	}
	tc := c.Message.ToolCalls[0]
	if tc.Type != "function" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Paris"}` || !isToolCallID(tc.ID) || tc.Index != nil {
		t.Fatalf("%+v", tc)
	}

	// streamed: the text before the call as content, the marker never, then the call
	var content strings.Builder
	var calls []toolCallJSON
	finish := ""
	for _, ev := range streamEvents(t, ts.URL+"/v1/chat/completions", strings.TrimSuffix(req, "}")+`,"stream":true}`) {
		var c chatResponse
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) == 0 {
			continue
		}
		if d := c.Choices[0].Delta; d != nil {
			if d.Content != nil {
				content.WriteString(*d.Content)
			}
			calls = append(calls, d.ToolCalls...)
		}
		if c.Choices[0].FinishReason != nil {
			finish = *c.Choices[0].FinishReason
		}
	}
	if strings.TrimSpace(content.String()) != "Checking." || finish != "tool_calls" || len(calls) != 1 || calls[0].Index == nil || *calls[0].Index != 0 ||
		calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("content %q, finish %q, calls %+v", content.String(), finish, calls)
	}

	// tool_choice "none": the text as is
	_, _, body = post(t, ts.URL+"/v1/chat/completions", strings.TrimSuffix(req, "}")+`,"tool_choice":"none"}`)
	if !strings.Contains(string(body), `"finish_reason":"stop"`) || strings.Contains(string(body), `"tool_calls"`) {
		t.Fatalf("%s", body)
	}
	// without tools (tool_choice "auto" or "none" too): not parsed
	for _, extra := range []string{"", `,"tool_choice":"auto"`, `,"tools":[],"tool_choice":"none"`, `,"top_logprobs":0`} {
		status, _, body = post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]`+extra+`}`)
		if status != 200 || strings.Contains(string(body), `"tool_calls"`) {
			t.Fatalf("%s: %d %s", extra, status, body)
		}
	}
	// a named function or "required": a grammar; "auto": none
	for choice, want := range map[string]bool{`{"type":"function","function":{"name":"get_weather"}}`: true, `"required"`: true, `"auto"`: false} {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", strings.TrimSuffix(req, "}")+`,"tool_choice":`+choice+`}`)
		if status != 200 || (f.lastReq.Load().(GenerateRequest).Grammar != nil) != want {
			t.Fatalf("tool_choice %s: %d %s", choice, status, body)
		}
	}
	// plain text with tools: content, streamed in full
	f.reply = []string{"It is ", "sunny ", "[really]."}
	content.Reset()
	for _, ev := range streamEvents(t, ts.URL+"/v1/chat/completions", strings.TrimSuffix(req, "}")+`,"stream":true}`) {
		var c chatResponse
		json.Unmarshal([]byte(ev), &c)
		if len(c.Choices) > 0 && c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil {
			content.WriteString(*c.Choices[0].Delta.Content)
		}
	}
	if content.String() != "It is sunny [really]." {
		t.Fatalf("%q", content.String())
	}
}

// TestToolHistory sends a conversation with an assistant tool call and the tool's answer.
func TestToolHistory(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	body := `{"messages":[{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"abc123def","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"abc123def","content":"18C"}],` + weatherTools + `}`
	if status, _, b := post(t, ts.URL+"/v1/chat/completions", body); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
}

func TestCallSchema(t *testing.T) {
	p, e := planTools([]json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}`),
		json.RawMessage(`{"type":"function","function":{"name":"b"}}`)}, json.RawMessage(`"required"`))
	if e != nil || p.grammar == nil || !p.parse || len(p.names) != 2 {
		t.Fatalf("%+v %v", p, e)
	}
	s, err := callSchema([]string{"a"}, map[string]json.RawMessage{"a": json.RawMessage(`{"type":"object"}`)})
	if err != nil || string(s) != `{"additionalProperties":false,"properties":{"name":{"const":"a"},"arguments":{"type":"object"}},"required":["name","arguments"],"type":"object"}` {
		t.Fatalf("%s %v", s, err)
	}
}

func TestCompactToolGrammar(t *testing.T) {
	g, err := compactJSONGrammar([]byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := g.String(); strings.Contains(s, `\t`) || !strings.Contains(s, `" "`) {
		t.Fatalf("the white space is not compact:\n%s", s)
	}
}
