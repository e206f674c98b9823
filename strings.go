//go:build cgo

package ggml

/*
#include "ggml_go.h"
*/
import "C"

import "fmt"

// String returns the backend's name, e.g. "Backend(CPU)"; "Backend(closed)" after Close.
func (b *Backend) String() string {
	switch {
	case b == nil || b.c == nil:
		return "Backend(nil)"
	case b.ref != nil && b.ref.released():
		return "Backend(closed)"
	}
	return "Backend(" + C.GoString(C.ggml_backend_name(b.c)) + ")"
}

// String describes the buffer type, e.g. "BufferType(CPU, host, alignment 32)".
func (bt *BufferType) String() string {
	switch {
	case bt == nil || bt.c == nil:
		return "BufferType(nil)"
	case bt.ref != nil && bt.ref.released():
		return "BufferType(closed)"
	}
	where := "device"
	if bool(C.ggml_backend_buft_is_host(bt.c)) {
		where = "host"
	}
	return fmt.Sprintf("BufferType(%s, %s, alignment %d)", C.GoString(C.ggml_backend_buft_name(bt.c)), where,
		uint64(C.ggml_backend_buft_get_alignment(bt.c)))
}

// String describes the buffer, e.g. "Buffer(CPU, 4096 bytes, host)"; "Buffer(closed)" after
// Close.
func (b *Buffer) String() string {
	switch {
	case b == nil || b.c == nil:
		return "Buffer(nil)"
	case b.ref != nil && b.ref.released():
		return "Buffer(closed)"
	}
	where := "device"
	if bool(C.ggml_backend_buffer_is_host(b.c)) {
		where = "host"
	}
	usage := ""
	if b.Usage() == BufferUsageWeights {
		usage = ", weights"
	}
	return fmt.Sprintf("Buffer(%s, %d bytes, %s%s)", C.GoString(C.ggml_backend_buffer_name(b.c)),
		uint64(C.ggml_backend_buffer_get_size(b.c)), where, usage)
}

// String describes the graph, e.g. "Graph(12 nodes, 5 leafs, size 2048)"; "Graph(closed)"
// once its context is closed.
func (g *Graph) String() string {
	switch {
	case g == nil || g.c == nil:
		return "Graph(nil)"
	case g.ctx != nil && g.ctx.dead.Load():
		return "Graph(closed)"
	}
	return fmt.Sprintf("Graph(%d nodes, %d leafs, size %d)", int(g.c.n_nodes), int(g.c.n_leafs), int(g.c.size))
}
