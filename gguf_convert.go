package ggml

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/gguf"
)

// Types that ggml added after the version this library implements reach it in today's GGUF
// files. LoadGGUFTensors converts those that it can turn into one of its own types without
// losing more than an f16 rounding of a scale, block by block while it reads them:
//
//	bf16    -> f32   exact (the bf16 bits are the high half of the f32)
//	iq4_nl  -> q8_0  exact: a block's 4-bit indices pick int8 levels of one fixed table,
//	                 which are q8_0 quants under the same f16 scale
//	iq4_xs  -> q8_0  each sub-block of 32 becomes a q8_0 block whose scale is the super-block
//	                 scale times the sub-block's 6-bit scale, rounded to f16 (relative error
//	                 at most 2^-11); the quants are the iq4_nl levels
//	tq1_0   -> q8_0  exact: ternary weights (-1, 0, +1 times an f16 d per 256) are q8_0
//	tq2_0   -> q8_0  quants under that d; tq2_0's fourth code (+2) too
//
// The others (iq1_*, iq2_s, iq3_*, i64, f64) stay errors that name the type.

// ggufConversion turns whole blocks of a file type into blocks of a type of this library.
type ggufConversion struct {
	to       Type
	srcBlock int64                 // bytes of one block in the file
	dstBlock int64                 // bytes its conversion takes
	convert  func(dst, src []byte) // len(src) = k*srcBlock, len(dst) = k*dstBlock
}

var ggufConversions = map[gguf.TensorType]ggufConversion{
	gguf.TypeBF16:   {TypeF32, 2, 4, convertBF16},
	gguf.TypeIQ4_NL: {TypeQ8_0, 18, 34, convertIQ4NL},
	gguf.TypeIQ4_XS: {TypeQ8_0, 136, 8 * 34, convertIQ4XS},
	gguf.TypeTQ1_0:  {TypeQ8_0, 54, 8 * 34, convertTQ1},
	gguf.TypeTQ2_0:  {TypeQ8_0, 66, 8 * 34, convertTQ2},
}

// GGUFLoadType returns the type that a tensor of file type tt has once LoadGGUFTensors has
// loaded it: tt's own type when this library has it, else the type it converts tt to (bf16 ->
// f32; iq4_nl, iq4_xs, tq1_0, tq2_0 -> q8_0). ok is false for a type it can neither load nor convert.
func GGUFLoadType(tt gguf.TensorType) (t Type, ok bool) {
	if t, ok = TypeFromGGUF(tt); ok {
		return t, true
	}
	if c, found := ggufConversions[tt]; found {
		return c.to, true
	}
	return 0, false
}

// ggufConvertedTypes names the file types LoadGGUFTensors converts (for error messages).
func ggufConvertedTypes() string {
	var names []string
	for tt := range ggufConversions {
		names = append(names, tt.String())
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// ggufLoadSize returns the bytes that tensor ti of a file takes in memory once loaded.
func ggufLoadSize(ti gguf.TensorInfo) int64 {
	if c, ok := ggufConversions[ti.Type]; ok {
		return ti.Size / c.srcBlock * c.dstBlock
	}
	return ti.Size
}

// iq4Levels are the 16 int8 levels that iq4_nl and iq4_xs indices select.
var iq4Levels = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func convertBF16(dst, src []byte) {
	for i := 0; 2*i < len(src); i++ {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(binary.LittleEndian.Uint16(src[2*i:]))<<16)
	}
}

// iq4Quants writes the 32 quants of the 16 index bytes qs into q: byte j holds element j in
// its low nibble and element j+16 in its high nibble (the q4_0 order).
func iq4Quants(q, qs []byte) {
	for j := 0; j < 16; j++ {
		q[j] = byte(iq4Levels[qs[j]&15])
		q[j+16] = byte(iq4Levels[qs[j]>>4])
	}
}

// iq4_nl block: f16 d, 16 index bytes; q8_0 block: f16 d, 32 int8 quants.
func convertIQ4NL(dst, src []byte) {
	for s, d := 0, 0; s < len(src); s, d = s+18, d+34 {
		copy(dst[d:d+2], src[s:s+2])
		iq4Quants(dst[d+2:d+34], src[s+2:s+18])
	}
}

// iq4_xs super-block of 256: f16 d, u16 scales_h (2 high bits of each sub-block's 6-bit
// scale, sub-block i at bits 2i), 4 bytes scales_l (4 low bits, sub-block i in byte i/2,
// low nibble for even i), 128 index bytes (16 per sub-block of 32, as iq4_nl); the value of
// an element is d * (scale - 32) * level.
func convertIQ4XS(dst, src []byte) {
	for s, d := 0, 0; s < len(src); s, d = s+136, d+8*34 {
		sd := Float16(binary.LittleEndian.Uint16(src[s:])).Float32()
		sh := binary.LittleEndian.Uint16(src[s+2:])
		for ib := 0; ib < 8; ib++ {
			ls := int(src[s+4+ib/2]>>(4*(ib%2)))&15 | int(sh>>(2*ib))&3<<4
			o := d + 34*ib
			binary.LittleEndian.PutUint16(dst[o:], uint16(NewFloat16(sd*float32(ls-32))))
			iq4Quants(dst[o+2:o+34], src[s+8+16*ib:s+8+16*ib+16])
		}
	}
}

// q8Blocks writes the 256 quants q of a super-block as 8 q8_0 blocks under the f16 scale d.
func q8Blocks(dst []byte, d []byte, q *[256]int8) {
	for ib := 0; ib < 8; ib++ {
		o := 34 * ib
		copy(dst[o:o+2], d)
		for j := 0; j < 32; j++ {
			dst[o+2+j] = byte(q[32*ib+j])
		}
	}
}

// tq1_0 super-block of 256 (54 bytes): 48 bytes of five base-3 digits ("trits") each, then 4
// bytes of four, then f16 d; element = (trit - 1) * d. Byte m of the first 32 holds elements
// m, m+32, ..., m+128 (the most significant digit first), byte m of the next 16 elements
// 160+m, 176+m, ..., 224+m, and byte j of the last 4 elements 240+j, 244+j, 248+j, 252+j. A
// byte stores its digits as the fraction q/256 of the digit string: digit n is the integer
// part of 3 * ((q * 3^n) mod 256) / 256.
func convertTQ1(dst, src []byte) {
	trit := func(q byte, n int) int8 {
		p := q
		for ; n > 0; n-- {
			p *= 3 // mod 256
		}
		return int8(int(p)*3>>8) - 1
	}
	var q [256]int8
	for s, d := 0, 0; s < len(src); s, d = s+54, d+8*34 {
		b := src[s : s+54]
		for n := 0; n < 5; n++ {
			for m := 0; m < 32; m++ {
				q[32*n+m] = trit(b[m], n)
			}
			for m := 0; m < 16; m++ {
				q[160+16*n+m] = trit(b[32+m], n)
			}
		}
		for n := 0; n < 4; n++ {
			for j := 0; j < 4; j++ {
				q[240+4*n+j] = trit(b[48+j], n)
			}
		}
		q8Blocks(dst[d:d+8*34], b[52:54], &q)
	}
}

// tq2_0 super-block of 256 (66 bytes): 64 bytes of four 2-bit codes each, then f16 d; element =
// (code - 1) * d. Byte m of the first 32 holds elements m, m+32, m+64, m+96 in bits 0-1, 2-3,
// 4-5, 6-7; byte m of the next 32 the elements 128 on.
func convertTQ2(dst, src []byte) {
	var q [256]int8
	for s, d := 0, 0; s < len(src); s, d = s+66, d+8*34 {
		b := src[s : s+66]
		for h := 0; h < 2; h++ {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					q[128*h+32*l+m] = int8(b[32*h+m]>>(2*l)&3) - 1
				}
			}
		}
		q8Blocks(dst[d:d+8*34], b[64:66], &q)
	}
}
