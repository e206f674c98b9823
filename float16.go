package ggml

import (
	"math"
	"strconv"
)

// Float16 is an IEEE 754 half-precision number (ggml_fp16_t), stored as its bit pattern.
type Float16 uint16

// NewFloat16 converts f to the nearest half-precision value (ties to even; values too large
// become ±Inf; NaN stays NaN) — the conversion of ggml_fp32_to_fp16.
func NewFloat16(f float32) Float16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return Float16(sign | 0x7e00 | uint16(mant>>13))
		}
		return Float16(sign | 0x7c00)
	case exp == 0 && mant == 0:
		return Float16(sign)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return Float16(sign | 0x7c00)
	}
	if e <= 0 {
		// subnormal half (or underflow to zero)
		if e < -10 {
			return Float16(sign)
		}
		m := mant | 0x800000 // implicit bit
		shift := uint32(14 - e)
		half := m >> shift
		rem := m & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return Float16(sign | uint16(half))
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to Inf: still correct
	}
	return Float16(sign | uint16(half))
}

// Float32 converts the half-precision value to float32 exactly (ggml_fp16_to_fp32).
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: normalise
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		mant &= 0x3ff
		return math.Float32frombits(sign | e<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Bits returns the IEEE 754 binary16 bit pattern.
func (h Float16) Bits() uint16 {
	return uint16(h)
}

// String formats the value as its float32 conversion.
func (h Float16) String() string {
	return formatFloat32(h.Float32())
}

// Float16FromBits returns the half-precision value with the given bit pattern.
func Float16FromBits(b uint16) Float16 {
	return Float16(b)
}

// Float16Slice converts float32 values to half precision.
func Float16Slice(v []float32) []Float16 {
	out := make([]Float16, len(v))
	for i, f := range v {
		out[i] = NewFloat16(f)
	}
	return out
}

// Float32Slice converts half-precision values to float32.
func Float32Slice(v []Float16) []float32 {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = h.Float32()
	}
	return out
}

func formatFloat32(f float32) string {
	return strconv.FormatFloat(float64(f), 'g', -1, 32)
}
