package tests

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/rpctest"
	"github.com/ggml-go/ggml/internal/testbackend"
)

// The op table (allOpCases) on every backend: each case is computed on the CPU (1 thread, the
// reference) and on each other backend, and the results compared. The backends are those of
// the registry (CPU with 2 threads, the Test backend of internal/testbackend, CUDA0 in a
// `cuda` or `cuda cudaemu` build, Metal in a `metal` or `metal metalemu` build: the tagged
// files of this package import their packages, which register them) and an RPC device (our
// client and our server, serving a 1-thread CPU, in this process). A case whose graph has a
// node the backend does not support (SupportsOp) is skipped; the ran/skipped counts of each
// backend are logged (go test -v -run TestOpsEveryBackend).

// knownOpFailures are the cases a backend reports as supported but fails, each with its reason:
// they are skipped and counted apart, so that the table stays green while the fault is open.
// Remove an entry when its fault is fixed (the test then runs the case again).
var knownOpFailures = map[string]map[string]string{}

// opBackend is one backend the op table runs on.
type opBackend struct {
	name  string
	open  func(t *testing.T) *ggml.Backend // nil backend: skipped (reason logged)
	exact bool                             // computes with the CPU's kernels on 1 thread: bit-identical results
	times int                              // computes per case (RPC: 2, the second is a GRAPH_RECOMPUTE)
	fresh bool                             // a new backend per case (RPC: a failure loses the connection)
}

// opBackends lists the backends to test besides the 1-thread CPU reference.
func opBackends() []opBackend {
	testbackend.Register()
	out := []opBackend{{name: "CPU:threads=2", times: 1, open: func(t *testing.T) *ggml.Backend {
		b, err := ggml.NewCPU(ggml.WithThreads(2))
		require.NoError(t, err)
		return b
	}}}
	for _, name := range ggml.Backends() {
		if name == "CPU" {
			continue
		}
		out = append(out, opBackend{name: name, exact: name == testbackend.Name, times: 1, open: func(t *testing.T) *ggml.Backend {
			b, err := ggml.InitBackend(name)
			if err != nil {
				t.Logf("%s: not available here: %v", name, err)
				return nil
			}
			return b
		}})
	}
	var addr string // the in-process server, started by the first case for the whole backend
	out = append(out, opBackend{name: "RPC", exact: true, times: 2, fresh: true, open: func(t *testing.T) *ggml.Backend {
		if addr == "" {
			addr = rpctest.Serve(t, 1, ggml.WithRPCServerLog(t.Logf))
		}
		b, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(30*time.Second))
		require.NoError(t, err)
		require.True(t, b.IsRPC())
		return b
	}})
	return out
}

// TestOpsEveryBackend computes the op table on every backend and compares it with the CPU:
// bit-identical for the backends that run the CPU's kernels on one thread (Test, RPC), else
// within twice the case's tolerance against the float64 reference (matrix products: an NMSE
// of at most mulMatNMSE).
func TestOpsEveryBackend(t *testing.T) {
	xLeakCheck(t)
	cpu := newTestCPU(t, 1)
	cases := allOpCases()
	type ref struct {
		got []float64
	}
	refs := make([]ref, len(cases))
	for i, tc := range cases {
		got, _, ok := computeOpCase(t, cpu, tc, 1)
		require.True(t, ok, "%s: the CPU does not support it", tc.name)
		refs[i].got = got
	}
	var summary []string
	for _, ob := range opBackends() {
		t.Run(ob.name, func(t *testing.T) {
			be := ob.open(t)
			if be == nil {
				summary = append(summary, fmt.Sprintf("%-14s not available", ob.name))
				t.Skip("not available")
			}
			defer func() { be.Close() }()
			ran, failed := 0, 0
			var skipped, known []string
			for i, tc := range cases {
				if ob.fresh && i > 0 {
					be.Close()
					be = ob.open(t)
				}
				if why := knownOpFailures[ob.name][tc.name]; why != "" {
					known = append(known, tc.name)
					t.Logf("%s: known failure, skipped: %s", tc.name, why)
					continue
				}
				ok := t.Run(tc.name, func(t *testing.T) {
					got, _, supported := computeOpCase(t, be, tc, ob.times)
					if !supported {
						skipped = append(skipped, tc.name)
						t.Skipf("%s does not support a node of %s", be.Name(), tc.name)
					}
					ran++
					want := refs[i].got
					require.Len(t, got, len(want))
					if ob.exact {
						for j := range want {
							if math.Float64bits(got[j]) != math.Float64bits(want[j]) && !(math.IsNaN(got[j]) && math.IsNaN(want[j])) {
								require.Failf(t, "not bit-identical to the CPU", "%s on %s: element %d: %g, CPU %g", tc.name, be.Name(), j, got[j], want[j])
							}
						}
						return
					}
					tol := tc.tol
					if tol == 0 {
						tol = 1e-4
					}
					if strings.HasPrefix(tc.name, "MulMat") {
						// device backends may round the operands of matrix products to F16
						// (CUDA's cuBLAS path): judged by the NMSE, as ggml's test-backend-ops does
						e := nmse(want, got)
						require.LessOrEqual(t, e, mulMatNMSE, "%s on %s: NMSE %.3g against the CPU", tc.name, be.Name(), e)
						return
					}
					bad, first := countMismatches(want, got, 2*tol)
					require.Zero(t, bad, "%s on %s: %d of %d elements differ from the CPU (tol %g); first: %s", tc.name, be.Name(), bad, len(got), 2*tol, first)
				})
				if !ok {
					failed++
				}
			}
			sort.Strings(skipped)
			line := fmt.Sprintf("%-14s ran %3d, skipped %3d (unsupported) + %d (known failures), failed %d", ob.name, ran, len(skipped), len(known), failed)
			if len(skipped) > 0 {
				line += "; unsupported: " + strings.Join(skipped, " ")
			}
			if len(known) > 0 {
				line += "; known failures: " + strings.Join(known, " ")
			}
			summary = append(summary, line)
			t.Log(line)
		})
	}
	t.Logf("op table of %d cases on every backend, against the 1-thread CPU:\n%s", len(cases), strings.Join(summary, "\n"))
}

// mulMatNMSE is the largest normalized mean squared error of a matrix product on a device
// backend against the CPU (ggml's test-backend-ops bound for MUL_MAT).
const mulMatNMSE = 5e-4

// nmse returns sum((got-want)^2) / sum(want^2).
func nmse(want, got []float64) float64 {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	if den == 0 {
		return num
	}
	return num / den
}
