//go:build cgo

// Command ggml-server serves a GGUF model over an OpenAI-compatible HTTP API (package
// server): /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models, /tokenize,
// /detokenize, /health, /metrics and a chat page at /. Without -m it serves the embedded
// default model (a small model trained on Go code).
//
// Usage:
//
//	ggml-server [-m MODEL.gguf] [--host 127.0.0.1] [--port 8080] [-np 4] [-c 0] [-t N]
//	            [--api-key KEY] [--max-body 4194304] [--queue 64] [--timeout 10m]
//
// SIGINT or SIGTERM stops accepting requests, lets those in flight finish (up to
// --drain-timeout), then exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/internal/defaultmodel"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/server"
)

func main() {
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	ggml.WriteProfile(os.Stderr) // GGML_X_PROFILE=1 or 2: the CPU engine's time per op, at exit
	os.Exit(code)
}

type options struct {
	model, host, apiKey, alias string
	port, slots, ctx, threads  int
	queue                      int
	maxBody                    int64
	timeout, drain             time.Duration
	noMmap                     bool
	typeK, typeV               llama.CacheType
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := cli.New("ggml-server", "[-m MODEL.gguf] [--host 127.0.0.1] [--port 8080] [-np N] [flags]")
	fs.SetOutput(stdout, stderr)
	fs.String(&o.model, "m,model", "FILE", "", "model file (GGUF); default: the embedded default model")
	fs.String(&o.alias, "a,alias", "NAME", "", "model name in responses (default: the file's general.name)")
	fs.String(&o.host, "host", "ADDR", "127.0.0.1", "address to listen on")
	fs.Int(&o.port, "port", "N", 8080, "port to listen on (0: any free port, printed at start)")
	fs.Int(&o.slots, "np,parallel", "N", 4, "slots: sequences generated at once")
	fs.Int(&o.ctx, "c,ctx-size", "N", 0, "total context, split evenly between the slots (0: the model's training context per slot, at most 4096)")
	fs.Int(&o.threads, "t,threads", "N", llama.DefaultThreads(), "CPU threads")
	fs.Var(&o.typeK, "ctk,cache-type-k", "TYPE", "type of the cached keys: f16, f32, q8_0, q4_0, q4_1, q5_0, q5_1 (-ctk q8_0 -ctv q8_0 holds a slot in about half the memory)")
	fs.Var(&o.typeV, "ctv,cache-type-v", "TYPE", "type of the cached values, as -ctk")
	fs.Bool(&o.noMmap, "no-mmap", false, "read the model into memory instead of mapping it (slower to load; the file may then change while the server runs)")
	fs.String(&o.apiKey, "api-key", "KEY", "", "require \"Authorization: Bearer KEY\" or \"x-api-key: KEY\" (also read from $GGML_SERVER_API_KEY)")
	fs.Int64(&o.maxBody, "max-body", "BYTES", 4<<20, "largest request body accepted (413 above)")
	fs.Int(&o.queue, "queue", "N", 64, "requests that may wait for a slot (429 with Retry-After above)")
	fs.Duration(&o.timeout, "timeout", "DURATION", 10*time.Minute, "per-request time limit, queueing included")
	fs.Duration(&o.drain, "drain-timeout", "DURATION", 30*time.Second, "on SIGTERM, how long requests in flight may take to finish")
	if err := fs.Parse(args, false); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.apiKey == "" {
		o.apiKey = os.Getenv("GGML_SERVER_API_KEY")
	}
	switch {
	case o.slots < 1 || o.slots > 256:
		fmt.Fprintf(stderr, "ggml-server: -np %d: give 1 to 256 slots\n", o.slots)
		return 2
	case o.maxBody < 1024 || o.maxBody > 256<<20:
		fmt.Fprintf(stderr, "ggml-server: --max-body %d: give 1 KiB to 256 MiB\n", o.maxBody)
		return 2
	case o.port < 0 || o.port > 65535:
		fmt.Fprintf(stderr, "ggml-server: --port %d is not a port\n", o.port)
		return 2
	}
	if err := serve(o, stderr); err != nil {
		fmt.Fprintln(stderr, "ggml-server:", err)
		return 1
	}
	return 0
}

func serve(o options, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	path, id := o.model, o.alias
	if path == "" {
		p, cleanup, err := defaultmodel.WriteTemp("ggml-server-default-")
		if err != nil {
			return err
		}
		defer cleanup()
		path = p
		if id == "" {
			id = "ggml-go-default"
		}
	}
	b, err := server.NewLlamaBackend(path, server.LlamaOptions{ID: id, Slots: o.slots, CtxSize: o.ctx, Threads: o.threads, NoMmap: o.noMmap,
		CacheTypeK: o.typeK, CacheTypeV: o.typeV})
	if err != nil {
		return err
	}
	defer b.Close()
	srv := server.New(b, server.Config{APIKey: o.apiKey, MaxBodyBytes: o.maxBody, QueueSize: o.queue, RequestTimeout: o.timeout, Logger: log})
	ln, err := net.Listen("tcp", net.JoinHostPort(o.host, strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	info := b.Info()
	fmt.Fprintf(stderr, "ggml-server: model %s, %d slots of %d tokens (KV cache %.1f MiB, K %s, V %s); listening on http://%s\n",
		info.ID, info.Slots, info.ContextLength, float64(b.KVBytes())/(1<<20), o.typeK, o.typeV, ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintln(stderr, "ggml-server: draining requests in flight")
	dctx, cancel := context.WithTimeout(context.Background(), o.drain)
	defer cancel()
	derr := srv.Drain(dctx)
	if err := hs.Shutdown(dctx); err != nil {
		hs.Close()
	}
	<-errc
	if derr != nil {
		fmt.Fprintln(stderr, "ggml-server: drain timed out; requests still in flight were cut")
	}
	fmt.Fprintln(stderr, "ggml-server: stopped")
	return nil
}
