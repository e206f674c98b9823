package tests

// Pure-Go float64 references of the graph operations, on dense row-major tensors with the ggml
// shape convention (dimension 0 varies fastest).

import (
	"math"
	"math/rand"
	"sort"
)

// arr is a dense tensor of float64 values with four extents.
type arr struct {
	ne [4]int
	d  []float64
}

func newArr(ne ...int) *arr {
	a := &arr{ne: [4]int{1, 1, 1, 1}}
	copy(a.ne[:], ne)
	a.d = make([]float64, a.ne[0]*a.ne[1]*a.ne[2]*a.ne[3])
	return a
}

func (a *arr) idx(i0, i1, i2, i3 int) int {
	return i0 + a.ne[0]*(i1+a.ne[1]*(i2+a.ne[2]*i3))
}

func (a *arr) at(i0, i1, i2, i3 int) float64 { return a.d[a.idx(i0, i1, i2, i3)] }

func (a *arr) set(i0, i1, i2, i3 int, v float64) { a.d[a.idx(i0, i1, i2, i3)] = v }

func (a *arr) clone() *arr {
	b := &arr{ne: a.ne, d: append([]float64(nil), a.d...)}
	return b
}

func (a *arr) n() int { return len(a.d) }

// each calls f for every index in logical order.
func (a *arr) each(f func(i0, i1, i2, i3 int)) {
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for i2 := 0; i2 < a.ne[2]; i2++ {
			for i1 := 0; i1 < a.ne[1]; i1++ {
				for i0 := 0; i0 < a.ne[0]; i0++ {
					f(i0, i1, i2, i3)
				}
			}
		}
	}
}

func randArr(rng *rand.Rand, lo, hi float64, ne ...int) *arr {
	a := newArr(ne...)
	for i := range a.d {
		a.d[i] = lo + (hi-lo)*rng.Float64()
	}
	return a
}

func mapArr(a *arr, f func(float64) float64) *arr {
	out := a.clone()
	for i, v := range out.d {
		out.d[i] = f(v)
	}
	return out
}

// binary applies f(a, b) with b broadcast over a.
func refBinary(a, b *arr, f func(x, y float64) float64) *arr {
	out := newArr(a.ne[:]...)
	a.each(func(i0, i1, i2, i3 int) {
		out.set(i0, i1, i2, i3, f(a.at(i0, i1, i2, i3), b.at(i0%b.ne[0], i1%b.ne[1], i2%b.ne[2], i3%b.ne[3])))
	})
	return out
}

// window writes (or adds) b into a copy of a through a strided byte window of an F32 tensor.
func refWindow(a, b *arr, nb1, nb2, nb3, offset int, add bool) *arr {
	out := a.clone()
	b.each(func(i0, i1, i2, i3 int) {
		byteOff := offset + i0*4 + i1*nb1 + i2*nb2 + i3*nb3
		k := byteOff / 4
		if add {
			out.d[k] += b.at(i0, i1, i2, i3)
		} else {
			out.d[k] = b.at(i0, i1, i2, i3)
		}
	})
	return out
}

func refRowReduce(a *arr, f func(row []float64) float64) *arr {
	out := newArr(1, a.ne[1], a.ne[2], a.ne[3])
	row := make([]float64, a.ne[0])
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for i2 := 0; i2 < a.ne[2]; i2++ {
			for i1 := 0; i1 < a.ne[1]; i1++ {
				for i0 := range row {
					row[i0] = a.at(i0, i1, i2, i3)
				}
				out.set(0, i1, i2, i3, f(row))
			}
		}
	}
	return out
}

// refRows applies f to every row (dimension 0) and writes the result rows.
func refRows(a *arr, f func(i1, i2, i3 int, row []float64) []float64) *arr {
	out := a.clone()
	row := make([]float64, a.ne[0])
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for i2 := 0; i2 < a.ne[2]; i2++ {
			for i1 := 0; i1 < a.ne[1]; i1++ {
				for i0 := range row {
					row[i0] = a.at(i0, i1, i2, i3)
				}
				r := f(i1, i2, i3, row)
				for i0 := range r {
					out.set(i0, i1, i2, i3, r[i0])
				}
			}
		}
	}
	return out
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func refNorm(a *arr, eps float64) *arr {
	return refRows(a, func(_, _, _ int, row []float64) []float64 {
		n := float64(len(row))
		mean := sum(row) / n
		v := 0.0
		for _, x := range row {
			v += (x - mean) * (x - mean)
		}
		v /= n
		out := make([]float64, len(row))
		for i, x := range row {
			out[i] = (x - mean) / math.Sqrt(v+eps)
		}
		return out
	})
}

func refRMSNorm(a *arr, eps float64) *arr {
	return refRows(a, func(_, _, _ int, row []float64) []float64 {
		ms := 0.0
		for _, x := range row {
			ms += x * x
		}
		ms /= float64(len(row))
		out := make([]float64, len(row))
		for i, x := range row {
			out[i] = x / math.Sqrt(ms+eps)
		}
		return out
	})
}

func refGroupNorm(a *arr, groups int) *arr {
	const eps = 1e-6
	out := a.clone()
	per := (a.ne[2] + groups - 1) / groups
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for g := 0; g < groups; g++ {
			c0, c1 := g*per, min((g+1)*per, a.ne[2])
			if c0 >= c1 {
				continue
			}
			var vals []float64
			for c := c0; c < c1; c++ {
				for i1 := 0; i1 < a.ne[1]; i1++ {
					for i0 := 0; i0 < a.ne[0]; i0++ {
						vals = append(vals, a.at(i0, i1, c, i3))
					}
				}
			}
			mean := sum(vals) / float64(len(vals))
			v := 0.0
			for _, x := range vals {
				v += (x - mean) * (x - mean)
			}
			v /= float64(len(vals))
			for c := c0; c < c1; c++ {
				for i1 := 0; i1 < a.ne[1]; i1++ {
					for i0 := 0; i0 < a.ne[0]; i0++ {
						out.set(i0, i1, c, i3, (a.at(i0, i1, c, i3)-mean)/math.Sqrt(v+eps))
					}
				}
			}
		}
	}
	return out
}

// refMulMat: a [K,M,a2,a3], b [K,N,b2,b3] -> [M,N,b2,b3]; a broadcast over b in dims 2,3.
func refMulMat(a, b *arr) *arr {
	out := newArr(a.ne[1], b.ne[1], b.ne[2], b.ne[3])
	r2, r3 := b.ne[2]/a.ne[2], b.ne[3]/a.ne[3]
	out.each(func(i0, i1, i2, i3 int) {
		s := 0.0
		for k := 0; k < a.ne[0]; k++ {
			s += a.at(k, i0, i2/r2, i3/r3) * b.at(k, i1, i2, i3)
		}
		out.set(i0, i1, i2, i3, s)
	})
	return out
}

// refOutProd: a [M,K,a2,a3], b [N,K,b2,b3] -> [M,N,b2,b3].
func refOutProd(a, b *arr) *arr {
	out := newArr(a.ne[0], b.ne[0], b.ne[2], b.ne[3])
	r2, r3 := b.ne[2]/a.ne[2], b.ne[3]/a.ne[3]
	out.each(func(i0, i1, i2, i3 int) {
		s := 0.0
		for k := 0; k < a.ne[1]; k++ {
			s += a.at(i0, k, i2/r2, i3/r3) * b.at(i1, k, i2, i3)
		}
		out.set(i0, i1, i2, i3, s)
	})
	return out
}

func refSoftMax(a, mask *arr, scale float64) *arr {
	return refRows(a, func(i1, _, _ int, row []float64) []float64 {
		out := make([]float64, len(row))
		mx := math.Inf(-1)
		for i, x := range row {
			v := x * scale
			if mask != nil {
				v += mask.at(i, i1, 0, 0)
			}
			out[i] = v
			mx = math.Max(mx, v)
		}
		s := 0.0
		for i := range out {
			out[i] = math.Exp(out[i] - mx)
			s += out[i]
		}
		for i := range out {
			out[i] /= s
		}
		return out
	})
}

// refRope: a [D, H, T, 1], pos[T]; mode 0 (pairs 2k, 2k+1) or 2 (pairs k, k+nDims/2).
// freqScale and attnFactor as RopeCustom with ext_factor 0.
func refRope(a *arr, pos []int32, nDims, mode int, base, freqScale, attnFactor float64) *arr {
	out := a.clone()
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for i2 := 0; i2 < a.ne[2]; i2++ {
			p := float64(pos[i2])
			for i1 := 0; i1 < a.ne[1]; i1++ {
				for k := 0; k < nDims/2; k++ {
					theta := freqScale * p * math.Pow(base, -2*float64(k)/float64(nDims))
					c, s := math.Cos(theta)*attnFactor, math.Sin(theta)*attnFactor
					var j0, j1 int
					if mode&2 != 0 {
						j0, j1 = k, k+nDims/2
					} else {
						j0, j1 = 2*k, 2*k+1
					}
					x0, x1 := a.at(j0, i1, i2, i3), a.at(j1, i1, i2, i3)
					out.set(j0, i1, i2, i3, x0*c-x1*s)
					out.set(j1, i1, i2, i3, x0*s+x1*c)
				}
			}
		}
	}
	return out
}

// refRopeFactors is refRope with llama.cpp 2025's frequency factors: pair k's angle is divided
// by factors[k].
func refRopeFactors(a *arr, pos []int32, nDims, mode int, base, attnFactor float64, factors []float64) *arr {
	out := a.clone()
	for i3 := 0; i3 < a.ne[3]; i3++ {
		for i2 := 0; i2 < a.ne[2]; i2++ {
			for i1 := 0; i1 < a.ne[1]; i1++ {
				for k := 0; k < nDims/2; k++ {
					theta := float64(pos[i2]) * math.Pow(base, -2*float64(k)/float64(nDims)) / factors[k]
					c, s := math.Cos(theta)*attnFactor, math.Sin(theta)*attnFactor
					j0, j1 := 2*k, 2*k+1
					if mode&2 != 0 {
						j0, j1 = k, k+nDims/2
					}
					x0, x1 := a.at(j0, i1, i2, i3), a.at(j1, i1, i2, i3)
					out.set(j0, i1, i2, i3, x0*c-x1*s)
					out.set(j1, i1, i2, i3, x0*s+x1*c)
				}
			}
		}
	}
	return out
}

func refAlibi(a *arr, nHead int, maxBias float64) *arr {
	h := 1 << int(math.Floor(math.Log2(float64(nHead))))
	m0 := math.Pow(2, -maxBias/float64(h))
	m1 := math.Pow(2, -(maxBias/2)/float64(h))
	out := a.clone()
	a.each(func(i0, i1, i2, i3 int) {
		k := i2 + a.ne[2]*i3
		var slope float64
		if k < h {
			slope = math.Pow(m0, float64(k+1))
		} else {
			slope = math.Pow(m1, float64(2*(k-h)+1))
		}
		out.set(i0, i1, i2, i3, float64(i0)*slope+a.at(i0, i1, i2, i3))
	})
	return out
}

func convOut(in, k, s, p, d int) int {
	return (in+2*p-d*(k-1)-1)/s + 1
}

// refIm2Col2D: kernel [KW,KH,IC,OC], input [W,H,IC,N] -> [IC*KH*KW, OW, OH, N].
func refIm2Col2D(kw, kh int, b *arr, s0, s1, p0, p1, d0, d1 int) *arr {
	ic := b.ne[2]
	ow, oh := convOut(b.ne[0], kw, s0, p0, d0), convOut(b.ne[1], kh, s1, p1, d1)
	out := newArr(ic*kh*kw, ow, oh, b.ne[3])
	for n := 0; n < b.ne[3]; n++ {
		for y := 0; y < oh; y++ {
			for x := 0; x < ow; x++ {
				for c := 0; c < ic; c++ {
					for ky := 0; ky < kh; ky++ {
						for kx := 0; kx < kw; kx++ {
							iy, ix := y*s1+ky*d1-p1, x*s0+kx*d0-p0
							v := 0.0
							if iy >= 0 && iy < b.ne[1] && ix >= 0 && ix < b.ne[0] {
								v = b.at(ix, iy, c, n)
							}
							out.set(c*kh*kw+ky*kw+kx, x, y, n, v)
						}
					}
				}
			}
		}
	}
	return out
}

// refIm2Col1D: kernel [K,IC,OC], input [L,IC,N] -> [IC*K, OL, N].
func refIm2Col1D(k int, b *arr, s0, p0, d0 int) *arr {
	ic := b.ne[1]
	ol := convOut(b.ne[0], k, s0, p0, d0)
	out := newArr(ic*k, ol, b.ne[2])
	for n := 0; n < b.ne[2]; n++ {
		for x := 0; x < ol; x++ {
			for c := 0; c < ic; c++ {
				for kx := 0; kx < k; kx++ {
					ix := x*s0 + kx*d0 - p0
					v := 0.0
					if ix >= 0 && ix < b.ne[0] {
						v = b.at(ix, c, n, 0)
					}
					out.set(c*k+kx, x, n, 0, v)
				}
			}
		}
	}
	return out
}

// refConv1D: kernel a [K,IC,OC], input b [L,IC,N] -> [OL, OC, N].
func refConv1D(a, b *arr, s0, p0, d0 int) *arr {
	k, ic, oc := a.ne[0], a.ne[1], a.ne[2]
	ol := convOut(b.ne[0], k, s0, p0, d0)
	out := newArr(ol, oc, b.ne[2])
	for n := 0; n < b.ne[2]; n++ {
		for o := 0; o < oc; o++ {
			for x := 0; x < ol; x++ {
				s := 0.0
				for c := 0; c < ic; c++ {
					for kx := 0; kx < k; kx++ {
						ix := x*s0 + kx*d0 - p0
						if ix >= 0 && ix < b.ne[0] {
							s += a.at(kx, c, o, 0) * b.at(ix, c, n, 0)
						}
					}
				}
				out.set(x, o, n, 0, s)
			}
		}
	}
	return out
}

// refConv2D: kernel a [KW,KH,IC,OC], input b [W,H,IC,N] -> [OW,OH,OC,N].
func refConv2D(a, b *arr, s0, s1, p0, p1, d0, d1 int) *arr {
	kw, kh, ic, oc := a.ne[0], a.ne[1], a.ne[2], a.ne[3]
	ow, oh := convOut(b.ne[0], kw, s0, p0, d0), convOut(b.ne[1], kh, s1, p1, d1)
	out := newArr(ow, oh, oc, b.ne[3])
	out.each(func(x, y, o, n int) {
		s := 0.0
		for c := 0; c < ic; c++ {
			for ky := 0; ky < kh; ky++ {
				for kx := 0; kx < kw; kx++ {
					iy, ix := y*s1+ky*d1-p1, x*s0+kx*d0-p0
					if iy >= 0 && iy < b.ne[1] && ix >= 0 && ix < b.ne[0] {
						s += a.at(kx, ky, c, o) * b.at(ix, iy, c, n)
					}
				}
			}
		}
		out.set(x, y, o, n, s)
	})
	return out
}

// refConvTranspose1D: kernel a [K,OC,IC], input b [L,IC] -> [(L-1)*s+K, OC].
func refConvTranspose1D(a, b *arr, s0 int) *arr {
	k, oc, ic := a.ne[0], a.ne[1], a.ne[2]
	l := b.ne[0]
	out := newArr((l-1)*s0+k, oc)
	for o := 0; o < oc; o++ {
		for c := 0; c < ic; c++ {
			for i := 0; i < l; i++ {
				for kx := 0; kx < k; kx++ {
					j := out.idx(i*s0+kx, o, 0, 0)
					out.d[j] += a.at(kx, o, c, 0) * b.at(i, c, 0, 0)
				}
			}
		}
	}
	return out
}

// refConvTranspose2D: kernel a [KW,KH,OC,IC], input b [W,H,IC,N] -> [(W-1)*s+KW, (H-1)*s+KH, OC, N].
func refConvTranspose2D(a, b *arr, s int) *arr {
	kw, kh, oc, ic := a.ne[0], a.ne[1], a.ne[2], a.ne[3]
	out := newArr((b.ne[0]-1)*s+kw, (b.ne[1]-1)*s+kh, oc, b.ne[3])
	for n := 0; n < b.ne[3]; n++ {
		for o := 0; o < oc; o++ {
			for c := 0; c < ic; c++ {
				for iy := 0; iy < b.ne[1]; iy++ {
					for ix := 0; ix < b.ne[0]; ix++ {
						for ky := 0; ky < kh; ky++ {
							for kx := 0; kx < kw; kx++ {
								j := out.idx(ix*s+kx, iy*s+ky, o, n)
								out.d[j] += a.at(kx, ky, o, c) * b.at(ix, iy, c, n)
							}
						}
					}
				}
			}
		}
	}
	return out
}

func refPool1D(a *arr, isMax bool, k, s int) *arr {
	ol := (a.ne[0]-k)/s + 1
	out := newArr(ol, a.ne[1], a.ne[2], a.ne[3])
	out.each(func(x, i1, i2, i3 int) {
		acc := 0.0
		if isMax {
			acc = math.Inf(-1)
		}
		for j := 0; j < k; j++ {
			v := a.at(x*s+j, i1, i2, i3)
			if isMax {
				acc = math.Max(acc, v)
			} else {
				acc += v
			}
		}
		if !isMax {
			acc /= float64(k)
		}
		out.set(x, i1, i2, i3, acc)
	})
	return out
}

func refPool2D(a *arr, isMax bool, k0, k1, s0, s1 int) *arr {
	ow, oh := (a.ne[0]-k0)/s0+1, (a.ne[1]-k1)/s1+1
	out := newArr(ow, oh, a.ne[2], a.ne[3])
	out.each(func(x, y, i2, i3 int) {
		acc := 0.0
		if isMax {
			acc = math.Inf(-1)
		}
		for ky := 0; ky < k1; ky++ {
			for kx := 0; kx < k0; kx++ {
				v := a.at(x*s0+kx, y*s1+ky, i2, i3)
				if isMax {
					acc = math.Max(acc, v)
				} else {
					acc += v
				}
			}
		}
		if !isMax {
			acc /= float64(k0 * k1)
		}
		out.set(x, y, i2, i3, acc)
	})
	return out
}

func refArgsort(a *arr, desc bool) *arr {
	return refRows(a, func(_, _, _ int, row []float64) []float64 {
		idx := make([]int, len(row))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool {
			if desc {
				return row[idx[i]] > row[idx[j]]
			}
			return row[idx[i]] < row[idx[j]]
		})
		out := make([]float64, len(row))
		for i, v := range idx {
			out[i] = float64(v)
		}
		return out
	})
}

// refPermute: result dimension axes[i] is a's dimension i.
func refPermute(a *arr, axes [4]int) *arr {
	var ne [4]int
	for i := 0; i < 4; i++ {
		ne[axes[i]] = a.ne[i]
	}
	out := newArr(ne[:]...)
	a.each(func(i0, i1, i2, i3 int) {
		src := [4]int{i0, i1, i2, i3}
		var dst [4]int
		for i := 0; i < 4; i++ {
			dst[axes[i]] = src[i]
		}
		out.set(dst[0], dst[1], dst[2], dst[3], a.at(i0, i1, i2, i3))
	})
	return out
}

func reshaped(a *arr, ne ...int) *arr {
	out := newArr(ne...)
	copy(out.d, a.d)
	return out
}

// strided reads a view of a (dense F32 storage) with element-count extents ne and byte strides
// nb (nb[0] = 4) starting at byte offset off.
func strided(a *arr, ne [4]int, nb [4]int, off int) *arr {
	out := newArr(ne[:]...)
	out.each(func(i0, i1, i2, i3 int) {
		k := (off + i0*nb[0] + i1*nb[1] + i2*nb[2] + i3*nb[3]) / 4
		out.set(i0, i1, i2, i3, a.d[k])
	})
	return out
}

func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func sgn(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func step(x float64) float64 {
	if x > 0 {
		return 1
	}
	return 0
}

func elu(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.Exp(x) - 1
}

// f16 rounds to half precision, as values stored in an F16 tensor are.
func f16(x float64) float64 {
	return float64(float16Round(float32(x)))
}
