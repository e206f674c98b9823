package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures a Server. Zero fields take the defaults given.
type Config struct {
	APIKey         string        // when set, /v1/*, /tokenize and /detokenize need "Authorization: Bearer APIKey" (or "x-api-key: APIKey")
	MaxBodyBytes   int64         // request body limit; default 4 MiB
	QueueSize      int           // requests that may wait for a slot; default 64; < 0: none
	RequestTimeout time.Duration // per request, queueing included; default 10 minutes
	RetryAfter     time.Duration // the Retry-After of a 429; default 1 s
	Logger         *slog.Logger  // default: slog.Default()
}

// Server is the HTTP server over a Backend. Create it with New and serve Handler.
type Server struct {
	b        Backend
	info     ModelInfo
	cfg      Config
	lim      *limiter
	met      *metrics
	mux      *http.ServeMux
	draining atomic.Bool
	inflight sync.WaitGroup
}

// New returns a Server for b.
func New(b Backend, cfg Config) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 20
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 64
	} else if cfg.QueueSize < 0 {
		cfg.QueueSize = 0
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Minute
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	info := b.Info()
	if info.Slots < 1 {
		info.Slots = 1
	}
	s := &Server{b: b, info: info, cfg: cfg, lim: newLimiter(info.Slots, cfg.QueueSize)}
	s.met = newMetrics(s.lim, info.Slots)
	s.routes()
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Drain makes the server refuse new model requests (503) and /health report draining, then
// waits until the requests in flight end or ctx is done. Call it before
// http.Server.Shutdown on SIGTERM.
func (s *Server) Drain(ctx context.Context) error {
	s.draining.Store(true)
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle("POST /v1/chat/completions", "chat", true, s.chatCompletions)
	s.handle("POST /v1/completions", "completions", true, s.completions)
	s.handle("POST /v1/responses", "responses", true, s.responses)
	// (Anthropic's routes check the key themselves, to answer in Anthropic's error shape)
	s.handle("POST /v1/messages", "messages", false, s.messages)
	s.handle("POST /v1/messages/count_tokens", "messages", false, s.countTokens)
	s.handle("POST /v1/embeddings", "embeddings", true, s.embeddings)
	s.handle("GET /v1/models", "models", true, s.models)
	s.handle("GET /v1/models/{model}", "models", true, s.model)
	s.mux.HandleFunc("/v1/responses/{id}", s.storedResponse)
	s.mux.HandleFunc("/v1/responses/{id}/{op}", s.storedResponse)
	s.handle("POST /tokenize", "tokenize", true, s.tokenize)
	s.handle("POST /detokenize", "detokenize", true, s.detokenize)
	s.handle("GET /health", "health", false, s.health)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.met.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("no endpoint %s %s (see /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages, /v1/embeddings, /v1/models, /tokenize, /detokenize, /health, /metrics)", r.Method, r.URL.Path)})
	})
	// the same paths without /v1, as llama.cpp's server also answers them
	s.handle("POST /chat/completions", "chat", true, s.chatCompletions)
	s.handle("POST /completions", "completions", true, s.completions)
	s.handle("POST /responses", "responses", true, s.responses)
	s.handle("POST /embeddings", "embeddings", true, s.embeddings)
	s.handle("GET /models", "models", true, s.models)
}

// statusWriter records the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handle registers h with authentication (when auth and an API key is set), metrics and a
// recovered panic turned into a 500.
func (s *Server) handle(pattern, endpoint string, auth bool, h func(http.ResponseWriter, *http.Request)) {
	method, path, _ := strings.Cut(pattern, " ")
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method)
		writeError(w, &APIError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
			Message: fmt.Sprintf("%s %s: this endpoint takes %s", r.Method, path, method)})
	})
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.cfg.Logger.Error("panic in handler", "endpoint", endpoint, "panic", p)
				if sw.status == 0 {
					writeError(sw, serverError("internal error: %v", p))
				}
			}
			code := sw.status
			if code == 0 {
				code = http.StatusOK
			}
			s.met.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
			s.met.latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		}()
		if auth && s.cfg.APIKey != "" && !s.authorized(r) {
			writeError(sw, &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: strp("invalid_api_key"),
				Message: "missing or wrong API key: send the header \"Authorization: Bearer <key>\" with the server's --api-key"})
			return
		}
		h(sw, r)
	})
}

// authorized reports whether r carries the API key: "Authorization: Bearer KEY" (OpenAI's
// clients) or "x-api-key: KEY" (Anthropic's).
func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		if tok = r.Header.Get("x-api-key"); tok == "" {
			return false
		}
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.APIKey)) == 1
}

// admit takes a slot for a model request, answering the error itself when it cannot: 503
// while draining, 429 with Retry-After when the queue is full, 504 when the request's time
// ran out in the queue. release must be called when ok.
func (s *Server) admit(w http.ResponseWriter, ctx context.Context) (release func(), ok bool) {
	if s.draining.Load() {
		writeError(w, &APIError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: strp("shutting_down"), Message: "the server is shutting down: retry on another instance"})
		return nil, false
	}
	s.inflight.Add(1)
	if err := s.lim.acquire(ctx); err != nil {
		s.inflight.Done()
		switch {
		case errors.Is(err, errQueueFull):
			s.met.rejected.Inc()
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(s.cfg.RetryAfter/time.Second))))
			writeError(w, &APIError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: strp("queue_full"),
				Message: fmt.Sprintf("the server is busy: %d slots in use and %d requests queued; retry later", s.info.Slots, s.cfg.QueueSize)})
		default:
			s.ctxError(w, ctx)
		}
		return nil, false
	}
	return func() { s.lim.release(); s.inflight.Done() }, true
}

// ctxError answers a request whose context ended: 504 on timeout; nothing when the client
// went away.
func (s *Server) ctxError(w http.ResponseWriter, ctx context.Context) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		writeError(w, &APIError{Status: http.StatusGatewayTimeout, Type: "timeout_error", Code: strp("timeout"),
			Message: fmt.Sprintf("the request took longer than the server's limit of %v", s.cfg.RequestTimeout)})
		return
	}
	writeError(w, &APIError{Status: 499, Type: "invalid_request_error", Message: "the client closed the request"})
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
