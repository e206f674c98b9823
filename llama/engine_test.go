//go:build cgo

package llama

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
)

// goroutineCheck asserts at the end of the test that the goroutines are back to their
// number at the start (waiting up to 2 s for them to exit).
func goroutineCheck(t *testing.T) {
	start := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > start && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.LessOrEqual(t, runtime.NumGoroutine(), start, "goroutines left behind")
	})
}

// engineResult is what a stream gave.
type engineResult struct {
	text   string
	tokens []int32
	last   Piece
	err    error
}

func runStream(seq func(func(Piece, error) bool)) engineResult {
	var r engineResult
	for p, err := range seq {
		r.text += p.Text
		r.tokens = append(r.tokens, p.Tokens...)
		r.last = p
		if err != nil {
			r.err = err
		}
	}
	return r
}

// Many goroutines share one engine: every request gives the tokens it gives alone, prompts
// with a common prefix reuse its cells, and nothing leaks.
func TestEngineConcurrentRequests(t *testing.T) {
	leakCheck(t)
	goroutineCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 31, NHead: 4, NHeadKV: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	prompts := make([]string, 12)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("System: be brief. User %d asks about %c", i, 'a'+i)
	}
	// alone, one by one
	want := make([]engineResult, len(prompts))
	c, err := m.NewContext(ContextOptions{NCtx: 128, KVF32: true})
	require.NoError(t, err)
	for i, p := range prompts {
		want[i] = runStream(c.Generate(context.Background(), Request{Prompt: p, MaxTokens: 6 + i%5}))
		require.NoError(t, want[i].err)
	}
	c.Close()

	var steps, maxSeqs int
	var mu sync.Mutex
	e, err := NewEngine(m, EngineOptions{Parallel: 4, ContextSize: 64, BatchSize: 32, KVF32: true, QueueSize: 16,
		OnStep: func(s StepInfo) {
			mu.Lock()
			steps++
			maxSeqs = max(maxSeqs, s.Sequences)
			mu.Unlock()
		}})
	require.NoError(t, err)
	got := make([]engineResult, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = runStream(e.Generate(context.Background(), Request{Prompt: p, MaxTokens: 6 + i%5}))
		}()
	}
	wg.Wait()
	for i := range prompts {
		require.NoError(t, got[i].err, "request %d", i)
		assert.Equal(t, want[i].tokens, got[i].tokens, "request %d", i)
		assert.Equal(t, want[i].text, got[i].text, "request %d", i)
		assert.Equal(t, want[i].last.Finish, got[i].last.Finish)
		assert.Equal(t, want[i].last.Usage.PromptTokens, got[i].last.Usage.PromptTokens)
		assert.Equal(t, want[i].last.Usage.GeneratedTokens, got[i].last.Usage.GeneratedTokens)
	}
	st := e.Stats()
	assert.Equal(t, uint64(len(prompts)), st.Requests)
	assert.Equal(t, uint64(len(prompts)), st.Finished)
	assert.Zero(t, st.Active)
	assert.Zero(t, st.Queued)
	assert.Greater(t, st.CachedTokens, uint64(0), "the common prefix is reused")
	mu.Lock()
	assert.Greater(t, maxSeqs, 1, "sequences were batched")
	assert.Equal(t, uint64(steps), st.Steps)
	mu.Unlock()
	t.Logf("stats: %+v", st)

	// a second round of the same prompts reuses the cached prompts
	again := runStream(e.Generate(context.Background(), Request{Prompt: prompts[3], MaxTokens: 6 + 3%5}))
	require.NoError(t, again.err)
	assert.Equal(t, want[3].tokens, again.tokens)
	assert.Greater(t, again.last.Usage.CachedTokens, 0)
	require.NoError(t, e.Close())
	require.NoError(t, e.Close())
	r := runStream(e.Generate(context.Background(), Request{Prompt: "x"}))
	assert.ErrorIs(t, r.err, ErrEngineClosed)
}

// Cancelling a request (its context, or by leaving the loop) frees its slot at once; a full
// queue says so; a prompt longer than a sequence's context is refused; Close ends what runs.
func TestEngineCancelQueueClose(t *testing.T) {
	leakCheck(t)
	goroutineCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 8}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	e, err := NewEngine(m, EngineOptions{Parallel: 1, ContextSize: 256, QueueSize: 1})
	require.NoError(t, err)

	// a long request holds the only slot; one more waits; a third is refused
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	first := make(chan engineResult)
	go func() {
		n := 0
		var r engineResult
		for p, err := range e.Generate(ctx, Request{Prompt: "Once", MaxTokens: -1}) {
			if n++; n == 1 {
				close(started)
			}
			r.last, r.err = p, err
		}
		first <- r
	}()
	<-started
	second := make(chan engineResult)
	go func() { second <- runStream(e.Generate(context.Background(), Request{Prompt: "Twice", MaxTokens: 3})) }()
	require.Eventually(t, func() bool { return e.Stats().Queued == 1 }, 5*time.Second, time.Millisecond)
	r := runStream(e.Generate(context.Background(), Request{Prompt: "Thrice"}))
	assert.ErrorIs(t, r.err, ErrQueueFull)
	assert.Equal(t, uint64(1), e.Stats().Rejected)
	cancel()
	r = <-first
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.Equal(t, FinishCancelled, r.last.Finish)
	r = <-second
	require.NoError(t, r.err)
	assert.Equal(t, FinishLength, r.last.Finish)
	assert.Len(t, r.tokens, 3)

	// leaving the loop early cancels the request
	for range e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: -1}) {
		break
	}
	require.Eventually(t, func() bool { return e.Stats().Active == 0 }, 5*time.Second, time.Millisecond)

	long := make([]int32, 257)
	for i := range long {
		long[i] = 7
	}
	r = runStream(e.Generate(context.Background(), Request{Tokens: long}))
	assert.True(t, errors.Is(r.err, ErrPromptTooLong), "%v", r.err)

	// Close ends a running request with ErrEngineClosed
	running := make(chan engineResult)
	started = make(chan struct{})
	go func() {
		n := 0
		var r engineResult
		for p, err := range e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: -1}) {
			if n++; n == 1 {
				close(started)
			}
			r.last, r.err = p, err
		}
		running <- r
	}()
	<-started
	require.NoError(t, e.Close())
	r = <-running
	assert.ErrorIs(t, r.err, ErrEngineClosed)
	assert.Equal(t, FinishCancelled, r.last.Finish)
}

// Shutdown lets running requests finish.
func TestEngineShutdown(t *testing.T) {
	leakCheck(t)
	goroutineCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 8}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	e, err := NewEngine(m, EngineOptions{Parallel: 2, ContextSize: 64})
	require.NoError(t, err)
	res := make(chan engineResult, 2)
	started := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() {
			var r engineResult
			n := 0
			for p, err := range e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: 20}) {
				if n++; n == 1 {
					started <- struct{}{}
				}
				r.last, r.err = p, err
				r.tokens = append(r.tokens, p.Tokens...)
			}
			res <- r
		}()
	}
	<-started
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, e.Shutdown(ctx))
	for i := 0; i < 2; i++ {
		r := <-res
		require.NoError(t, r.err)
		assert.Len(t, r.tokens, 20)
	}
	r := runStream(e.Generate(context.Background(), Request{Prompt: "x"}))
	assert.ErrorIs(t, r.err, ErrEngineClosed)
}

// Embed runs on the engine's goroutine between decode steps, for decoders (next to running
// generations) and encoders (which serve embeddings only), and gives Context.Embed's vectors.
func TestEngineEmbed(t *testing.T) {
	leakCheck(t)
	goroutineCheck(t)
	for _, arch := range []string{"llama", "bert"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			require.NoError(t, WriteRandomModel(path, RandomConfig{Arch: arch, Type: gguf.TypeF32, Seed: 4}))
			m, err := Load(path, Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			opt := EmbedOptions{Pooling: PoolingMean, Normalize: true}
			c, err := m.NewContext(ContextOptions{NCtx: 64})
			require.NoError(t, err)
			toks, err := m.promptTokens(&Request{Prompt: "hello there"})
			require.NoError(t, err)
			want, err := c.Embed(toks, opt)
			require.NoError(t, err)
			c.Close()

			e, err := NewEngine(m, EngineOptions{Parallel: 2, ContextSize: 64})
			require.NoError(t, err)
			defer e.Close()
			var wg sync.WaitGroup
			if !IsEncoder(arch) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := runStream(e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: 20}))
					assert.NoError(t, r.err)
				}()
			} else {
				r := runStream(e.Generate(context.Background(), Request{Prompt: "Once"}))
				assert.ErrorContains(t, r.err, "encoder")
			}
			for i := 0; i < 3; i++ {
				got, err := e.Embed(context.Background(), "hello there", opt)
				require.NoError(t, err)
				require.Len(t, got, 1)
				assert.InDeltaSlice(t, want[0], got[0], 1e-5)
			}
			wg.Wait()
			long := make([]int32, 65)
			_, err = e.EmbedTokens(context.Background(), long, opt)
			assert.ErrorIs(t, err, ErrPromptTooLong)
		})
	}
}

// Many clients, some of which cancel at random points: every completed stream equals the
// same request served alone, every cancelled one ends with FinishCancelled, the counters add
// up and nothing leaks.
func TestEngineRandomCancellations(t *testing.T) {
	leakCheck(t)
	goroutineCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 12, NHead: 4, NHeadKV: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	const n = 24
	req := func(i int) Request {
		return Request{Prompt: fmt.Sprintf("Shared system prompt. Client %d", i%6), MaxTokens: 8 + i%4}
	}
	want := map[int]engineResult{}
	c, err := m.NewContext(ContextOptions{NCtx: 64, KVF32: true})
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		want[i] = runStream(c.Generate(context.Background(), req(i)))
	}
	c.Close()
	e, err := NewEngine(m, EngineOptions{Parallel: 4, ContextSize: 64, KVF32: true, QueueSize: n})
	require.NoError(t, err)
	got := make([]engineResult, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopAt := -1
			if i%3 == 1 {
				stopAt = i % 5 // cancel after this many pieces (0: while queued or in the prompt)
			}
			if stopAt == 0 {
				cancel()
			}
			k := 0
			for p, err := range e.Generate(ctx, req(i)) {
				got[i].text += p.Text
				got[i].tokens = append(got[i].tokens, p.Tokens...)
				got[i].last, got[i].err = p, err
				if k++; k == stopAt {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	cancelled := 0
	for i := 0; i < n; i++ {
		if got[i].last.Finish == FinishCancelled {
			cancelled++
			assert.ErrorIs(t, got[i].err, context.Canceled, "request %d", i)
			continue
		}
		require.NoError(t, got[i].err, "request %d", i)
		assert.Equal(t, want[i].tokens, got[i].tokens, "request %d", i)
		assert.Equal(t, want[i].text, got[i].text, "request %d", i)
	}
	assert.Greater(t, cancelled, 0)
	require.Eventually(t, func() bool {
		st := e.Stats()
		return st.Active == 0 && st.Queued == 0 && st.Finished+st.Cancelled == n
	}, 5*time.Second, time.Millisecond, "%+v", e.Stats())
	require.NoError(t, e.Close())
}
