//go:build cgo

package ggml_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// FuzzRPCServer feeds arbitrary client bytes to the server's message parser (through
// RPCServer.ServeConn on an in-memory pipe) and reads every reply: the server must neither
// crash nor hang, whatever it receives. Seeds: every recorded client connection of
// ../shared/rpc up to 64 KiB, plus a few hand-made messages.
//
//	go test -run '^$' -fuzz FuzzRPCServer -fuzztime 60s .
func FuzzRPCServer(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join(rpcGolden, "sessions", "*", "session.json"))
	for _, sj := range dirs {
		t := &testing.T{}
		c2s, _, sess := func() ([]byte, []byte, goldenSession) {
			defer func() { recover() }()
			if _, err := os.Stat(filepath.Join(filepath.Dir(sj), "c2s.bin")); err != nil {
				return nil, nil, goldenSession{}
			}
			return loadGolden(t, filepath.Dir(sj))
		}()
		for _, c := range sess.Connections {
			if c.C2SSize <= 64<<10 {
				f.Add(c2s[c.C2SOffset : c.C2SOffset+c.C2SSize])
			}
		}
	}
	hello := append([]byte{14, 24, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 24)...)
	f.Add(hello)
	f.Add(append(append([]byte{}, hello...), 10, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0))
	f.Add(append(append([]byte{}, hello...), 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0))

	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		f.Fatal(err)
	}
	defer cpu.Close()
	// bounded: a fuzzed ALLOC_BUFFER must not take the machine's memory
	srv, err := ggml.NewRPCServer(cpu, ggml.WithRPCServerMaxAlloc(64<<20), ggml.WithRPCServerLimits(16<<20, 4096),
		ggml.WithRPCServerTimeouts(2*time.Second, 2*time.Second))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := unixPair(t)
		done := make(chan struct{})
		go func() { srv.ServeConn(server); close(done) }()
		go func() {
			client.SetWriteDeadline(time.Now().Add(5 * time.Second))
			client.Write(in)
			client.CloseWrite() // end of the requests: the server sees EOF after them
		}()
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, client)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not return after the client closed")
		}
	})
}

// unixPair returns the two ends of a connected Unix socket pair.
func unixPair(t *testing.T) (*net.UnixConn, net.Conn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0].(*net.UnixConn), conns[1]
}
