//go:build cgo

package ggml_test

import (
	"fmt"
	"testing"

	"github.com/ggml-go/ggml"
)

// CONT of transposed and permuted F32 and F16 views (the tiled transposing copy of the CPU
// backend) against an element-by-element reference, on sizes that are not multiples of the tile.
func TestContTransposedViews(t *testing.T) {
	shapes := [][4]int64{{1, 1, 1, 1}, {5, 3, 1, 1}, {33, 70, 1, 1}, {64, 96, 1, 1}, {31, 17, 3, 2}, {40, 9, 5, 1}}
	perms := [][4]int{{1, 0, 2, 3}, {0, 2, 1, 3}, {2, 0, 1, 3}, {1, 2, 0, 3}, {3, 1, 2, 0}}
	for _, typ := range []ggml.Type{ggml.TypeF32, ggml.TypeF16} {
		for _, ne := range shapes {
			for _, p := range perms {
				for _, threads := range []int{1, 3} {
					name := fmt.Sprintf("%v/%v/%v/t%d", typ, ne, p, threads)
					t.Run(name, func(t *testing.T) { checkContPermuted(t, typ, ne, p, threads) })
				}
			}
		}
	}
}

// newPatternSource makes a context holding an F32 tensor of shape ne filled with a pattern
// that F16 holds exactly, and returns the context, the tensor and its values.
func newPatternSource(t *testing.T, ne [4]int64) (*ggml.Context, *ggml.Tensor, []float32) {
	t.Helper()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	src := ctx.NewTensor4D(ggml.TypeF32, ne[0], ne[1], ne[2], ne[3])
	v := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for i := range v {
		v[i] = float32(i%2047) - 1000 // exact in F16
	}
	if err := src.SetFloat32(v); err != nil {
		ctx.Close()
		t.Fatal(err)
	}
	return ctx, src, v
}

func checkContPermuted(t *testing.T, typ ggml.Type, ne [4]int64, p [4]int, threads int) {
	ctx, src, v := newPatternSource(t, ne)
	defer ctx.Close()
	a := src
	if typ != ggml.TypeF32 {
		a = ctx.Cpy(src, ctx.NewTensor4D(typ, ne[0], ne[1], ne[2], ne[3]))
	}
	out := ctx.Cont(ctx.Permute(a, p[0], p[1], p[2], p[3]))
	res := out
	if typ != ggml.TypeF32 {
		on := out.Ne()
		res = ctx.Cpy(out, ctx.NewTensor4D(ggml.TypeF32, on[0], on[1], on[2], on[3]))
	}
	g := ctx.NewGraph()
	g.BuildForwardExpand(res)
	if err := ctx.Compute(g, threads); err != nil {
		t.Fatal(err)
	}
	got, err := res.Float32()
	if err != nil {
		t.Fatal(err)
	}
	// permute: source dim d becomes destination dim p[d]
	var dne [4]int64
	for d := 0; d < 4; d++ {
		dne[p[d]] = ne[d]
	}
	var i [4]int64
	for i[3] = 0; i[3] < ne[3]; i[3]++ {
		for i[2] = 0; i[2] < ne[2]; i[2]++ {
			for i[1] = 0; i[1] < ne[1]; i[1]++ {
				for i[0] = 0; i[0] < ne[0]; i[0]++ {
					var j [4]int64
					for d := 0; d < 4; d++ {
						j[p[d]] = i[d]
					}
					want := v[((i[3]*ne[2]+i[2])*ne[1]+i[1])*ne[0]+i[0]]
					at := ((j[3]*dne[2]+j[2])*dne[1]+j[1])*dne[0] + j[0]
					if got[at] != want {
						t.Fatalf("element %v (destination %v): %v, want %v", i, j, got[at], want)
					}
				}
			}
		}
	}
}

// CPY of transposed and permuted F32 views into a dense F16 tensor (the KV cache's V store
// converts while it transposes) against an element-by-element reference.
func TestCpyTransposedF32ToF16(t *testing.T) {
	shapes := [][4]int64{{1, 1, 1, 1}, {5, 3, 1, 1}, {256, 8, 1, 1}, {256, 1, 1, 1}, {33, 70, 1, 1}, {31, 17, 3, 2}}
	perms := [][4]int{{1, 0, 2, 3}, {0, 2, 1, 3}, {2, 0, 1, 3}, {1, 2, 0, 3}}
	for _, ne := range shapes {
		for _, p := range perms {
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%v/%v/t%d", ne, p, threads), func(t *testing.T) {
					ctx, src, v := newPatternSource(t, ne)
					defer ctx.Close()
					var dne [4]int64
					for d := 0; d < 4; d++ {
						dne[p[d]] = ne[d]
					}
					h := ctx.Cpy(ctx.Permute(src, p[0], p[1], p[2], p[3]), ctx.NewTensor4D(ggml.TypeF16, dne[0], dne[1], dne[2], dne[3]))
					res := ctx.Cpy(h, ctx.NewTensor4D(ggml.TypeF32, dne[0], dne[1], dne[2], dne[3]))
					g := ctx.NewGraph()
					g.BuildForwardExpand(res)
					if err := ctx.Compute(g, threads); err != nil {
						t.Fatal(err)
					}
					got, err := res.Float32()
					if err != nil {
						t.Fatal(err)
					}
					var i [4]int64
					for i[3] = 0; i[3] < ne[3]; i[3]++ {
						for i[2] = 0; i[2] < ne[2]; i[2]++ {
							for i[1] = 0; i[1] < ne[1]; i[1]++ {
								for i[0] = 0; i[0] < ne[0]; i[0]++ {
									var j [4]int64
									for d := 0; d < 4; d++ {
										j[p[d]] = i[d]
									}
									want := v[((i[3]*ne[2]+i[2])*ne[1]+i[1])*ne[0]+i[0]]
									if at := ((j[3]*dne[2]+j[2])*dne[1]+j[1])*dne[0] + j[0]; got[at] != want {
										t.Fatalf("element %v: %v, want %v", i, got[at], want)
									}
								}
							}
						}
					}
				})
			}
		}
	}
}
