//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "ggml-rpc.h"

static ggo_pres ggo_ggml_x_backend_rpc_init_fd(int fd, const char * name, uint32_t device, int timeout_ms, int compute_ms, int exact) {
    struct ggml_x_rpc_client_params p = ggml_x_rpc_client_default_params();
    p.device = device;
    p.timeout_ms = timeout_ms;
    p.compute_timeout_ms = compute_ms;
    p.no_sync = exact != 0;
    p.no_recompute = exact != 0;
    GGO_PCALL(ggml_x_backend_rpc_init_fd(fd, name, &p));
}

static ggo_ires ggo_ggml_x_backend_rpc_device_memory(ggml_backend_t b, size_t * free_mem, size_t * total) {
    GGO_ICALL(ggml_x_backend_rpc_device_memory(b, free_mem, total));
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// NewRPC connects to an RPC server at addr ("host:port": ggml's rpc-server or
// cmd/ggml-rpc-server) speaking ggml's RPC protocol 5.1.0 and returns a backend whose buffers
// and graph computations live there. Use it alone (tensors in its DefaultBufferType, Compute)
// or in a Scheduler next to the CPU: ops the server cannot compute (no peer in the server's
// ggml, or parameters it cannot express) are reported unsupported and stay on the CPU.
//
// Every request has a deadline (WithRPCTimeout, WithRPCComputeTimeout). When the server dies,
// hangs or answers garbage, the call in progress returns an error (Compute returns it; tensor
// reads and writes report it), the connection is closed and every later call fails at once:
// Close the backend and call NewRPC again to reconnect. Close it when done; its buffers keep
// the connection open until they are closed too.
func NewRPC(addr string, opts ...RPCOption) (*Backend, error) {
	const op = "NewRPC"
	cfg := defaultRPCConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.device < 0 {
		return nil, &Error{Op: op, Msg: fmt.Sprintf("device must be >= 0, got %d", cfg.device)}
	}
	conn, err := dialRPC(addr, &cfg)
	if err != nil {
		return nil, &Error{Op: op, Shapes: addr, Msg: fmt.Sprintf("cannot connect: %v (is an RPC server running there, "+
			"with the same TLS and token settings?)", err), Err: err}
	}
	d, err := descriptorOf(conn)
	if err != nil {
		return nil, &Error{Op: op, Shapes: addr, Msg: fmt.Sprintf("cannot take the connection's descriptor: %v", err), Err: err}
	}
	name := C.CString(addr)
	defer C.free(unsafe.Pointer(name))
	exact := 0
	if cfg.upstreamExact {
		exact = 1
	}
	r := C.ggo_ggml_x_backend_rpc_init_fd(C.int(d.fd), name, C.uint32_t(cfg.device), C.int(millis(cfg.timeout)),
		C.int(millis(cfg.computeTimeout)), C.int(exact))
	msg := takeCError(r.err)
	if r.p == nil {
		d.done()
		if msg == "" {
			msg = "handshake failed"
		}
		return nil, &Error{Op: op, Shapes: addr, Msg: msg}
	}
	b := &Backend{c: C.ggml_backend_t(r.p)}
	b.ref = newNativeRef(b, "backend", func() {
		C.ggml_backend_free(C.ggml_backend_t(r.p))
		// the pump (TLS) ends by itself when the C side closes its end, after the last buffer
	})
	return b, nil
}

// millis converts a timeout for the C core: 0 waits forever.
func millis(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if ms > 1<<30 {
		ms = 1 << 30
	}
	return int(ms)
}

// IsRPC reports whether b is an RPC backend (NewRPC).
func (b *Backend) IsRPC() bool {
	return bool(C.ggml_backend_is_rpc(b.cptr("Backend.IsRPC")))
}

// RPCDeviceMemory asks an RPC backend's server for its device's free and total memory.
func (b *Backend) RPCDeviceMemory() (free, total uint64, err error) {
	const op = "Backend.RPCDeviceMemory"
	c, err := b.enter(op)
	if err != nil {
		return 0, 0, err
	}
	defer b.busy.leave()
	if !bool(C.ggml_backend_is_rpc(c)) {
		return 0, 0, &Error{Op: op, Msg: "not an RPC backend"}
	}
	var f, t C.size_t
	r := C.ggo_ggml_x_backend_rpc_device_memory(c, &f, &t)
	if msg := takeCError(r.err); r.v == 0 {
		return 0, 0, &Error{Op: op, Msg: msg}
	}
	return uint64(f), uint64(t), nil
}

// RPCAlive reports whether an RPC backend's connection still works: false once a request
// failed (the server died, hung or answered garbage), after which every call fails; Close the
// backend and call NewRPC again.
func (b *Backend) RPCAlive() bool {
	return bool(C.ggml_x_backend_rpc_alive(b.cptr("Backend.RPCAlive")))
}

// RPCSupportedOps returns how many of this library's ops an RPC server can compute (the others
// stay local in a Scheduler).
func RPCSupportedOps() int {
	return int(C.ggml_x_rpc_supported_op_count())
}
