package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ggml-go/ggml/chat"
	"github.com/ggml-go/ggml/server"
)

// echoBackend is a toy Backend: a token is a byte, and the reply repeats the prompt's last
// line word by word.
type echoBackend struct{}

func (echoBackend) Info() server.ModelInfo {
	return server.ModelInfo{ID: "echo", Slots: 1, ContextLength: 256}
}
func (echoBackend) Tokenize(text string, _, _ bool) []int32 {
	out := make([]int32, len(text))
	for i := range len(text) {
		out[i] = int32(text[i])
	}
	return out
}
func (b echoBackend) CompletionPrompt(text string) []int32 { return b.Tokenize(text, true, true) }
func (b echoBackend) ChatPrompt(_ context.Context, r chat.Request) ([]int32, error) {
	return b.Tokenize(r.Messages[len(r.Messages)-1].Content, true, true), nil
}
func (echoBackend) Piece(t int32) ([]byte, bool) { return []byte{byte(t)}, t >= 0 && t < 256 }
func (echoBackend) Detokenize(toks []int32) ([]byte, error) {
	out := make([]byte, len(toks))
	for i, t := range toks {
		out[i] = byte(t)
	}
	return out, nil
}
func (echoBackend) Generate(ctx context.Context, req server.GenerateRequest, emit func(server.Piece) error) (server.Result, error) {
	res := server.Result{PromptTokens: len(req.Prompt), FinishReason: server.FinishStop}
	prompt := make([]byte, len(req.Prompt))
	for i, t := range req.Prompt {
		prompt[i] = byte(t)
	}
	for i, w := range strings.Fields(string(prompt)) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if i > 0 {
			w = " " + w
		}
		res.CompletionTokens++
		if err := emit(server.Piece{Text: w, Tokens: res.CompletionTokens}); err != nil {
			return res, err
		}
	}
	return res, nil
}
func (echoBackend) Embed(context.Context, []int32) ([]float32, error) {
	return nil, server.ErrNoEmbeddings
}

// A Server over any Backend speaks OpenAI's API; here a streamed chat completion.
func Example() {
	s := server.New(echoBackend{}, server.Config{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"messages":[{"role":"user","content":"hello from Go"}],"stream":true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	fmt.Println(resp.Header.Get("Content-Type"), len(events), "events, the last:", events[len(events)-1])

	resp, err = http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output:
	// text/event-stream 6 events, the last: data: [DONE]
	// 400 {"error":{"message":"messages is empty: send at least one message","type":"invalid_request_error","param":"messages","code":null}}
}
