//go:build cgo

package ggml_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// A client that writes what upstream's client (ggml 2026-08, protocol 5.1.0) writes: rpc_tensor
// records in the wire's numbering and GRAPH_COMPUTE payloads, for graphs whose ops our own
// client never sends (GLU, SET_ROWS, FLASH_ATTN_EXT, ...). Numbers are the wire's (ops.json,
// types.json of ../shared/rpc).

// wire op numbers
const (
	wOpNone         = 0
	wOpAdd          = 2
	wOpMul          = 7
	wOpRMSNorm      = 25
	wOpMulMat       = 29
	wOpScale        = 32
	wOpCpy          = 34
	wOpCont         = 35
	wOpReshape      = 36
	wOpView         = 37
	wOpPermute      = 38
	wOpGetRows      = 40
	wOpSetRows      = 42
	wOpSoftMax      = 46
	wOpRope         = 48
	wOpFlashAttnExt = 74
	wOpSSMConv      = 76
	wOpUnary        = 91
	wOpGLU          = 100
)

// wire type numbers
const (
	wF32 = 0
	wF16 = 1
	wI32 = 26
	wI64 = 27
)

func wireTypeSize(typ uint32) uint64 {
	switch typ {
	case wF16, 30: // BF16
		return 2
	case wI64:
		return 8
	default:
		return 4
	}
}

// wt is one tensor as upstream's client describes it.
type wt struct {
	id       uint64
	typ      uint32
	ne       [4]uint32
	nb       [4]uint32
	op       uint32
	p        [16]int32
	src      [10]*wt
	view     *wt
	viewOffs uint64
	data     uint64
	name     string
	node     bool
}

func (t *wt) nbytes() uint64 {
	for i := 0; i < 4; i++ {
		if t.ne[i] == 0 {
			return 0
		}
	}
	n := wireTypeSize(t.typ)
	for i := 0; i < 4; i++ {
		n += uint64(t.ne[i]-1) * uint64(t.nb[i])
	}
	return n
}

func (t *wt) setF32(i int, f float32) { t.p[i] = int32(math.Float32bits(f)) }

// wireConn is one connection speaking the protocol, as upstream's client would.
type wireConn struct {
	t    testing.TB
	c    net.Conn
	buf  uint64 // the one buffer of this connection
	base uint64
	size uint64
	used uint64
	id   uint64
}

func dialWire(t testing.TB, addr string, bufSize uint64) *wireConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wireConn{t: t, c: c, id: 0x7000}
	if r, err := w.call(14, make([]byte, 24), 28); err != nil || r[0] != 5 {
		t.Fatalf("HELLO: %v %v", r, err)
	}
	req := binary.LittleEndian.AppendUint32(nil, 0)
	req = binary.LittleEndian.AppendUint64(req, bufSize)
	r, err := w.call(0, req, 16)
	if err != nil {
		t.Fatalf("ALLOC_BUFFER: %v", err)
	}
	w.buf, w.size = binary.LittleEndian.Uint64(r), binary.LittleEndian.Uint64(r[8:])
	r, err = w.call(3, binary.LittleEndian.AppendUint64(nil, w.buf), 8)
	if err != nil {
		t.Fatalf("BUFFER_GET_BASE: %v", err)
	}
	w.base = binary.LittleEndian.Uint64(r)
	return w
}

// call sends one request; replySize < 0: the command has no reply.
func (w *wireConn) call(cmd byte, payload []byte, replySize int) ([]byte, error) {
	w.c.SetDeadline(time.Now().Add(60 * time.Second))
	msg := append([]byte{cmd}, binary.LittleEndian.AppendUint64(nil, uint64(len(payload)))...)
	if _, err := w.c.Write(append(msg, payload...)); err != nil {
		return nil, err
	}
	if replySize < 0 {
		return nil, nil
	}
	hdr := make([]byte, 8)
	if _, err := io.ReadFull(w.c, hdr); err != nil {
		return nil, err
	}
	if n := binary.LittleEndian.Uint64(hdr); n != uint64(replySize) {
		return nil, fmt.Errorf("reply of %d bytes, want %d", n, replySize)
	}
	r := make([]byte, replySize)
	_, err := io.ReadFull(w.c, r)
	return r, err
}

// tensor allocates a dense tensor in the connection's buffer (alignment 32).
func (w *wireConn) tensor(typ uint32, name string, ne ...int) *wt {
	t := &wt{typ: typ, name: name}
	w.shape(t, ne)
	w.used = (w.used + 31) &^ 31
	t.data = w.base + w.used
	w.used += t.nbytes()
	if w.used > w.size {
		w.t.Fatalf("test buffer of %d bytes too small", w.size)
	}
	return t
}

func (w *wireConn) shape(t *wt, ne []int) {
	w.id += 0x40
	t.id = w.id
	for i := 0; i < 4; i++ {
		t.ne[i] = 1
		if i < len(ne) {
			t.ne[i] = uint32(ne[i])
		}
	}
	t.nb[0] = uint32(wireTypeSize(t.typ))
	for i := 1; i < 4; i++ {
		t.nb[i] = t.nb[i-1] * t.ne[i-1]
	}
}

// op is a node with its own (dense) memory.
func (w *wireConn) op(op, typ uint32, name string, ne []int, params []int32, srcs ...*wt) *wt {
	t := w.tensor(typ, name, ne...)
	t.op, t.node = op, true
	copy(t.p[:], params)
	copy(t.src[:], srcs)
	return t
}

// viewOp is a node over a's memory: VIEW, RESHAPE, PERMUTE, TRANSPOSE (and SET_ROWS).
func (w *wireConn) viewOp(op uint32, a *wt, name string, ne []int, nb []uint32, offs uint64, params []int32) *wt {
	t := &wt{typ: a.typ, name: name, op: op, node: true}
	w.shape(t, ne)
	if nb != nil {
		copy(t.nb[:], nb)
	}
	copy(t.p[:], params)
	t.src[0] = a
	t.view = a
	if a.view != nil {
		t.view = a.view
		offs += a.viewOffs
	}
	t.viewOffs = offs
	t.data = t.view.data + offs
	return t
}

func (w *wireConn) reshape(a *wt, ne ...int) *wt {
	return w.viewOp(wOpReshape, a, a.name+" (reshaped)", ne, nil, 0, nil)
}

func (w *wireConn) view(a *wt, ne []int, nb []uint32, offs uint64) *wt {
	return w.viewOp(wOpView, a, a.name+" (view)", ne, nb, offs, []int32{int32(offs), int32(offs >> 32)})
}

func (w *wireConn) permute(a *wt, ax ...int) *wt {
	var ne [4]int
	var nb [4]uint32
	for i := 0; i < 4; i++ {
		ne[ax[i]] = int(a.ne[i])
		nb[ax[i]] = a.nb[i]
	}
	return w.viewOp(wOpPermute, a, a.name+" (permuted)", ne[:], nb[:], 0,
		[]int32{int32(ax[0]), int32(ax[1]), int32(ax[2]), int32(ax[3])})
}

func encodeWT(t *wt) []byte {
	b := make([]byte, rpcTensorSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], t.id)
	le.PutUint32(b[8:], t.typ)
	le.PutUint64(b[12:], 0)
	for i := 0; i < 4; i++ {
		le.PutUint32(b[20+4*i:], t.ne[i])
		le.PutUint32(b[36+4*i:], t.nb[i])
	}
	le.PutUint32(b[52:], t.op)
	for i := 0; i < 16; i++ {
		le.PutUint32(b[56+4*i:], uint32(t.p[i]))
	}
	if t.node {
		le.PutUint32(b[120:], 16)
	}
	for i := 0; i < 10; i++ {
		if t.src[i] != nil {
			le.PutUint64(b[124+8*i:], t.src[i].id)
		}
	}
	if t.view != nil {
		le.PutUint64(b[204:], t.view.id)
		le.PutUint64(b[212:], t.viewOffs)
	}
	le.PutUint64(b[220:], t.data)
	copy(b[228:291], t.name)
	return b
}

func (w *wireConn) record(t *wt) []byte {
	b := encodeWT(t)
	binary.LittleEndian.PutUint64(b[12:], w.buf)
	return b
}

func (w *wireConn) set(t *wt, data []byte) {
	req := append(w.record(t), make([]byte, 8)...)
	if _, err := w.call(6, append(req, data...), -1); err != nil {
		w.t.Fatalf("SET_TENSOR %s: %v", t.name, err)
	}
}

func (w *wireConn) setF32(t *wt, v []float32) {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	w.set(t, b)
}

func (w *wireConn) setF16(t *wt, v []float32) {
	b := make([]byte, 2*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint16(b[2*i:], ggml.NewFloat16(f).Bits())
	}
	w.set(t, b)
}

func (w *wireConn) setI64(t *wt, v []int64) {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	w.set(t, b)
}

func (w *wireConn) setI32(t *wt, v []int32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	w.set(t, b)
}

func (w *wireConn) get(t *wt) ([]byte, error) {
	n := t.nbytes()
	req := append(w.record(t), make([]byte, 8)...)
	req = binary.LittleEndian.AppendUint64(req, n)
	return w.call(8, req, int(n))
}

// getF32 reads a dense F32 or F16 tensor as float32 values.
func (w *wireConn) getF32(t *wt) []float32 {
	b, err := w.get(t)
	if err != nil {
		w.t.Fatalf("GET_TENSOR %s: %v", t.name, err)
	}
	if t.typ == wF16 {
		out := make([]float32, len(b)/2)
		for i := range out {
			out[i] = ggml.Float16FromBits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
		}
		return out
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// graphPayload is GRAPH_COMPUTE's payload: the nodes, then every tensor they reach through
// src and view_src, depth-first with sources first, as upstream's client lists them.
func (w *wireConn) graphPayload(nodes ...*wt) []byte {
	var list []*wt
	seen := map[*wt]bool{}
	var visit func(t *wt)
	visit = func(t *wt) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		for _, s := range t.src {
			visit(s)
		}
		visit(t.view)
		list = append(list, t)
	}
	for _, n := range nodes {
		visit(n)
	}
	le := binary.LittleEndian
	p := le.AppendUint32(nil, 0)
	p = le.AppendUint32(p, uint32(len(nodes)))
	for _, n := range nodes {
		p = le.AppendUint64(p, n.id)
	}
	p = le.AppendUint32(p, uint32(len(list)))
	for _, t := range list {
		p = append(p, w.record(t)...)
	}
	return p
}

// compute sends GRAPH_COMPUTE and confirms it with a GET_ALIGNMENT round trip: an error means
// the server closed the connection (the graph was refused or failed).
func (w *wireConn) compute(nodes ...*wt) error {
	if _, err := w.call(10, w.graphPayload(nodes...), -1); err != nil {
		return err
	}
	_, err := w.call(1, make([]byte, 4), 8)
	return err
}

func (w *wireConn) recompute() error {
	if _, err := w.call(16, make([]byte, 4), -1); err != nil {
		return err
	}
	_, err := w.call(1, make([]byte, 4), 8)
	return err
}

// graph collects nodes in order (llama.cpp's graph order).
type graph []*wt

func (g *graph) add(t *wt) *wt {
	*g = append(*g, t)
	return t
}
