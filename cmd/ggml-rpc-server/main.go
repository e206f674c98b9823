// Command ggml-rpc-server serves a backend of this library (the CPU by default) to clients of
// ggml's RPC protocol 5.1.0: llama.cpp's --rpc of that ggml, and ggml.NewRPC.
//
//	ggml-rpc-server [-H host] [-p port] [-c cache-dir] [-m MiB] [-t threads]
//	                [-tls-cert FILE -tls-key FILE] [-token-file FILE]
//
// The flags -H/--host (default 127.0.0.1), -p/--port (default 50052), -c/--cache (a directory
// keeping tensors larger than 10 MiB by hash) and -m/--mem (the memory reported to clients, and
// the most one connection may allocate, in MiB) are upstream's. One connection is served at a
// time; a malformed request closes that connection only.
//
// Plain mode has neither encryption nor authentication: binding beyond the loopback interface
// prints a warning; use it only on a trusted network. -tls-cert/-tls-key and -token-file (our
// extension, understood by ggml.NewRPC with WithRPCTLS/WithRPCToken, not by upstream clients)
// encrypt the connection and admit only clients presenting the token.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/ggml-go/ggml"
)

func main() {
	var (
		host, cache, certFile, keyFile, tokenFile, backendName string
		port, threads                                          int
		memMiB, align                                          uint64
		quiet                                                  bool
	)
	for _, n := range []string{"H", "host"} {
		flag.StringVar(&host, n, "127.0.0.1", "address to listen on")
	}
	for _, n := range []string{"p", "port"} {
		flag.IntVar(&port, n, 50052, "port to listen on")
	}
	for _, n := range []string{"c", "cache"} {
		flag.StringVar(&cache, n, "", "directory caching large tensors by hash (created if missing)")
	}
	for _, n := range []string{"m", "mem"} {
		flag.Uint64Var(&memMiB, n, 0, "memory reported to clients and allocatable per connection, MiB (0: the machine's RAM, no limit)")
	}
	for _, n := range []string{"t", "threads"} {
		flag.IntVar(&threads, n, runtime.NumCPU(), "CPU threads")
	}
	flag.StringVar(&backendName, "backend", "CPU", "registry backend to serve (e.g. CPU, or CUDA0 in a cuda build)")
	flag.Uint64Var(&align, "align", 0, "tensor alignment reported to clients (0: the backend's)")
	flag.StringVar(&certFile, "tls-cert", "", "serve TLS with this certificate (PEM; our extension)")
	flag.StringVar(&keyFile, "tls-key", "", "the certificate's private key (PEM)")
	flag.StringVar(&tokenFile, "token-file", "", "admit only clients presenting the token in this file (our extension)")
	flag.BoolVar(&quiet, "q", false, "do not log connections")
	flag.Parse()
	if err := run(host, port, cache, certFile, keyFile, tokenFile, backendName, threads, memMiB, align, quiet); err != nil {
		fmt.Fprintln(os.Stderr, "ggml-rpc-server:", err)
		os.Exit(1)
	}
}

func run(host string, port int, cache, certFile, keyFile, tokenFile, backendName string, threads int, memMiB, align uint64,
	quiet bool) error {
	var b *ggml.Backend
	var err error
	if backendName == "CPU" {
		b, err = ggml.NewCPU(ggml.WithThreads(threads))
	} else {
		b, err = ggml.InitBackend(backendName)
	}
	if err != nil {
		return err
	}
	defer b.Close()

	var opts []ggml.RPCServerOption
	if cache != "" {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return err
		}
		opts = append(opts, ggml.WithRPCServerCache(cache))
	}
	if memMiB > 0 {
		opts = append(opts, ggml.WithRPCServerMemory(memMiB<<20, memMiB<<20), ggml.WithRPCServerMaxAlloc(memMiB<<20))
	}
	if align > 0 {
		opts = append(opts, ggml.WithRPCServerAlignment(align))
	}
	secure := false
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("loading the TLS certificate: %w", err)
		}
		opts = append(opts, ggml.WithRPCServerTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
		secure = true
	}
	if tokenFile != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return err
		}
		t := strings.TrimSpace(string(tok))
		if t == "" {
			return fmt.Errorf("token file %s is empty", tokenFile)
		}
		opts = append(opts, ggml.WithRPCServerToken(t))
	}
	if !quiet {
		opts = append(opts, ggml.WithRPCServerLog(log.Printf))
	}
	srv, err := ggml.NewRPCServer(b, opts...)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); !secure && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		fmt.Fprintf(os.Stderr, "WARNING: serving %s beyond this machine in plain mode: no encryption, no authentication. "+
			"Anyone who can reach it can use this machine's memory and compute. Use it only on a trusted network, "+
			"or add -tls-cert/-tls-key and -token-file.\n", addr)
	}
	log.Printf("ggml-rpc-server: protocol %s, backend %s, listening on %s", ggml.RPCProtocolVersion, b.Name(), ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Close()
	}()
	return srv.Serve(ln)
}
