//go:build cgo

package ggml_test

import (
	"testing"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/rpctest"
)

// startRPCServer serves a 1-thread CPU backend on 127.0.0.1 for the test's duration.
func startRPCServer(t testing.TB, opts ...ggml.RPCServerOption) string {
	t.Helper()
	return rpctest.Serve(t, 1, opts...)
}

// checkLive fails the test when native objects outlive it.
func checkLive(t *testing.T) {
	t.Helper()
	before := ggml.LiveObjects()
	t.Cleanup(func() {
		if n := ggml.LiveObjects(); n != before {
			t.Errorf("LiveObjects: %d after the test, %d before (%v)", n, before, ggml.LiveObjectsByKind())
		}
	})
}

func TestRPCRoundTrip(t *testing.T) {
	checkLive(t)
	addr := startRPCServer(t)
	rpc, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	if !rpc.IsRPC() || rpc.Name() != "RPC["+addr+"]" {
		t.Fatalf("name %q, IsRPC %v", rpc.Name(), rpc.IsRPC())
	}
	// the ops computed over RPC, recompute included, are checked against the CPU by the op table
	// on every backend (tests/ops_backends_test.go)
	free, total, err := rpc.RPCDeviceMemory()
	if err != nil || total == 0 || free > total {
		t.Fatalf("RPCDeviceMemory: %d %d %v", free, total, err)
	}
}

func TestRPCSupportedOps(t *testing.T) {
	if n := ggml.RPCSupportedOps(); n < 30 {
		t.Fatalf("only %d ops computed over RPC", n)
	} else {
		t.Logf("%d of our ops are computed over RPC", n)
	}
}

// TestRPCLargeTensorHash sends a tensor above 10 MiB twice to a server with a cache: the client
// asks with SET_TENSOR_HASH first; the second time the server has the bytes and the data is not
// sent again. Both reads give the data back.
func TestRPCLargeTensorHash(t *testing.T) {
	checkLive(t)
	for _, cache := range []bool{false, true} {
		var opts []ggml.RPCServerOption
		if cache {
			opts = append(opts, ggml.WithRPCServerCache(t.TempDir()))
		}
		proxy := startRecordingProxy(t, startRPCServer(t, opts...))
		b, err := ggml.NewRPC(proxy.ln.Addr().String(), ggml.WithRPCTimeout(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		const n = 2883584 // 11 534 336 bytes, as the recordings
		x := ctx.NewTensor1D(ggml.TypeF32, n)
		buf, err := ggml.AllocContextTensors(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*7919)%10007-5003) / 1024
		}
		sent := 0
		for round := 0; round < 2; round++ {
			buf.Clear(0) // the second round's data must come from the cache (or be sent again)
			if err := x.SetFloat32(v); err != nil {
				t.Fatal(err)
			}
			got, err := x.Float32()
			if err != nil {
				t.Fatal(err)
			}
			for i := range v {
				if got[i] != v[i] {
					t.Fatalf("cache %v, round %d: element %d is %g, want %g", cache, round, i, got[i], v[i])
				}
			}
			proxy.mu.Lock()
			now := len(proxy.c2s)
			proxy.mu.Unlock()
			if round == 1 {
				if cache && now-sent > 1<<20 {
					t.Errorf("cache: the second send took %d bytes; the hash alone should do", now-sent)
				}
				if !cache && now-sent < 4*n {
					t.Errorf("no cache: the second send took only %d bytes", now-sent)
				}
			}
			sent = now
		}
		buf.Close()
		ctx.Close()
		b.Close()
	}
}
