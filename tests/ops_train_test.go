package tests

import (
	"math"

	"github.com/ggml-go/ggml"
)

// trainOpCases: the forward ops of training (CrossEntropyLoss, FlashAttn) against float64
// references. Their gradients are checked by finite differences in the root package
// (autodiff_test.go) and in ggml/tests/test-grad.c.
func trainOpCases() []opCase {
	return []opCase{
		{name: "CrossEntropyLoss", in: []input{pos(-2, 2, 7, 3, 2), pos(0, 1, 7, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.CrossEntropyLoss(x[0], x[1]) },
			ref: func(x []*arr) *arr {
				p := refSoftMax(x[0], nil, 1)
				out := newArr(1)
				rows := 0
				s := 0.0
				p.each(func(i0, i1, i2, i3 int) {
					if i0 == 0 {
						rows++
					}
					s += x[1].at(i0, i1, i2, i3) * math.Log(1e-9+(1-1e-9)*p.at(i0, i1, i2, i3))
				})
				out.d[0] = -s / float64(rows)
				return out
			}, tol: 1e-5},
		{name: "FlashAttn", in: []input{f32(4, 3, 4, 1), f32(4, 5, 2, 1), f32(5, 4, 2, 1)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.FlashAttn(x[0], x[1], x[2], true) },
			ref:   func(x []*arr) *arr { return refFlashAttn(x[0], x[1], x[2], true) }, tol: 1e-5},
		{name: "FlashAttn/unmasked", covers: []string{"FlashAttn"}, in: []input{f32(4, 3, 2, 1), f32(4, 5, 2, 1), f32(5, 4, 2, 1)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.FlashAttn(x[0], x[1], x[2], false) },
			ref:   func(x []*arr) *arr { return refFlashAttn(x[0], x[1], x[2], false) }, tol: 1e-5},
	}
}

// refFlashAttn: q [D,N,H,B], k [D,M,Hk,B], v [M,D,Hk,B]; head h reads k/v head h % Hk.
func refFlashAttn(q, k, v *arr, masked bool) *arr {
	D, N, H, B, M, Hk := q.ne[0], q.ne[1], q.ne[2], q.ne[3], k.ne[1], k.ne[2]
	out := newArr(D, N, H, B)
	s := make([]float64, M)
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			hk := h % Hk
			for n := 0; n < N; n++ {
				mx := math.Inf(-1)
				for m := 0; m < M; m++ {
					s[m] = math.Inf(-1)
					if masked && m > M-N+n {
						continue
					}
					d := 0.0
					for i := 0; i < D; i++ {
						d += k.at(i, m, hk, b) * q.at(i, n, h, b)
					}
					s[m] = d / math.Sqrt(float64(D))
					mx = math.Max(mx, s[m])
				}
				sum := 0.0
				for m := range s {
					s[m] = math.Exp(s[m] - mx)
					sum += s[m]
				}
				for i := 0; i < D; i++ {
					o := 0.0
					for m := 0; m < M; m++ {
						o += v.at(m, i, hk, b) * s[m] / sum
					}
					out.set(i, n, h, b, o)
				}
			}
		}
	}
	return out
}
