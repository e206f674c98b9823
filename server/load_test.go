//go:build cgo

package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// defaultModelPath is the embedded default model of cmd/ggml-server.
const defaultModelPath = "../internal/defaultmodel/default.gguf"

var loadPrompts = []string{
	"func main() {", "package http", "// Copyright", "type Reader interface {",
	"import (", "func (b *Buffer) Len() int {", "var ErrShortWrite", "for i := 0; i < n; i++ {",
}

// streamResult is one streamed chat completion read to its end.
type streamResult struct {
	text   string
	finish string
	ttft   time.Duration
	events int
}

// readChatStream checks that a chat completion stream is well-formed (JSON chunks of one id,
// a role first, one finish_reason last, then [DONE]) and returns its text. stopAfter > 0
// stops reading (and cancels) after that many events.
func readChatStream(ctx context.Context, url, prompt string, stopAfter int, cancel func()) (streamResult, error) {
	var r streamResult
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"stream":true,"temperature":0,"max_tokens":24}`, prompt)
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return r, fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	var text strings.Builder
	id, done := "", false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if done {
			return r, fmt.Errorf("data after [DONE]: %q", line)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return r, fmt.Errorf("not an event: %q", line)
		}
		r.events++
		if stopAfter > 0 && r.events >= stopAfter {
			cancel()
			return r, nil
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if r.finish != "" {
			return r, fmt.Errorf("an event after the finish: %s", data)
		}
		var c chatResponse
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return r, fmt.Errorf("bad chunk %q: %v", data, err)
		}
		if id == "" {
			id = c.ID
			if len(c.Choices) != 1 || c.Choices[0].Delta == nil || c.Choices[0].Delta.Role != "assistant" {
				return r, fmt.Errorf("first chunk without the role: %s", data)
			}
		}
		if c.ID != id || c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			return r, fmt.Errorf("bad chunk %s", data)
		}
		if d := c.Choices[0].Delta; d != nil && d.Content != nil && *d.Content != "" {
			if r.ttft == 0 {
				r.ttft = time.Since(t0)
			}
			text.WriteString(*d.Content)
		}
		if f := c.Choices[0].FinishReason; f != nil {
			r.finish = *f
		}
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	if !done || r.finish == "" {
		return r, fmt.Errorf("the stream ended without a finish reason and [DONE]")
	}
	r.text = text.String()
	return r, nil
}

// TestLoad64Clients: 64 concurrent streaming clients against 8 slots, a quarter of them
// disconnecting at random points; every completed stream is well-formed and equal to the
// same request served alone (greedy); nothing leaks.
func TestLoad64Clients(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	baseGoroutines := runtime.NumGoroutine()
	baseLive := ggml.LiveObjects()
	b, err := NewLlamaBackend(defaultModelPath, LlamaOptions{Slots: 8, CtxSize: 8 * 128, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := New(b, Config{QueueSize: 64, RequestTimeout: 2 * time.Minute})
	ts := httptest.NewServer(s.Handler())

	ctx, cancelAll := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancelAll()
	want := map[string]string{}
	for _, p := range loadPrompts {
		r, err := readChatStream(ctx, ts.URL, p, 0, nil)
		if err != nil {
			t.Fatalf("alone %q: %v", p, err)
		}
		want[p] = r.text
	}

	const clients = 64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ttfts []time.Duration
	completed, disconnected := 0, 0
	start := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range clients {
		prompt := loadPrompts[i%len(loadPrompts)]
		stopAfter, after := 0, time.Duration(0)
		switch i % 8 {
		case 3: // disconnects after a random number of events
			stopAfter = 1 + rng.IntN(12)
		case 7: // disconnects after a random time: in the queue, or while generating
			stopAfter, after = -1, time.Duration(rng.IntN(1500))*time.Millisecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if after > 0 {
				cctx, cancel = context.WithTimeout(cctx, after)
				defer cancel()
			}
			r, err := readChatStream(cctx, ts.URL, prompt, stopAfter, cancel)
			mu.Lock()
			defer mu.Unlock()
			if stopAfter != 0 {
				disconnected++
				return
			}
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if r.text != want[prompt] {
				t.Errorf("client %d: %q, alone %q", i, r.text, want[prompt])
			}
			completed++
			ttfts = append(ttfts, r.ttft)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(ttfts)
	pct := func(p float64) time.Duration {
		if len(ttfts) == 0 {
			return 0
		}
		return ttfts[min(len(ttfts)-1, int(p*float64(len(ttfts))))]
	}
	t.Logf("%d clients (%d completed, %d disconnected) against 8 slots in %v; time to first token p50 %v, p99 %v",
		clients, completed, disconnected, elapsed.Round(time.Millisecond), pct(0.5).Round(time.Millisecond), pct(0.99).Round(time.Millisecond))
	if completed != 48 {
		t.Errorf("%d completed streams, want 48", completed)
	}

	// every slot comes back
	deadline := time.Now().Add(10 * time.Second)
	for s.lim.active.Load() != 0 || s.lim.waiting.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("slots still busy: %d active, %d waiting", s.lim.active.Load(), s.lim.waiting.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use after the run: %.1f MiB", float64(ms.HeapInuse)/(1<<20))
	if ms.HeapInuse > 512<<20 {
		t.Errorf("heap in use %d bytes after the run", ms.HeapInuse)
	}
	ts.Close()
	http.DefaultClient.CloseIdleConnections()
	b.Close()
	if n := ggml.LiveObjects(); n != baseLive {
		t.Errorf("live native objects %d, before %d: %v", n, baseLive, ggml.LiveObjectsByKind())
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > baseGoroutines+2; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines %d, before %d:\n%s", runtime.NumGoroutine(), baseGoroutines, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
