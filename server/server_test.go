package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func startServer(t *testing.T, b Backend, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s := New(b, cfg)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

func post(t *testing.T, url, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

const okChat = `{"model":"x","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`

func TestBadInput(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{MaxBodyBytes: 1 << 16})
	long := strings.Repeat("x", 100)
	cases := []struct {
		name, path, body string
		status           int
		want             string // in the message
	}{
		{"malformed JSON", "/v1/chat/completions", `{"messages": [`, 400, "not valid JSON"},
		{"syntax error", "/v1/chat/completions", `{"messages": [}`, 400, "not valid JSON"},
		{"not an object", "/v1/chat/completions", `[1, 2]`, 400, "must be a JSON object"},
		{"empty body", "/v1/chat/completions", ``, 400, "empty"},
		{"wrong type max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":"ten"}`, 400, "'max_tokens'"},
		{"fractional max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1.5}`, 400, "'max_tokens'"},
		{"wrong type messages", "/v1/chat/completions", `{"messages":"hi"}`, 400, "'messages'"},
		{"wrong type content", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, 400, "content must be"},
		{"image part", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "only \"text\" parts"},
		{"wrong type stream", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":"yes"}`, 400, "'stream'"},
		{"huge body", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<17) + `"}]}`, 413, "larger than"},
		{"invalid UTF-8", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\xfeb\"}]}", 400, "UTF-8"},
		{"empty messages", "/v1/chat/completions", `{"messages":[]}`, 400, "messages is empty"},
		{"missing messages", "/v1/chat/completions", `{"model":"x"}`, 400, "messages is empty"},
		{"no role", "/v1/chat/completions", `{"messages":[{"content":"hi"}]}`, 400, "no role"},
		{"unknown role", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"hi"}]}`, 400, "role \"wizard\""},
		{"null content", "/v1/chat/completions", `{"messages":[{"role":"user","content":null}]}`, 400, "no content"},
		{"prompt too long", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + `"}]}`, 400, "context holds 64"},
		{"negative max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":-5}`, 400, "at least 1"},
		{"zero max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, 400, "at least 1"},
		{"absurd max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1000000000000}`, 400, "more than the 64 tokens"},
		{"absurd max_completion_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":99999}`, 400, "max_completion_tokens"},
		{"overflowing max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1e30}`, 400, "'max_tokens'"},
		{"temperature", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"temperature":7}`, 400, "between 0 and 2"},
		{"top_p", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"top_p":0}`, 400, "top_p"},
		{"n", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"n":3}`, 400, "n = 1"},
		{"stop type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stop":5}`, 400, "stop must be"},
		{"response_format type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"yaml"}}`, 400, "response_format type"},
		{"json_schema missing", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema"}}`, 400, "json_schema.schema"},
		{"json_schema bad", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"$ref":"#/nowhere"}}}}`, 400, "not supported"},
		{"completion no prompt", "/v1/completions", `{"max_tokens":3}`, 400, "prompt is missing"},
		{"completion two prompts", "/v1/completions", `{"prompt":["a","b"]}`, 400, "one prompt"},
		{"completion bad tokens", "/v1/completions", `{"prompt":[1,2,99999]}`, 400, "outside the vocabulary"},
		{"completion prompt type", "/v1/completions", `{"prompt":{"a":1}}`, 400, "prompt must be"},
		{"completion too long", "/v1/completions", `{"prompt":"` + long + `"}`, 400, "context holds 64"},
		{"embeddings no input", "/v1/embeddings", `{"model":"x"}`, 400, "input is missing"},
		{"embeddings input type", "/v1/embeddings", `{"input":5}`, 400, "input must be"},
		{"embeddings too long", "/v1/embeddings", `{"input":"` + long + `"}`, 400, "context holds 64"},
		{"embeddings format", "/v1/embeddings", `{"input":"a","encoding_format":"hex"}`, 400, "encoding_format"},
		{"tokenize no content", "/tokenize", `{}`, 400, "content is missing"},
		{"detokenize bad token", "/detokenize", `{"tokens":[-1]}`, 400, "outside the vocabulary"},
		{"detokenize type", "/detokenize", `{"tokens":"abc"}`, 400, "'tokens'"},
		{"unknown endpoint", "/v1/nothing", `{}`, 404, "no endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := post(t, ts.URL+c.path, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			var e errorBody
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("not an OpenAI error object: %v: %s", err, body)
			}
			if e.Error.Type == "" || !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("error %+v does not say %q", e.Error, c.want)
			}
		})
	}
	// the server keeps serving, and unknown fields are ignored
	status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi","extra":1}],"logit_bias":{"5":1},"user":"u","whatever":{"a":[1]}}`)
	if status != 200 {
		t.Fatalf("status %d after the bad requests: %s", status, body)
	}
}

// sseEvents reads the data of every event of a stream.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank = true
			continue
		}
		if !blank {
			t.Fatalf("two lines in one event: %q", line)
		}
		blank = false
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not a data line: %q", line)
		}
		out = append(out, data)
	}
	return out
}

func TestChatStreamAndWhole(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	ev := sseEvents(t, resp.Body)
	if len(ev) < 4 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("events %q", ev)
	}
	var text strings.Builder
	var finish string
	var usage *Usage
	for i, e := range ev[:len(ev)-1] {
		var c chatResponse
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.Model != "fake" {
			t.Fatalf("event %d: %s", i, e)
		}
		if i == 0 && (len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant") {
			t.Fatalf("first event has no role: %s", e)
		}
		if c.Usage != nil {
			usage = c.Usage
			continue
		}
		if d := c.Choices[0].Delta; d != nil && d.Content != nil {
			text.WriteString(*d.Content)
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if text.String() != "Hello, world!" || finish != "stop" || usage == nil || usage.CompletionTokens != 5 || usage.TotalTokens != usage.PromptTokens+5 {
		t.Fatalf("text %q finish %q usage %+v", text.String(), finish, usage)
	}

	status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`)
	var whole chatResponse
	if status != 200 || json.Unmarshal(body, &whole) != nil || whole.Object != "chat.completion" {
		t.Fatalf("%d %s", status, body)
	}
	if c := whole.Choices[0]; *c.Message.Content != "Hello," || *c.FinishReason != "length" || whole.Usage.CompletionTokens != 2 {
		t.Fatalf("%s", body)
	}

	status, _, body = post(t, ts.URL+"/v1/completions", `{"prompt":"ab","echo":true}`)
	var comp completionResponse
	if status != 200 || json.Unmarshal(body, &comp) != nil || comp.Choices[0].Text != "abHello, world!" || comp.Object != "text_completion" {
		t.Fatalf("%d %s", status, body)
	}
}

func TestOtherEndpoints(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/health", "", `"status":"ok"`},
		{"GET", "/v1/models", "", `"id":"fake"`},
		{"POST", "/tokenize", `{"content":"ab","add_special":true}`, `{"tokens":[1,97,98]}`},
		{"POST", "/tokenize", `{"content":"a","with_pieces":true}`, `{"tokens":[{"id":97,"piece":"a"}]}`},
		{"POST", "/detokenize", `{"tokens":[104,105]}`, `{"content":"hi"}`},
		{"POST", "/v1/embeddings", `{"input":["a","b"]}`, `"index":1`},
		{"POST", "/v1/embeddings", `{"input":"a","encoding_format":"base64"}`, `"embedding":"AACAPwAAAAAAAAAA"`},
		{"GET", "/", "", "<!doctype html>"},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s: %d %s (want %s)", c.method, c.path, resp.StatusCode, b, c.want)
		}
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"ggml_server_requests_total{code=\"200\",endpoint=\"embeddings\"} 2", "ggml_server_queue_depth 0", "ggml_server_batch_size 0", "ggml_server_prompt_tokens_total", "ggml_server_request_duration_seconds_bucket"} {
		if !strings.Contains(string(b), m) {
			t.Errorf("metrics lack %q", m)
		}
	}
}

func TestAPIKey(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{APIKey: "sekret"})
	if status, _, body := post(t, ts.URL+"/v1/chat/completions", okChat); status != 401 || !strings.Contains(string(body), "invalid_api_key") {
		t.Fatalf("no key: %d %s", status, body)
	}
	if status, _, _ := post(t, ts.URL+"/v1/chat/completions", okChat, "Authorization", "Bearer wrong"); status != 401 {
		t.Fatalf("wrong key: %d", status)
	}
	if status, _, body := post(t, ts.URL+"/v1/chat/completions", okChat, "Authorization", "Bearer sekret"); status != 200 {
		t.Fatalf("right key: %d %s", status, body)
	}
	resp, err := http.Get(ts.URL + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health needs no key: %v %v", err, resp.StatusCode)
	}
	resp.Body.Close()
}

// streamUntilFirstPiece starts a streaming request and returns once its first piece arrived.
func streamUntilFirstPiece(t *testing.T, ctx context.Context, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return resp
}

func TestQueueFull429(t *testing.T) {
	f := newFake()
	f.slots, f.delay = 1, 200*time.Millisecond
	f.started = make(chan struct{}, 4)
	s, ts := startServer(t, f, Config{QueueSize: 1, RetryAfter: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r1 := streamUntilFirstPiece(t, ctx, ts.URL) // takes the slot
	defer r1.Body.Close()
	<-f.started
	done := make(chan int, 1)
	go func() { // waits in the queue
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(okChat))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	for s.lim.waiting.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	status, hdr, body := post(t, ts.URL+"/v1/chat/completions", okChat)
	if status != 429 || hdr.Get("Retry-After") != "2" || !strings.Contains(string(body), "queue_full") {
		t.Fatalf("third request: %d %q %s", status, hdr.Get("Retry-After"), body)
	}
	cancel() // the first goes away; the queued one may run or be cancelled
	<-done
}

func TestDisconnectCancels(t *testing.T) {
	f := newFake()
	f.delay = 300 * time.Millisecond
	f.reply = make([]string, 100)
	for i := range f.reply {
		f.reply[i] = "x"
	}
	f.started = make(chan struct{}, 1)
	_, ts := startServer(t, f, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	resp := streamUntilFirstPiece(t, ctx, ts.URL)
	<-f.started
	t0 := time.Now()
	cancel()
	resp.Body.Close()
	for f.ended.Load() == 0 {
		if time.Since(t0) > 5*time.Second {
			t.Fatal("the generation did not stop after the client went away")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("cancelled after %v", d)
	}
	if err, _ := f.lastErr.Load().(error); err == nil {
		t.Fatal("the generation ended without an error")
	}
}

func TestTimeout(t *testing.T) {
	f := newFake()
	f.delay = 100 * time.Millisecond
	_, ts := startServer(t, f, Config{RequestTimeout: 150 * time.Millisecond})
	status, _, body := post(t, ts.URL+"/v1/chat/completions", okChat)
	if status != 504 || !strings.Contains(string(body), "timeout") {
		t.Fatalf("%d %s", status, body)
	}
	// streaming: the timeout arrives as an error event
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := sseEvents(t, resp.Body)
	resp.Body.Close()
	if len(ev) == 0 || !strings.Contains(ev[len(ev)-1], `"error"`) {
		t.Fatalf("events %q", ev)
	}
}

func TestDrain(t *testing.T) {
	f := newFake()
	f.delay = 50 * time.Millisecond
	f.started = make(chan struct{}, 1)
	s, ts := startServer(t, f, Config{})
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(okChat))
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-f.started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- s.Drain(ctx) }()
	for !s.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	if status, _, body := post(t, ts.URL+"/v1/chat/completions", okChat); status != 503 {
		t.Fatalf("new request while draining: %d %s", status, body)
	}
	resp, err := http.Get(ts.URL + "/health")
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("health while draining: %v", err)
	}
	resp.Body.Close()
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if b := <-got; !strings.Contains(b, "Hello, world!") {
		t.Fatalf("the request in flight was cut: %s", b)
	}
}

func TestMethodAndTools(t *testing.T) {
	_, ts := startServer(t, newFake(), Config{})
	resp, err := http.Get(ts.URL + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || !strings.Contains(string(b), "takes POST") {
		t.Fatalf("GET on a POST endpoint: %d %s", resp.StatusCode, b)
	}
	status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[
		{"role":"user","content":"weather?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"city\":\"Oslo\"}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"sunny"}],
		"tools":[{"type":"function","function":{"name":"get","parameters":{"type":"object"}}}],"max_tokens":3}`)
	if status != 200 {
		t.Fatalf("tool messages: %d %s", status, body)
	}
	status, _, body = post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"assistant","tool_calls":5}]}`)
	if status != 400 || !strings.Contains(string(body), "tool_calls") {
		t.Fatalf("bad tool_calls: %d %s", status, body)
	}
}
