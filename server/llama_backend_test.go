//go:build cgo

package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
)

// llamaTestServer serves the default model with opt (2 slots of 128 tokens, 2 threads, and
// what opt adds) on a test server; both are closed when the test ends, and the live objects
// must then be back to their count before.
func llamaTestServer(t *testing.T, opt LlamaOptions) (*LlamaBackend, *httptest.Server) {
	t.Helper()
	live := ggml.LiveObjects()
	opt.Slots, opt.CtxSize, opt.Threads = 2, 2*128, 2
	b, err := NewLlamaBackend(defaultModelPath, opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(b, Config{}).Handler())
	t.Cleanup(func() {
		ts.Close()
		b.Close()
		if n := ggml.LiveObjects(); n != live {
			t.Errorf("live objects %d, before %d", n, live)
		}
	})
	return b, ts
}

// greedyStreamEqualsWhole checks that a greedy chat completion streamed gives the text and
// finish reason of the same request answered whole, and the usage of a whole answer; it
// returns the text.
func greedyStreamEqualsWhole(t *testing.T, url string) string {
	t.Helper()
	status, _, body := post(t, url+"/v1/chat/completions", `{"messages":[{"role":"user","content":"func main() {"}],"max_tokens":24,"temperature":0}`)
	var whole chatResponse
	if status != 200 || json.Unmarshal(body, &whole) != nil {
		t.Fatalf("%d %s", status, body)
	}
	r, err := readChatStream(t.Context(), url, "func main() {", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.text != *whole.Choices[0].Message.Content || r.finish != *whole.Choices[0].FinishReason {
		t.Fatalf("stream %q (%s), whole %q (%s)", r.text, r.finish, *whole.Choices[0].Message.Content, *whole.Choices[0].FinishReason)
	}
	if whole.Usage.CompletionTokens != 24 && r.finish == "length" {
		t.Fatalf("usage %+v", whole.Usage)
	}
	return r.text
}

// TestLlamaBackend drives the adapter over the default model through the HTTP API.
func TestLlamaBackend(t *testing.T) {
	b, ts := llamaTestServer(t, LlamaOptions{})

	t.Run("greedy stream equals whole", func(t *testing.T) { greedyStreamEqualsWhole(t, ts.URL) })
	t.Run("stop string", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/completions", `{"prompt":"func main() {","max_tokens":40,"temperature":0,"stop":["\n"]}`)
		var c completionResponse
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("%d %s", status, body)
		}
		if strings.Contains(c.Choices[0].Text, "\n") {
			t.Fatalf("the stop string is in %q", c.Choices[0].Text)
		}
	})
	t.Run("json_schema", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"json"}],"max_tokens":100,"temperature":0.8,"seed":3,
			"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}},"required":["ok","n"],"additionalProperties":false}}}}`)
		var c chatResponse
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("%d %s", status, body)
		}
		if *c.Choices[0].FinishReason != "stop" {
			t.Skipf("did not finish in 100 tokens: %q", *c.Choices[0].Message.Content)
		}
		var v struct {
			OK *bool        `json:"ok"`
			N  *json.Number `json:"n"`
		}
		d := json.NewDecoder(strings.NewReader(*c.Choices[0].Message.Content))
		d.DisallowUnknownFields()
		d.UseNumber()
		if err := d.Decode(&v); err != nil || v.OK == nil || v.N == nil {
			t.Fatalf("%q: %v", *c.Choices[0].Message.Content, err)
		}
		if _, err := v.N.Int64(); err != nil {
			t.Fatalf("n = %s is not an integer", *v.N)
		}
	})
	t.Run("embeddings", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/embeddings", `{"input":["func main() {}","package http","func main() {}"]}`)
		var e struct {
			Data []struct {
				Embedding []float64 `json:"embedding"`
			} `json:"data"`
		}
		if status != 200 || json.Unmarshal(body, &e) != nil || len(e.Data) != 3 {
			t.Fatalf("%d %s", status, body)
		}
		for i, d := range e.Data {
			var n float64
			for _, x := range d.Embedding {
				n += x * x
			}
			if len(d.Embedding) != b.Info().EmbeddingLength || math.Abs(math.Sqrt(n)-1) > 1e-3 {
				t.Fatalf("vector %d: length %d, norm %v", i, len(d.Embedding), math.Sqrt(n))
			}
		}
		same, diff := 0.0, 0.0
		for j := range e.Data[0].Embedding {
			same += e.Data[0].Embedding[j] * e.Data[2].Embedding[j]
			diff += e.Data[0].Embedding[j] * e.Data[1].Embedding[j]
		}
		if math.Abs(same-1) > 1e-4 || diff > 0.9999 {
			t.Fatalf("cosine of equal texts %v, of different texts %v", same, diff)
		}
	})
	t.Run("prompt too long", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"`+strings.Repeat("func main() { ", 100)+`"}]}`)
		if status != 400 || !strings.Contains(string(body), "context_length_exceeded") {
			t.Fatalf("%d %s", status, body)
		}
	})
	t.Run("logprobs", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"func main() {"}],"max_tokens":8,"temperature":0,"logprobs":true,"top_logprobs":3}`)
		var c struct {
			Choices []struct {
				Message  wholeMessage  `json:"message"`
				Logprobs *chatLogprobs `json:"logprobs"`
			} `json:"choices"`
			Usage Usage `json:"usage"`
		}
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("%d %s", status, body)
		}
		lp := c.Choices[0].Logprobs
		if lp == nil || len(lp.Content) != c.Usage.CompletionTokens {
			t.Fatalf("%d entries for %d tokens: %s", len(lp.Content), c.Usage.CompletionTokens, body)
		}
		var raw []byte
		for _, e := range lp.Content {
			if len(e.TopLogprobs) != 3 || e.Logprob > 0 || e.TopLogprobs[0].Logprob < e.Logprob-1e-6 || e.TopLogprobs[0].Token != e.Token {
				t.Fatalf("greedy: the token is the most likely: %+v", e)
			}
			for _, x := range e.Bytes {
				raw = append(raw, byte(x))
			}
		}
		if !strings.HasPrefix(string(raw), *c.Choices[0].Message.Content) {
			t.Fatalf("token bytes %q, content %q", raw, *c.Choices[0].Message.Content)
		}
		// logit_bias -100 on the first token: another first token
		first := lp.Content[0].Bytes
		var ban []string // every token with that text
		for id := 0; id < b.Info().VocabSize; id++ {
			if p, _ := b.Piece(int32(id)); string(p) == string(intsBytes(first)) {
				ban = append(ban, fmt.Sprintf(`"%d":-100`, id))
			}
		}
		status, _, body = post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"func main() {"}],"max_tokens":1,"temperature":0,"logprobs":true,"logit_bias":{`+strings.Join(ban, ",")+`}}`)
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("%d %s", status, body)
		}
		if got := c.Choices[0].Logprobs.Content[0]; slices.Equal(got.Bytes, first) {
			t.Fatalf("the banned token was generated: %s", body)
		}
	})
	t.Run("tool_choice named forces a call", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"}],"max_tokens":100,"temperature":0.7,"seed":1,
			"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":8},"unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}}],
			"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`)
		var c struct {
			Choices []struct {
				Message      wholeMessage `json:"message"`
				FinishReason string       `json:"finish_reason"`
			} `json:"choices"`
		}
		if status != 200 || json.Unmarshal(body, &c) != nil {
			t.Fatalf("%d %s", status, body)
		}
		if c.Choices[0].FinishReason != "tool_calls" || len(c.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("no call: %s", body)
		}
		var args struct {
			City *string `json:"city"`
			Unit *string `json:"unit"`
		}
		tc := c.Choices[0].Message.ToolCalls[0]
		if tc.Function.Name != "get_weather" || json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil || args.City == nil || args.Unit == nil || len(*args.City) > 8 {
			t.Fatalf("%+v", tc)
		}
	})
	t.Run("tokenize round trip", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/tokenize", `{"content":"func main() { fmt.Println(\"héllo\") }"}`)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		status, _, body2 := post(t, ts.URL+"/detokenize", string(body))
		if status != 200 || !strings.Contains(string(body2), `héllo`) {
			t.Fatalf("%d %s", status, body2)
		}
	})
}

func intsBytes(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// A server with a q8_0 KV cache (-ctk q8_0 -ctv q8_0) holds its slots in about half the memory
// and serves as the default one does: a greedy stream equals the whole answer.
func TestLlamaBackendQuantizedCache(t *testing.T) {
	f16, _ := llamaTestServer(t, LlamaOptions{})
	b, ts := llamaTestServer(t, LlamaOptions{CacheTypeK: llama.CacheQ8_0, CacheTypeV: llama.CacheQ8_0})
	if got, want := b.KVBytes(), f16.KVBytes()*34/64; got != want {
		t.Errorf("q8_0 KV cache of %d bytes; want %d (F16: %d)", got, want, f16.KVBytes())
	}
	if greedyStreamEqualsWhole(t, ts.URL) == "" {
		t.Fatal("the q8_0 cache's answer is empty")
	}
}
