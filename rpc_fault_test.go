//go:build cgo

package ggml_test

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// fault is what a fake server does instead of answering a command.
type fault int

const (
	answer   fault = iota
	hang           // read on, never answer
	hangup         // close the connection
	truncate       // announce the reply, send half of it, close
	garbage        // a reply of the wrong size
)

// fakeServer speaks just enough of the protocol to reach a command, then misbehaves on the
// first request with command faultCmd (GET_ALIGNMENT after a graph: the compute confirmation).
func fakeServer(t *testing.T, faultCmd byte, f fault, afterGraph bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-stop; c.Close() }()
				graphSeen := false
				for {
					hdr := make([]byte, 9)
					if _, err := io.ReadFull(c, hdr); err != nil {
						return
					}
					payload := make([]byte, binary.LittleEndian.Uint64(hdr[1:]))
					if _, err := io.ReadFull(c, payload); err != nil {
						return
					}
					cmd := hdr[0]
					var rep []byte
					switch cmd {
					case 14:
						rep = append([]byte{5, 1, 0, 0}, make([]byte, 24)...)
					case 15:
						rep = []byte{1, 0, 0, 0}
					case 1:
						rep = binary.LittleEndian.AppendUint64(nil, 32)
					case 2:
						rep = binary.LittleEndian.AppendUint64(nil, ^uint64(0))
					case 0:
						rep = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0x1000), binary.LittleEndian.Uint64(payload[4:]))
					case 3:
						rep = binary.LittleEndian.AppendUint64(nil, 0x100000)
					case 8:
						rep = make([]byte, binary.LittleEndian.Uint64(payload[304:]))
					case 11:
						rep = make([]byte, 16)
					case 6, 10, 16:
						graphSeen = graphSeen || cmd != 6
						continue
					}
					if cmd == faultCmd && (!afterGraph || graphSeen) {
						switch f {
						case hang:
							io.Copy(io.Discard, c)
							return
						case hangup:
							return
						case truncate:
							c.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(rep))))
							c.Write(rep[:len(rep)/2])
							return
						case garbage:
							rep = append(rep, 0xEE)
						}
					}
					c.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(rep))))
					c.Write(rep)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestRPCFaults: a server that hangs, hangs up, truncates or garbles a reply, at connection
// time or right after a graph, yields an error within the timeout, never a hang or a crash;
// the backend reports every later call as failed, and a new backend can connect again.
func TestRPCFaults(t *testing.T) {
	checkLive(t)
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name       string
		cmd        byte
		f          fault
		afterGraph bool
	}{
		{"hello_hang", 14, hang, false},
		{"hello_hangup", 14, hangup, false},
		{"hello_truncated", 14, truncate, false},
		{"hello_garbage", 14, garbage, false},
		{"compute_hang", 1, hang, true},
		{"compute_killed", 1, hangup, true},
		{"compute_truncated", 1, truncate, true},
		{"compute_garbage", 1, garbage, true},
		{"get_tensor_hang", 8, hang, false},
		{"get_tensor_truncated", 8, truncate, false},
		{"alloc_garbage", 0, garbage, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeServer(t, tc.cmd, tc.f, tc.afterGraph)
			start := time.Now()
			err := faultSession(addr, timeout)
			if err == nil {
				t.Fatal("no error")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("error after %v (timeout %v): %v", d, timeout, err)
			}
			t.Logf("%v (after %v)", err, time.Since(start).Round(time.Millisecond))
		})
	}
	// and a real server afterwards: reconnecting works
	addr := startRPCServer(t)
	if err := faultSession(addr, 5*time.Second); err != nil {
		t.Fatalf("a healthy session failed: %v", err)
	}
}

// faultSession connects, allocates, computes a graph and reads the result back.
func faultSession(addr string, timeout time.Duration) error {
	b, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(timeout), ggml.WithRPCComputeTimeout(timeout))
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		return err
	}
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 64)
	y := ctx.Silu(x)
	g := ctx.NewGraph().BuildForwardExpand(y)
	buf, err := ggml.AllocContextTensors(ctx, b)
	if err != nil {
		return err
	}
	defer buf.Close()
	if err := x.SetFloat32(make([]float32, 64)); err != nil {
		return err
	}
	if _, err := x.Float32(); err != nil {
		return err
	}
	if err := b.Compute(g); err != nil {
		if !strings.Contains(err.Error(), "RPC[") {
			return &ggml.Error{Op: "unexpected", Msg: err.Error()}
		}
		return err
	}
	_, err = y.Float32()
	return err
}

// TestRPCServerKilledMidGraph closes a real server while it computes a long graph: Compute
// returns an error promptly and the server's Serve returns.
func TestRPCServerKilledMidGraph(t *testing.T) {
	checkLive(t)
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	srv, err := ggml.NewRPCServer(cpu)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	b, err := ggml.NewRPC(ln.Addr().String(), ggml.WithRPCTimeout(5*time.Second), ggml.WithRPCComputeTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const n = 512
	w := ctx.NewTensor2D(ggml.TypeF32, n, n)
	y := ctx.NewTensor2D(ggml.TypeF32, n, 64)
	for i := 0; i < 40; i++ { // ~0.7 GFLOP: long enough to be cut
		y = ctx.MulMat(w, y)
	}
	g := ctx.NewGraph().BuildForwardExpand(y)
	buf, err := ggml.AllocContextTensors(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	go func() {
		time.Sleep(50 * time.Millisecond)
		srv.Close()
	}()
	start := time.Now()
	if err := b.Compute(g); err == nil {
		t.Log("the graph finished before the server closed")
	} else {
		t.Logf("Compute: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
	if b.Compute(g) == nil {
		t.Fatal("Compute on a closed server succeeded")
	}
}
