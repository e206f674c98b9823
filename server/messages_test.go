package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// anthropicMessage is the part of a Messages API response the tests read.
type anthropicReply struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Content      []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func TestMessagesWhole(t *testing.T) {
	f := newFake()
	f.ctxLen = 512
	_, ts := startServer(t, f, Config{})
	status, _, body := post(t, ts.URL+"/v1/messages", `{"model":"m","max_tokens":64,"system":[{"type":"text","text":"Be brief."}],
		"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"Hello."}]},{"role":"user","content":[{"type":"text","text":"Again"}]}]}`)
	var r anthropicReply
	if status != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("%d %s", status, body)
	}
	if r.Type != "message" || r.Role != "assistant" || !strings.HasPrefix(r.ID, "msg_") || r.StopReason != "end_turn" ||
		len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "Hello, world!" || r.Usage.OutputTokens != 5 || r.Usage.InputTokens == 0 {
		t.Fatalf("%s", body)
	}
	if p, want := string(promptOf(t, f)), "system:Be brief.\nuser:hi\nassistant:Hello.\nuser:Again\n"; p != want {
		t.Fatalf("prompt %q, want %q", p, want)
	}
	status, _, body = post(t, ts.URL+"/v1/messages", `{"max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`)
	if json.Unmarshal(body, &r) != nil || status != 200 || r.StopReason != "max_tokens" || r.Content[0].Text != "Hello," || r.StopSequence != nil {
		t.Fatalf("%d %s", status, body)
	}
	// a stop sequence names itself
	status, _, body = post(t, ts.URL+"/v1/messages", `{"max_tokens":64,"stop_sequences":["never"," wor"],"messages":[{"role":"user","content":"hi"}]}`)
	if json.Unmarshal(body, &r) != nil || status != 200 || r.StopReason != "stop_sequence" || r.StopSequence == nil || *r.StopSequence != " wor" ||
		r.Content[0].Text != "Hello," {
		t.Fatalf("%d %s", status, body)
	}
}

func TestMessagesStream(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	ev := postStream(t, ts.URL+"/v1/messages", `{"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	var names []string
	var text strings.Builder
	for _, e := range ev {
		names = append(names, e.name)
		if e.name == "content_block_delta" {
			d := e.data["delta"].(map[string]any)
			if d["type"] != "text_delta" || e.data["index"].(float64) != 0 {
				t.Fatalf("delta %v", e.data)
			}
			text.WriteString(d["text"].(string))
		}
	}
	n := len(names)
	if n < 7 || strings.Join(names[:3], ",") != "message_start,ping,content_block_start" ||
		strings.Join(names[n-3:], ",") != "content_block_stop,message_delta,message_stop" || text.String() != "Hello, world!" {
		t.Fatalf("events %q, text %q", names, text.String())
	}
	start := ev[0].data["message"].(map[string]any)
	if start["stop_reason"] != nil || start["usage"].(map[string]any)["input_tokens"].(float64) == 0 {
		t.Fatalf("message_start %v", start)
	}
	md := ev[n-2].data
	if md["delta"].(map[string]any)["stop_reason"] != "end_turn" || md["usage"].(map[string]any)["output_tokens"].(float64) != 5 {
		t.Fatalf("message_delta %v", md)
	}
	ev = postStream(t, ts.URL+"/v1/messages", `{"max_tokens":64,"stream":true,"stop_sequences":["!"],"messages":[{"role":"user","content":"hi"}]}`)
	d := ev[len(ev)-2].data["delta"].(map[string]any)
	if d["stop_reason"] != "stop_sequence" || d["stop_sequence"] != "!" {
		t.Fatalf("message_delta %v", ev[len(ev)-2].data)
	}
}

func TestMessagesToolUse(t *testing.T) {
	f := newFake()
	f.ctxLen = 512
	f.reply = []string{"Checking.", "\n<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}
	_, ts := startServer(t, f, Config{})
	tools := `"tools":[{"name":"get_weather","description":"weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	status, _, body := post(t, ts.URL+"/v1/messages", `{"max_tokens":64,"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	var r anthropicReply
	if status != 200 || json.Unmarshal(body, &r) != nil || r.StopReason != "tool_use" || len(r.Content) != 2 ||
		r.Content[0].Text != "Checking." || r.Content[1].Type != "tool_use" || r.Content[1].Name != "get_weather" || r.Content[1].ID == "" {
		t.Fatalf("%d %s", status, body)
	}
	var in map[string]string
	if json.Unmarshal(r.Content[1].Input, &in) != nil || in["city"] != "Paris" {
		t.Fatalf("input %s", r.Content[1].Input)
	}
	ev := postStream(t, ts.URL+"/v1/messages", `{"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	var names []string
	for _, e := range ev {
		names = append(names, e.name)
	}
	want := "content_block_stop,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop"
	if n := len(names); n < 6 || strings.Join(names[n-6:], ",") != want {
		t.Fatalf("events %q", names)
	}
	use := ev[len(ev)-5].data["content_block"].(map[string]any)
	delta := ev[len(ev)-4].data["delta"].(map[string]any)
	if use["type"] != "tool_use" || use["name"] != "get_weather" || delta["type"] != "input_json_delta" || !strings.Contains(delta["partial_json"].(string), "Paris") {
		t.Fatalf("tool_use events %v %v", use, delta)
	}
	// a tool_use in the history and its tool_result, and tool_choice any: a grammar forces a call
	status, _, body = post(t, ts.URL+"/v1/messages", `{"max_tokens":64,`+tools+`,"tool_choice":{"type":"any"},"messages":[
		{"role":"user","content":"Weather?"},
		{"role":"assistant","content":[{"type":"text","text":"Let me see."},{"type":"tool_use","id":"abc123def","name":"get_weather","input":{"city":"Paris"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"abc123def","content":[{"type":"text","text":"18C"}]},{"type":"text","text":"And?"}]}]}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if p, want := string(promptOf(t, f)), "user:Weather?\nassistant:Let me see.\ntool:18C\nuser:And?\n"; p != want {
		t.Fatalf("prompt %q, want %q", p, want)
	}
	if req := f.lastReq.Load().(GenerateRequest); req.Grammar == nil {
		t.Fatal("tool_choice any did not constrain the output")
	}
}

func TestMessagesErrorsAndAuth(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{APIKey: "k"})
	key := []string{"x-api-key", "k"}
	for _, c := range []struct {
		body   string
		status int
		typ    string
		want   string
	}{
		{`{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "max_tokens is required"},
		{`{"max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "max_tokens is 0"},
		{`{"max_tokens":100000,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "max_tokens is 100000"},
		{`{"max_tokens":4,"messages":[]}`, 400, "invalid_request_error", "empty"},
		{`{"max_tokens":4,"messages":[{"role":"system","content":"x"}]}`, 400, "invalid_request_error", "goes in system"},
		{`{"max_tokens":4,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`, 400, "invalid_request_error", "image"},
		{`{"max_tokens":4,"messages":[{"role":"user","content":5}]}`, 400, "invalid_request_error", "content"},
		{`{"max_tokens":4,"temperature":1.5,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "between 0 and 1"},
		{`{"max_tokens":4,"top_k":-1,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "top_k"},
		{`{"max_tokens":4,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "client tools only"},
		{`{"max_tokens":4,"tool_choice":{"type":"maybe"},"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "tool_choice"},
		{`{"max_tokens":4,"messages":[{"role":"user","content":"` + strings.Repeat("y", 200) + `"}]}`, 400, "invalid_request_error", "context"},
		{`not json`, 400, "invalid_request_error", ""},
	} {
		status, _, body := post(t, ts.URL+"/v1/messages", c.body, key...)
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if status != c.status || json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error.Type != c.typ || !strings.Contains(e.Error.Message, c.want) {
			t.Fatalf("%s: %d %s", c.body, status, body)
		}
	}
	// the key: x-api-key or a bearer token; a wrong one is a 401 in Anthropic's shape
	ok := `{"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`
	if status, _, body := post(t, ts.URL+"/v1/messages", ok, "Authorization", "Bearer k"); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	status, _, body := post(t, ts.URL+"/v1/messages", ok, "x-api-key", "wrong")
	if status != 401 || !strings.Contains(string(body), `"authentication_error"`) || !strings.Contains(string(body), `"type":"error"`) {
		t.Fatalf("%d %s", status, body)
	}
	// count_tokens: the prompt's length, also for a prompt that does not fit
	status, _, body = post(t, ts.URL+"/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"hi"}]}`, key...)
	if status != 200 || string(body) != `{"input_tokens":9}`+"\n" {
		t.Fatalf("%d %s", status, body)
	}
	status, _, body = post(t, ts.URL+"/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"`+strings.Repeat("y", 200)+`"}]}`, key...)
	if status != 200 || !strings.Contains(string(body), `"input_tokens":207`) {
		t.Fatalf("%d %s", status, body)
	}
}
