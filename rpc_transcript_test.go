//go:build cgo

package ggml_test

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// The client side of ../shared/rpc: our client performs a recorded session's steps against our
// server through a recording proxy; the requests it sends, decoded by the recordings' own
// decoder (tools/rpcparse.py parse), must equal upstream's message by message, once what cannot
// match is dropped: HELLO exchanges and connection numbers (upstream opens several connections,
// we keep one), the pointer-valued fields rpcparse.py compare drops, and the tensor flags
// (ggml b3bcd556 has no input/output flags; we send COMPUTE on graph nodes only).

// recordingProxy forwards one connection to target and keeps both byte streams.
type recordingProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	c2s, s2c []byte
	done     chan struct{}
}

type tee struct {
	p   *recordingProxy
	out *[]byte
	w   io.Writer
}

func (t tee) Write(b []byte) (int, error) {
	t.p.mu.Lock()
	*t.out = append(*t.out, b...)
	t.p.mu.Unlock()
	return t.w.Write(b)
}

func startRecordingProxy(t *testing.T, target string) *recordingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { io.Copy(tee{p, &p.c2s, s}, c); s.(*net.TCPConn).CloseWrite(); wg.Done() }()
		go func() { io.Copy(tee{p, &p.s2c, c}, s); c.(*net.TCPConn).CloseWrite(); wg.Done() }()
		wg.Wait()
		c.Close()
		s.Close()
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

// decodedMessages runs rpcparse.py parse on a recorded connection.
func decodedMessages(t *testing.T, c2s, s2c []byte) []map[string]any {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c2s"), c2s, 0o644)
	os.WriteFile(filepath.Join(dir, "s2c"), s2c, 0o644)
	out, err := exec.Command("python3", filepath.Join(rpcGolden, "tools", "rpcparse.py"), "parse",
		filepath.Join(dir, "c2s"), filepath.Join(dir, "s2c")).Output()
	if err != nil {
		t.Fatalf("rpcparse.py parse: %v", err)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(out, &msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

var transcriptVolatile = map[string]bool{"id": true, "buffer": true, "src": true, "view_src": true, "data": true,
	"remote_ptr": true, "base_ptr": true, "nodes": true, "free_mem": true, "total_mem": true, "flags": true}

func stripVolatile(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if !transcriptVolatile[k] {
				out[k] = stripVolatile(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = stripVolatile(e)
		}
		return out
	}
	return x
}

// normalised keeps the requests and replies without HELLO, in order, volatile fields dropped.
func normalised(msgs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if m["cmd"] == "HELLO" {
			continue
		}
		n := map[string]any{"dir": m["dir"], "cmd": m["cmd"], "size": m["size"]}
		if f, ok := m["fields"]; ok {
			n["fields"] = stripVolatile(f)
		}
		out = append(out, n)
	}
	return out
}

type goldenInput struct {
	Name   string    `json:"name"`
	Ne     []int64   `json:"ne"`
	Values []float32 `json:"values"`
}

// transcriptSession: one f32 graph of the recordings, its inputs, and how to build its output.
type transcriptSession struct {
	name  string
	build func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor
}

var transcriptSessions = []transcriptSession{
	{"graph_add", func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor { return ctx.Add(in[0], in[1]).SetName("a+b") }},
	{"graph_mul", func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor {
		return ctx.Mul(in[0], in[1]).SetName("a*b(bcast)")
	}},
	{"graph_scale", func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor {
		return ctx.Scale(in[0], 0.25).SetName("a*0.25")
	}},
	{"graph_rms_norm", func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor {
		return ctx.RMSNorm(in[0], 1e-6).SetName("rms_norm(x)")
	}},
	{"graph_silu", func(ctx *ggml.Context, in []*ggml.Tensor) *ggml.Tensor { return ctx.Silu(in[0]).SetName("silu(x)") }},
}

func TestRPCClientTranscripts(t *testing.T) {
	if _, err := os.Stat(filepath.Join(rpcGolden, "tools", "rpcparse.py")); err != nil {
		t.Skip("no RPC recordings in " + rpcGolden)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed (needed for the recordings' decoder)")
	}
	checkLive(t)
	server := startRPCServer(t, ggml.WithRPCServerAlignment(32))
	for _, s := range transcriptSessions {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(rpcGolden, "sessions", s.name)
			var expected struct {
				Inputs []goldenInput `json:"inputs"`
			}
			raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &expected); err != nil {
				t.Fatal(err)
			}
			proxy := startRecordingProxy(t, server)
			runTranscriptSteps(t, proxy.ln.Addr().String(), expected.Inputs, s.build)
			select {
			case <-proxy.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the client did not close its connection")
			}
			var gold []map[string]any
			graw, err := os.ReadFile(filepath.Join(dir, "messages.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(graw, &gold); err != nil {
				t.Fatal(err)
			}
			want := normalised(gold)
			got := normalised(decodedMessages(t, proxy.c2s, proxy.s2c))
			if len(want) < 10 {
				t.Fatalf("only %d messages in the recording", len(want))
			}
			ndiff := 0
			for i := 0; i < max(len(want), len(got)); i++ {
				var w, g map[string]any
				if i < len(want) {
					w = want[i]
				}
				if i < len(got) {
					g = got[i]
				}
				if !reflect.DeepEqual(w, g) {
					if ndiff++; ndiff <= 3 {
						wj, _ := json.Marshal(w)
						gj, _ := json.Marshal(g)
						t.Errorf("message %d differs:\n  upstream: %.1500s\n  ours:     %.1500s", i, wj, gj)
					}
				}
			}
			if ndiff > 0 {
				t.Errorf("%d of %d messages differ", ndiff, len(want))
			}
		})
	}
}

// runTranscriptSteps does what the recorder's client did: inputs in one buffer, one SET_TENSOR
// each, the graph's nodes in a second buffer sized by measuring, one GRAPH_COMPUTE, one
// GET_TENSOR of the output, both buffers freed.
func runTranscriptSteps(t *testing.T, addr string, inputs []goldenInput,
	build func(*ggml.Context, []*ggml.Tensor) *ggml.Tensor) {
	b, err := ggml.NewRPC(addr, ggml.WithRPCUpstreamExact(), ggml.WithRPCTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	var in []*ggml.Tensor
	for _, i := range inputs {
		in = append(in, ctx.NewTensor4D(ggml.TypeF32, i.Ne[0], i.Ne[1], i.Ne[2], i.Ne[3]).SetName(i.Name))
	}
	inBuf, err := ggml.AllocContextTensors(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer inBuf.Close()
	for k, i := range inputs {
		if err := in[k].SetFloat32(i.Values); err != nil {
			t.Fatal(err)
		}
	}
	out := build(ctx, in)
	g := ctx.NewGraph().BuildForwardExpand(out)
	ga, err := ggml.NewGraphAllocator()
	if err != nil {
		t.Fatal(err)
	}
	defer ga.Close()
	measure, err := ggml.NewMeasureAllocator(b.Alignment())
	if err != nil {
		t.Fatal(err)
	}
	size, err := ga.AllocGraph(measure, g)
	measure.Close()
	if err != nil {
		t.Fatal(err)
	}
	ta, err := ggml.NewTensorAllocatorFromBackend(b, size)
	if err != nil {
		t.Fatal(err)
	}
	defer ta.Close()
	if _, err := ga.AllocGraph(ta, g); err != nil {
		t.Fatal(err)
	}
	if err := b.Compute(g); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Float32(); err != nil {
		t.Fatal(err)
	}
}
