//go:build cgo

package ggml

/*
#include <stdlib.h>
#include <sys/socket.h>
#include "ggml-rpc.h"

static int ggo_ggml_x_rpc_serve_fd(ggml_backend_t b, int fd, const char * cache_dir, uint64_t free_mem, uint64_t total,
                         uint64_t alignment, uint64_t max_alloc, uint64_t max_message, uint32_t max_nodes,
                         int idle_ms, int io_ms, char * why, size_t why_size) {
    struct ggml_x_rpc_server_params p = ggml_x_rpc_server_default_params();
    p.cache_dir = cache_dir;
    p.free_mem = free_mem;
    p.total_mem = total;
    p.alignment = alignment;
    p.max_alloc = max_alloc;
    p.max_message = max_message;
    p.max_graph_nodes = max_nodes;
    p.idle_timeout_ms = idle_ms;
    p.io_timeout_ms = io_ms;
    return ggml_x_rpc_serve_fd(b, fd, &p, why, why_size);
}
*/
import "C"

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// RPCServer serves a backend to clients of ggml's RPC protocol 5.1.0: ggml's own client
// (llama.cpp --rpc) and NewRPC. Like ggml's rpc-server it serves one connection at a time, in
// accept order, and everything a connection allocates goes when it closes. Unlike it, every
// request is checked (buffers of this connection only, data inside its buffer, graph nodes
// rebuilt with this library's op constructors): a malformed request closes that connection
// and the server goes on with the next one.
//
// Plain mode has no authentication or encryption: serve beyond 127.0.0.1 only on a trusted
// network, or add WithRPCServerTLS and WithRPCServerToken (understood by NewRPC only).
type RPCServer struct {
	b   *Backend
	cfg rpcServerConfig

	mu     sync.Mutex
	ln     net.Listener
	fd     int // the connection being served, or -1
	closed bool
}

// NewRPCServer prepares a server of b (which it uses exclusively while serving a connection).
func NewRPCServer(b *Backend, opts ...RPCServerOption) (*RPCServer, error) {
	if b == nil || b.c == nil {
		return nil, &Error{Op: "NewRPCServer", Msg: "nil *Backend"}
	}
	cfg := defaultRPCServerConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.alignment != 0 && (cfg.alignment < 16 || cfg.alignment&(cfg.alignment-1) != 0) {
		return nil, &Error{Op: "NewRPCServer", Msg: "alignment must be a power of two >= 16"}
	}
	return &RPCServer{b: b, cfg: cfg, fd: -1}, nil
}

// Serve accepts connections on l and serves them one after another until Close; it then
// returns nil (or the listener's error).
func (s *RPCServer) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &Error{Op: "RPCServer.Serve", Msg: "server closed", Err: ErrClosed}
	}
	s.ln = l
	s.mu.Unlock()
	for {
		conn, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.ServeConn(conn)
	}
}

func (s *RPCServer) logf(format string, args ...any) {
	if s.cfg.logf != nil {
		s.cfg.logf(format, args...)
	}
}

// ServeConn serves one connection (any net.Conn: TLS and the token are applied as configured)
// until either side closes it, and closes it. Serve calls it for each accepted connection.
func (s *RPCServer) ServeConn(conn net.Conn) {
	peer := conn.RemoteAddr().String()
	if s.cfg.tls != nil {
		tc := tls.Server(conn, s.cfg.tls)
		tc.SetDeadline(time.Now().Add(s.cfg.handshakeTimeout))
		if err := tc.Handshake(); err != nil {
			s.logf("%s: TLS handshake failed: %v", peer, err)
			conn.Close()
			return
		}
		tc.SetDeadline(time.Time{})
		conn = tc
	}
	if s.cfg.token != "" {
		if err := checkToken(conn, s.cfg.token, time.Now().Add(s.cfg.handshakeTimeout)); err != nil {
			s.logf("%s: refused: %v", peer, err)
			conn.Close()
			return
		}
	}
	d, err := descriptorOf(conn)
	if err != nil {
		s.logf("%s: %v", peer, err)
		return
	}
	defer d.done()
	c, err := s.b.enter("RPCServer.Serve")
	if err != nil {
		syscall.Close(d.fd)
		s.logf("%s: %v", peer, err)
		return
	}
	defer s.b.busy.leave()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		syscall.Close(d.fd)
		return
	}
	s.fd = d.fd
	s.mu.Unlock()
	s.logf("%s: connected", peer)

	var cache *C.char
	if s.cfg.cacheDir != "" {
		cache = C.CString(s.cfg.cacheDir)
		defer C.free(unsafe.Pointer(cache))
	}
	var why [256]C.char
	rc := C.ggo_ggml_x_rpc_serve_fd(c, C.int(d.fd), cache, C.uint64_t(s.cfg.freeMem), C.uint64_t(s.cfg.total),
		C.uint64_t(s.cfg.alignment), C.uint64_t(s.cfg.maxAlloc), C.uint64_t(s.cfg.maxMessage),
		C.uint32_t(s.cfg.maxGraphNodes), C.int(millis(s.cfg.idleTimeout)), C.int(millis(s.cfg.ioTimeout)),
		&why[0], C.size_t(len(why)))

	s.mu.Lock()
	s.fd = -1
	syscall.Close(d.fd)
	s.mu.Unlock()
	if rc != 0 {
		s.logf("%s: connection closed by the server: %s", peer, C.GoString(&why[0]))
	} else {
		s.logf("%s: disconnected", peer)
	}
}

// Close stops Serve: the listener is closed and the connection being served is cut.
func (s *RPCServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.fd >= 0 {
		syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	}
	if s.ln != nil {
		return s.ln.Close()
	}
	return nil
}
