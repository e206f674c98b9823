//go:build cgo

package server

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
)

// TestLlamaBackend drives the adapter over the default model through the HTTP API.
func TestLlamaBackend(t *testing.T) {
	live := ggml.LiveObjects()
	b, err := NewLlamaBackend(defaultModelPath, LlamaOptions{Slots: 2, CtxSize: 2 * 128, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(b, Config{}).Handler())
	defer func() {
		ts.Close()
		b.Close()
		if n := ggml.LiveObjects(); n != live {
			t.Errorf("live objects %d, before %d", n, live)
		}
	}()

	t.Run("greedy stream equals whole", func(t *testing.T) {
		status, _, body := post(t, ts.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"func main() {"}],"max_tokens":24,"temperature":0}`)
		var whole chatResponse
		if status != 200 || json.Unmarshal(body, &whole) != nil {
			t.Fatalf("%d %s", status, body)
		}
		r, err := readChatStream(t.Context(), ts.URL, "func main() {", 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.text != *whole.Choices[0].Message.Content || r.finish != *whole.Choices[0].FinishReason {
			t.Fatalf("stream %q (%s), whole %q (%s)", r.text, r.finish, *whole.Choices[0].Message.Content, *whole.Choices[0].FinishReason)
		}
		if whole.Usage.CompletionTokens != 24 && r.finish == "length" {
			t.Fatalf("usage %+v", whole.Usage)
		}
	})
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
