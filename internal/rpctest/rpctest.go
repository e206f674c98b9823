//go:build cgo

// Package rpctest serves a CPU backend over ggml's RPC protocol on 127.0.0.1 for the duration
// of a test: the one set-up that the RPC tests of every package share.
package rpctest

import (
	"net"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// Serve starts an RPC server for a CPU backend of the given number of threads on a free port
// of 127.0.0.1 and returns its address. When t ends the server is closed, Serve's return is
// awaited (at most 10 s; an error or a hang fails t) and the CPU backend is freed.
func Serve(t testing.TB, threads int, opts ...ggml.RPCServerOption) string {
	t.Helper()
	cpu, err := ggml.NewCPU(ggml.WithThreads(threads))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ggml.NewRPCServer(cpu, opts...)
	if err != nil {
		cpu.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		cpu.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RPC Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("RPC Serve did not return after Close")
		}
		cpu.Close()
	})
	return ln.Addr().String()
}
