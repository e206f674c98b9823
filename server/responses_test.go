package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// namedEvent is one event of a Responses API stream: its name and its data object.
type streamedEvent struct {
	name string
	data map[string]any
}

// readNamedEvents reads a stream of "event: NAME" + "data: JSON" events, checking that every
// event has both lines and that the data's type is the event's name.
func readNamedEvents(t *testing.T, r io.Reader) []streamedEvent {
	t.Helper()
	var out []streamedEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name != "" {
				t.Fatalf("event %q without data", name)
			}
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if name == "" {
				t.Fatalf("data without an event name: %q", line)
			}
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data of %s is not a JSON object: %v: %q", name, err, line)
			}
			if d["type"] != name {
				t.Fatalf("event %s has data of type %v", name, d["type"])
			}
			out = append(out, streamedEvent{name, d})
			name = ""
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return out
}

func postStream(t *testing.T, url, body string) []streamedEvent {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return readNamedEvents(t, resp.Body)
}

// responseObject is the part of a response object the tests read.
type responseObject struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Status            string `json:"status"`
	Model             string `json:"model"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Role    string `json:"role"`
		Content []struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Annotations []any  `json:"annotations"`
		} `json:"content"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"output"`
	Usage *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeResponse(t *testing.T, b []byte) responseObject {
	t.Helper()
	var r responseObject
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("not a response object: %v: %s", err, b)
	}
	return r
}

func TestResponsesWhole(t *testing.T) {
	f := newFake()
	_, ts := startServer(t, f, Config{})
	status, _, body := post(t, ts.URL+"/v1/responses", `{"model":"x","input":"hi","store":true,"reasoning":{"effort":"low"}}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	r := decodeResponse(t, body)
	if r.Object != "response" || r.Status != "completed" || r.IncompleteDetails != nil || !strings.HasPrefix(r.ID, "resp_") || r.Model != "fake" {
		t.Fatalf("%s", body)
	}
	if len(r.Output) != 1 || r.Output[0].Type != "message" || r.Output[0].Role != "assistant" || r.Output[0].Status != "completed" ||
		len(r.Output[0].Content) != 1 || r.Output[0].Content[0].Type != "output_text" || r.Output[0].Content[0].Text != "Hello, world!" ||
		r.Output[0].Content[0].Annotations == nil {
		t.Fatalf("output: %s", body)
	}
	if r.Usage == nil || r.Usage.OutputTokens != 5 || r.Usage.InputTokens == 0 || r.Usage.TotalTokens != r.Usage.InputTokens+5 {
		t.Fatalf("usage: %s", body)
	}
	// the text reached the chat template as one user message
	if p := string(promptOf(t, f)); !strings.Contains(p, "user:hi\n") {
		t.Fatalf("prompt %q", p)
	}
	// cut by max_output_tokens: incomplete
	status, _, body = post(t, ts.URL+"/v1/responses", `{"input":"hi","max_output_tokens":2}`)
	r = decodeResponse(t, body)
	if status != 200 || r.Status != "incomplete" || r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens" ||
		r.Output[0].Content[0].Text != "Hello," {
		t.Fatalf("%d %s", status, body)
	}
}

// promptOf returns the text of the fake backend's last prompt.
func promptOf(t *testing.T, f *fakeBackend) []byte {
	t.Helper()
	req, ok := f.lastReq.Load().(GenerateRequest)
	if !ok {
		t.Fatal("no request reached the backend")
	}
	var b []byte
	for _, tok := range req.Prompt[1:] {
		b = append(b, byte(tok))
	}
	return b
}

// Items: instructions, text parts, an assistant reply, a function call and its output.
func TestResponsesInputItems(t *testing.T) {
	f := newFake()
	f.ctxLen = 512
	_, ts := startServer(t, f, Config{})
	body := `{"instructions":"Be brief.","input":[
		{"role":"user","content":[{"type":"input_text","text":"Weather "},{"type":"input_text","text":"in Paris?"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me check."}]},
		{"type":"function_call","call_id":"abc123def","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call_output","call_id":"abc123def","output":"18C"},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"role":"developer","content":"Answer in French."}],
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`
	if status, _, b := post(t, ts.URL+"/v1/responses", body); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	want := "system:Be brief.\nuser:Weather in Paris?\nassistant:Let me check.\ntool:18C\nsystem:Answer in French.\n"
	if p := string(promptOf(t, f)); p != want {
		t.Fatalf("prompt %q, want %q", p, want)
	}
}

func TestResponsesStream(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	for _, c := range []struct {
		body, final, status string
		text                string
	}{
		{`{"input":"hi","stream":true}`, "response.completed", "completed", "Hello, world!"},
		{`{"input":"hi","stream":true,"max_output_tokens":3}`, "response.incomplete", "incomplete", "Hello, wor"},
	} {
		ev := postStream(t, ts.URL+"/v1/responses", c.body)
		var names []string
		var deltas strings.Builder
		for i, e := range ev {
			names = append(names, e.name)
			if n, _ := e.data["sequence_number"].(float64); int(n) != i {
				t.Fatalf("event %d (%s) has sequence_number %v", i, e.name, e.data["sequence_number"])
			}
			if e.name == "response.output_text.delta" {
				deltas.WriteString(e.data["delta"].(string))
			}
		}
		if deltas.String() != c.text {
			t.Fatalf("deltas %q, want %q", deltas.String(), c.text)
		}
		head := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
		tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", c.final}
		if len(names) < 9 || strings.Join(names[:4], ",") != strings.Join(head, ",") || strings.Join(names[len(names)-4:], ",") != strings.Join(tail, ",") {
			t.Fatalf("events %q", names)
		}
		for _, n := range names[4 : len(names)-4] {
			if n != "response.output_text.delta" {
				t.Fatalf("events %q", names)
			}
		}
		final, _ := json.Marshal(ev[len(ev)-1].data["response"])
		r := decodeResponse(t, final)
		if r.Status != c.status || r.Usage == nil || r.Usage.OutputTokens == 0 || len(r.Output) != 1 || r.Output[0].Content[0].Text != c.text {
			t.Fatalf("final response %s", final)
		}
		done, _ := json.Marshal(ev[len(ev)-2].data["item"])
		if !strings.Contains(string(done), `"status":"completed"`) || !strings.Contains(string(done), c.text) {
			t.Fatalf("output_item.done %s", done)
		}
	}
}

func TestResponsesFunctionCalls(t *testing.T) {
	f := newFake()
	f.reply = []string{"Checking.", "\n<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}
	_, ts := startServer(t, f, Config{})
	tools := `"tools":[{"type":"function","name":"get_weather","description":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	status, _, body := post(t, ts.URL+"/v1/responses", `{"input":"Weather in Paris?",`+tools+`}`)
	r := decodeResponse(t, body)
	if status != 200 || r.Status != "completed" || len(r.Output) != 2 || r.Output[0].Content[0].Text != "Checking." {
		t.Fatalf("%d %s", status, body)
	}
	fc := r.Output[1]
	if fc.Type != "function_call" || fc.Name != "get_weather" || fc.Arguments != `{"city": "Paris"}` && fc.Arguments != `{"city":"Paris"}` || fc.CallID == "" {
		t.Fatalf("function call %s", body)
	}
	ev := postStream(t, ts.URL+"/v1/responses", `{"input":"Weather in Paris?","stream":true,`+tools+`}`)
	var names []string
	for _, e := range ev {
		names = append(names, e.name)
	}
	want := "response.output_item.done,response.output_item.added,response.function_call_arguments.delta,response.function_call_arguments.done,response.output_item.done,response.completed"
	if got := strings.Join(names[len(names)-6:], ","); got != want {
		t.Fatalf("events %q", names)
	}
	final, _ := json.Marshal(ev[len(ev)-1].data["response"])
	if r := decodeResponse(t, final); len(r.Output) != 2 || r.Output[1].Type != "function_call" || r.Output[1].Name != "get_weather" {
		t.Fatalf("final %s", final)
	}
	// a named tool_choice forces the call: a grammar reaches the backend
	if status, _, body := post(t, ts.URL+"/v1/responses", `{"input":"x",`+tools+`,"tool_choice":{"type":"function","name":"get_weather"}}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if req := f.lastReq.Load().(GenerateRequest); req.Grammar == nil {
		t.Fatal("tool_choice by name did not constrain the output")
	}
}

func TestResponsesTextFormat(t *testing.T) {
	f := newFake()
	_, ts := startServer(t, f, Config{})
	for _, format := range []string{`{"type":"json_object"}`, `{"type":"json_schema","name":"r","strict":true,"schema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`} {
		status, _, body := post(t, ts.URL+"/v1/responses", `{"input":"x","text":{"format":`+format+`}}`)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if req := f.lastReq.Load().(GenerateRequest); req.Grammar == nil {
			t.Fatalf("text.format %s did not constrain the output", format)
		}
		var echo struct {
			Text struct {
				Format map[string]any `json:"format"`
			} `json:"text"`
		}
		var sent map[string]any
		json.Unmarshal([]byte(format), &sent)
		if json.Unmarshal(body, &echo) != nil || echo.Text.Format["type"] != sent["type"] || echo.Text.Format["name"] != sent["name"] {
			t.Fatalf("the response does not echo text.format: %s", body)
		}
	}
}

func TestResponsesBadInput(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	for _, c := range []struct{ body, param, want string }{
		{`{"model":"x"}`, "input", "input is missing"},
		{`{"input":[]}`, "input", "empty"},
		{`{"input":5}`, "", "input must be a string"},
		{`{"input":"x","previous_response_id":"resp_1"}`, "previous_response_id", "stores no responses"},
		{`{"input":"x","conversation":"conv_1"}`, "conversation", "stores no conversations"},
		{`{"input":"x","background":true}`, "background", "foreground"},
		{`{"input":"x","max_output_tokens":0}`, "max_output_tokens", "max_output_tokens is 0"},
		{`{"input":"x","temperature":3}`, "temperature", "between 0 and 2"},
		{`{"input":"x","text":{"format":{"type":"xml"}}}`, "text.format", "text.format type"},
		{`{"input":"x","text":{"format":{"type":"json_schema"}}}`, "text.format", "needs"},
		{`{"input":"x","tools":[{"type":"web_search"}]}`, "tools", "function tools only"},
		{`{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"mcp"}}`, "tool_choice", "tool_choice must be"},
		{`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"http://x"}]}]}`, "input", "only text parts"},
		{`{"input":[{"type":"computer_call"}]}`, "input", "computer_call"},
		{`{"input":[{"role":"robot","content":"x"}]}`, "input", "robot"},
		{`{"input":[{"type":"function_call","call_id":"a"}]}`, "input", "no name"},
		{`{"input":[{"role":"user"}]}`, "input", "no content"},
	} {
		status, _, body := post(t, ts.URL+"/v1/responses", c.body)
		var e errorBody
		if status != 400 || json.Unmarshal(body, &e) != nil {
			t.Fatalf("%s: %d %s", c.body, status, body)
		}
		if c.param != "" && (e.Error.Param == nil || *e.Error.Param != c.param) || !strings.Contains(e.Error.Message, c.want) {
			t.Fatalf("%s: error %s does not name %q and say %q", c.body, body, c.param, c.want)
		}
	}
	// the server keeps serving
	if status, _, body := post(t, ts.URL+"/responses", `{"input":"hi"}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
}

// A stream cut by the request timeout ends with an error event and response.failed.
func TestResponsesStreamError(t *testing.T) {
	f := newFake()
	f.delay = 100 * time.Millisecond
	_, ts := startServer(t, f, Config{RequestTimeout: 250 * time.Millisecond})
	ev := postStream(t, ts.URL+"/v1/responses", `{"input":"hi","stream":true}`)
	n := len(ev)
	if n < 3 || ev[n-2].name != "error" || ev[n-1].name != "response.failed" || ev[n-2].data["code"] != "timeout" {
		t.Fatalf("events %v", ev)
	}
	failed, _ := json.Marshal(ev[n-1].data["response"])
	if !strings.Contains(string(failed), `"status":"failed"`) || !strings.Contains(string(failed), "timeout") {
		t.Fatalf("%s", failed)
	}
}

func TestModelRetrieveAndStoredResponses(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	get := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := get("GET", "/v1/models/fake"); status != 200 || !strings.Contains(body, `"id":"fake"`) || !strings.Contains(body, `"object":"model"`) {
		t.Fatalf("%d %s", status, body)
	}
	if status, body := get("GET", "/v1/models/gpt-4o"); status != 404 || !strings.Contains(body, `"code":"model_not_found"`) || !strings.Contains(body, `serves \"fake\"`) {
		t.Fatalf("%d %s", status, body)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/v1/responses/resp_1"}, {"DELETE", "/v1/responses/resp_1"},
		{"POST", "/v1/responses/resp_1/cancel"}, {"GET", "/v1/responses/resp_1/input_items"}} {
		if status, body := get(c.method, c.path); status != 404 || !strings.Contains(body, "stores no responses") {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, body)
		}
	}
}
