//go:build cgo

package llama

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/tokenizer"
)

// ErrQueueFull is returned by Engine.Generate when every slot is busy and the queue of
// waiting requests is full (a server answers 429 and asks the client to retry later).
var ErrQueueFull = errors.New("llama: the engine's queue is full")

// ErrEngineClosed is returned for requests made after Close, and ends the requests that
// Close cancels. It wraps ggml.ErrClosed.
var ErrEngineClosed = fmt.Errorf("llama: the engine is closed: %w", ggml.ErrClosed)

// EngineOptions configures an Engine.
type EngineOptions struct {
	// Parallel is the number of sequences generated at once (slots; at most MaxSequences;
	// <= 0: 4). Each decode step evaluates one token of every active sequence in one graph.
	Parallel int
	// ContextSize is the number of KV cells of each sequence: the longest prompt plus
	// generation of one request (<= 0: 512). The cache holds Parallel × ContextSize cells,
	// each of n_layer × (K width + V width) values (2 bytes each in F16): 22.5 KiB per cell
	// for TinyLlama (22 layers, 4 KV heads of 64), so 11 MiB per slot of 512 cells; Engine.KVBytes
	// gives the total. Every token attends over the cells in use by all sequences (masked),
	// so attention costs grow with Parallel × ContextSize.
	ContextSize int
	// BatchSize is the most tokens evaluated in one graph: prompts are evaluated in chunks
	// that share the graph with the decode steps of the other sequences (<= 0: 512).
	BatchSize int
	// Threads sets the model's CPU threads when > 0 (Model.SetThreads).
	Threads int
	// QueueSize is the number of requests that may wait for a slot (<= 0: 4 × Parallel).
	// Beyond it Generate fails with ErrQueueFull.
	QueueSize int
	// KVF32 keeps K and V in F32 instead of F16.
	KVF32 bool
	// TypeK and TypeV are the types of the cached keys and values (ContextOptions): q8_0 takes
	// 17 bytes per 16 values instead of 32, so q8_0 for both holds a slot in about half the memory.
	TypeK, TypeV CacheType
	// OnStep, when set, is called by the engine's goroutine after every evaluation with
	// what it did (for metrics: batch sizes, tokens, step latency). It must return quickly.
	OnStep func(StepInfo)
}

// StepInfo describes one evaluation of the engine: a graph of Tokens tokens from Sequences
// sequences (PromptTokens of them from prompts), which took Duration.
type StepInfo struct {
	Tokens, Sequences, PromptTokens int
	Duration                        time.Duration
}

// EngineStats are the engine's gauges and counters since NewEngine.
type EngineStats struct {
	Queued, Active                           int    // requests waiting, requests in slots
	Requests, Finished, Cancelled, Failed    uint64 // accepted requests and how they ended
	Rejected                                 uint64 // refused with ErrQueueFull
	PromptTokens, CachedTokens, GenTokens    uint64 // prompt tokens (evaluated + reused), reused, generated
	Steps                                    uint64 // evaluations
	LastBatchTokens, LastBatchSeqs, Parallel int
}

// Engine serves generations from many goroutines with one Model: a single goroutine owns
// a Context with a slot (a sequence) per parallel request and runs continuous batching:
// between two steps new requests take free slots and finished or cancelled ones leave, and
// every step evaluates the next token of every generating sequence, with chunks of new
// prompts, in one graph. A new prompt reuses the cells of the longest prefix it shares
// with a sequence in the cache (a system prompt is evaluated once; its cells are shared,
// not copied). The Engine owns the Model's evaluation: do not use the Model's Contexts
// while it runs. Close it before the Model.
type Engine struct {
	m        *Model
	tok      *tokenizer.Tokenizer
	c        *Context
	opt      EngineOptions
	queue    chan *engineRequest
	jobs     chan *engineJob // work run by the engine's goroutine between steps (Embed)
	embed    *Context        // the context of Embed for decoder models (made on first use)
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	mu       sync.RWMutex // guards closed against submissions
	closed   bool         // no new requests
	quitOnce sync.Once
	slots    []*slot

	queued, active                             atomic.Int64
	requests, finished, cancelled, failed      atomic.Uint64
	rejected, promptToks, cachedToks, genToks  atomic.Uint64
	steps, lastBatchTokens, lastBatchSequences atomic.Uint64
}

// engineRequest is a request on its way through the engine; the engine's goroutine appends
// pieces to out and signals ready, the caller's goroutine takes them.
type engineRequest struct {
	ctx     context.Context
	prompt  []int32
	gen     *genSeq
	mu      sync.Mutex
	out     []Piece
	err     error
	ended   bool
	ready   chan struct{} // capacity 1
	dropped atomic.Bool   // the caller stopped reading
}

func (r *engineRequest) push(p Piece, err error, last bool) {
	r.mu.Lock()
	r.out = append(r.out, p)
	if err != nil {
		r.err = err
	}
	r.ended = r.ended || last
	r.mu.Unlock()
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

// slot is one sequence of the engine's context.
type slot struct {
	seq     int
	req     *engineRequest
	tokens  []int32 // the tokens whose cells sequence seq holds, by position
	pending []int32 // prompt tokens still to evaluate
	next    int32   // the sampled token to evaluate, when generating
	started time.Time
}

// NewEngine starts an engine on m.
func NewEngine(m *Model, opt EngineOptions) (*Engine, error) {
	if err := m.checkOpen("NewEngine"); err != nil {
		return nil, err
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 4
	}
	if opt.Parallel > MaxSequences {
		return nil, fmt.Errorf("llama: Parallel = %d: at most %d sequences", opt.Parallel, MaxSequences)
	}
	if opt.ContextSize <= 0 {
		opt.ContextSize = 512
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 512
	}
	if opt.QueueSize <= 0 {
		opt.QueueSize = 4 * opt.Parallel
	}
	if opt.Threads > 0 {
		if err := m.SetThreads(opt.Threads); err != nil {
			return nil, err
		}
	}
	tok, err := m.Tokenizer()
	if err != nil {
		return nil, err
	}
	c, err := m.NewContext(ContextOptions{NCtx: opt.Parallel * opt.ContextSize, NBatch: opt.BatchSize, KVF32: opt.KVF32, TypeK: opt.TypeK, TypeV: opt.TypeV})
	if err != nil {
		return nil, err
	}
	e := &Engine{m: m, tok: tok, c: c, opt: opt, queue: make(chan *engineRequest, opt.QueueSize), jobs: make(chan *engineJob, opt.QueueSize),
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	for i := 0; i < opt.Parallel; i++ {
		e.slots = append(e.slots, &slot{seq: i})
	}
	go e.loop()
	return e, nil
}

// Model returns the engine's model.
func (e *Engine) Model() *Model { return e.m }

// Tokenize returns the tokens of text (with the vocabulary's BOS/EOS when addSpecial,
// special tokens written in the text read as such when parseSpecial). Safe for concurrent use.
func (e *Engine) Tokenize(text string, addSpecial, parseSpecial bool) []int32 {
	return e.tok.Tokenize(text, addSpecial, parseSpecial)
}

// Detokenize returns the text of tokens as a user sees it (control tokens give nothing).
func (e *Engine) Detokenize(tokens []int32) (string, error) {
	var b []byte
	for i, t := range tokens {
		if t < 0 || int(t) >= e.tok.NumTokens() {
			return "", fmt.Errorf("llama: token %d (at index %d) is outside the vocabulary of %d tokens", t, i, e.tok.NumTokens())
		}
		b = e.tok.AppendText(b, t)
	}
	return validUTF8(b), nil
}

// KVBytes returns the size of the engine's KV cache.
func (e *Engine) KVBytes() uint64 { return e.c.KVBytes() }

// Options returns the options in effect (defaults filled in).
func (e *Engine) Options() EngineOptions { return e.opt }

// Stats returns the engine's gauges and counters.
func (e *Engine) Stats() EngineStats {
	return EngineStats{
		Queued: int(e.queued.Load()), Active: int(e.active.Load()),
		Requests: e.requests.Load(), Finished: e.finished.Load(), Cancelled: e.cancelled.Load(), Failed: e.failed.Load(),
		Rejected: e.rejected.Load(), PromptTokens: e.promptToks.Load(), CachedTokens: e.cachedToks.Load(), GenTokens: e.genToks.Load(),
		Steps: e.steps.Load(), LastBatchTokens: int(e.lastBatchTokens.Load()), LastBatchSeqs: int(e.lastBatchSequences.Load()),
		Parallel: e.opt.Parallel,
	}
}

// Generate queues req and returns the stream of its pieces, as Context.Generate does: the
// last piece has the finish reason and the usage; ctx cancels the request wherever it is
// (queued, in its prompt, generating) and ends the stream with FinishCancelled and
// ctx.Err(); breaking out of the loop cancels it too. Errors found before queueing (an
// empty or too long prompt: ErrPromptTooLong; a full queue: ErrQueueFull; a closed engine:
// ErrEngineClosed; bad sampling parameters) are yielded at once with an empty piece. Safe
// for concurrent use.
func (e *Engine) Generate(ctx context.Context, req Request) iter.Seq2[Piece, error] {
	return func(yield func(Piece, error) bool) {
		r, err := e.submit(ctx, &req)
		if err != nil {
			yield(Piece{}, err)
			return
		}
		defer r.dropped.Store(true) // lets the engine free the slot when the caller stops early
		var batch []Piece
		for {
			select {
			case <-r.ready:
			case <-ctx.Done():
				r.dropped.Store(true)
				e.signal()
				u := Usage{PromptTokens: len(r.prompt)}
				yield(Piece{Finish: FinishCancelled, Usage: u}, ctx.Err())
				return
			}
			r.mu.Lock()
			batch = append(batch[:0], r.out...)
			r.out = r.out[:0]
			ended, rerr := r.ended, r.err
			r.mu.Unlock()
			for i, p := range batch {
				var err error
				if i == len(batch)-1 && ended {
					err = rerr
				}
				if !yield(p, err) {
					return
				}
			}
			if ended {
				return
			}
		}
	}
}

// submit validates and queues a request.
func (e *Engine) submit(ctx context.Context, req *Request) (*engineRequest, error) {
	if e.m.arch.encoder {
		return nil, fmt.Errorf("llama: %s models are encoders: they make embeddings (Engine.Embed), not text", e.m.HP.Arch)
	}
	prompt, err := e.m.promptTokens(req)
	if err != nil {
		return nil, err
	}
	if len(prompt) > e.opt.ContextSize {
		return nil, fmt.Errorf("%w: it has %d tokens and a sequence holds %d (EngineOptions.ContextSize): shorten the prompt or use a larger context",
			ErrPromptTooLong, len(prompt), e.opt.ContextSize)
	}
	gen, err := newGenSeq(e.m, req, prompt)
	if err != nil {
		return nil, err
	}
	r := &engineRequest{ctx: ctx, prompt: prompt, gen: gen, ready: make(chan struct{}, 1)}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrEngineClosed
	}
	select {
	case e.queue <- r:
	default:
		e.rejected.Add(1)
		return nil, fmt.Errorf("%w (%d requests waiting for %d slots): retry later", ErrQueueFull, len(e.queue), e.opt.Parallel)
	}
	e.queued.Add(1)
	e.requests.Add(1)
	e.signal()
	return r, nil
}

// signal wakes the engine's goroutine.
func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Close stops the engine: requests still queued or generating end with ErrEngineClosed
// (their streams yield it with a piece whose Finish is FinishCancelled), the engine's
// goroutine exits and the Context is freed. Idempotent, returns nil. Use Shutdown to let the
// requests finish first.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.quitOnce.Do(func() { close(e.quit) })
	<-e.done
	return nil
}

// Shutdown stops accepting requests, waits until the queued and active ones finish or ctx
// is done, then closes the engine. It returns ctx.Err() when it had to cancel requests.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true // refuse new requests; the loop keeps serving
	e.mu.Unlock()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for e.queued.Load() > 0 || e.active.Load() > 0 {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break wait
		case <-e.done:
			break wait
		case <-tick.C:
		}
	}
	e.quitOnce.Do(func() { close(e.quit) })
	<-e.done
	return err
}

// engineJob is a function the engine's goroutine runs between two steps.
type engineJob struct {
	run       func()
	done      chan struct{}
	cancelled atomic.Bool
}

// do runs fn on the engine's goroutine (which owns the model's evaluation) and waits for it.
func (e *Engine) do(ctx context.Context, fn func()) error {
	j := &engineJob{run: fn, done: make(chan struct{})}
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return ErrEngineClosed
	}
	select {
	case e.jobs <- j:
	default:
		e.mu.RUnlock()
		e.rejected.Add(1)
		return fmt.Errorf("%w (%d jobs waiting): retry later", ErrQueueFull, len(e.jobs))
	}
	e.mu.RUnlock()
	e.signal()
	select {
	case <-j.done:
		if j.cancelled.Load() {
			return ErrEngineClosed
		}
		return nil
	case <-ctx.Done():
		j.cancelled.Store(true)
		return ctx.Err()
	}
}

// Embed returns embeddings of text (tokenized as Request.Prompt is) made as Context.Embed
// makes them, evaluated by the engine's goroutine between two decode steps (so it is safe
// to call from any goroutine while generations run). Encoder models (bert) serve Embed only.
// The input must fit in ContextSize tokens (ErrPromptTooLong otherwise).
func (e *Engine) Embed(ctx context.Context, text string, opt EmbedOptions) ([][]float32, error) {
	toks, err := e.m.promptTokens(&Request{Prompt: text})
	if err != nil {
		return nil, err
	}
	return e.EmbedTokens(ctx, toks, opt)
}

// EmbedTokens is Embed for tokens.
func (e *Engine) EmbedTokens(ctx context.Context, tokens []int32, opt EmbedOptions) ([][]float32, error) {
	if len(tokens) > e.opt.ContextSize {
		return nil, fmt.Errorf("%w: it has %d tokens and a sequence holds %d (EngineOptions.ContextSize)", ErrPromptTooLong, len(tokens), e.opt.ContextSize)
	}
	var out [][]float32
	var err error
	if jerr := e.do(ctx, func() {
		c := e.c
		if !e.m.arch.encoder {
			if e.embed == nil {
				if e.embed, err = e.m.NewContext(ContextOptions{NCtx: e.opt.ContextSize, NBatch: e.opt.BatchSize}); err != nil {
					return
				}
			}
			c = e.embed
		}
		out, err = c.Embed(tokens, opt)
	}); jerr != nil {
		return nil, jerr
	}
	return out, err
}
