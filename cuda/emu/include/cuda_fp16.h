// cuda_fp16.h (host emulator) - __half / half / __half_raw and the conversions used by
// cuda/*.cu: __float2half_rn (round to nearest even; subnormals, infinities and NaN exact) and
// __half2float (exact).

#ifndef GGML_CUDA_EMU_CUDA_FP16_H
#define GGML_CUDA_EMU_CUDA_FP16_H

#include "ggml_cuda_emu.h"

struct __half_raw {
    unsigned short x;
};

namespace ggml_cuda_emu {

// IEEE binary32 -> binary16 bits, round to nearest even
inline unsigned short f32_to_f16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) { // inf, NaN (kept quiet, top payload bits kept)
        return (unsigned short) (ax == 0x7f800000u ? (sign | 0x7c00u) : (sign | 0x7e00u | ((ax >> 13) & 0x3ffu)));
    }
    if (ax >= 0x477ff000u) { // >= 65520: rounds to infinity
        return (unsigned short) (sign | 0x7c00u);
    }
    const uint32_t e = ax >> 23;
    if (e < 113) { // below 2^-14: half subnormal (or zero), units of 2^-24
        const uint32_t shift = 126 - e; // mantissa (with implicit bit) >> shift
        if (shift > 24) {
            return (unsigned short) sign;
        }
        const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (r & 1u))) {
            r++;
        }
        return (unsigned short) (sign | r);
    }
    uint32_t h = ((e - 112) << 10) | ((ax >> 13) & 0x3ffu);
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) {
        h++; // may carry into the exponent: correct (up to infinity)
    }
    return (unsigned short) (sign | h);
}

inline float f16_bits_to_f32(unsigned short h) {
    const uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu;
    const uint32_t m = h & 0x3ffu;
    uint32_t x;
    if (e == 0x1f) {
        x = sign | 0x7f800000u | (m << 13);
    } else if (e == 0) {
        if (m == 0) {
            x = sign;
        } else {
            // subnormal: m * 2^-24, exact in binary32
            const float v = (float) m * 5.9604644775390625e-08f;
            memcpy(&x, &v, sizeof(x));
            x |= sign;
        }
    } else {
        x = sign | ((e + 112) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, sizeof(f));
    return f;
}

} // namespace ggml_cuda_emu

struct __half {
    unsigned short __x;

    __half() = default;
    constexpr __half(const __half_raw & r) : __x(r.x) {}
    __half(float f) : __x(::ggml_cuda_emu::f32_to_f16_bits(f)) {}
    __half(double d) : __x(::ggml_cuda_emu::f32_to_f16_bits((float) d)) {}
    constexpr operator __half_raw() const { return __half_raw{ __x }; }
    operator float() const { return ::ggml_cuda_emu::f16_bits_to_f32(__x); }
    __half & operator=(const __half_raw & r) {
        __x = r.x;
        return *this;
    }
};

typedef __half half;

static_assert(sizeof(__half) == 2, "__half must be 2 bytes");

inline __half __float2half_rn(float f) {
    return __half(__half_raw{ ::ggml_cuda_emu::f32_to_f16_bits(f) });
}

inline __half __float2half(float f) {
    return __float2half_rn(f);
}

inline float __half2float(__half h) {
    return ::ggml_cuda_emu::f16_bits_to_f32(__half_raw(h).x);
}

#endif // GGML_CUDA_EMU_CUDA_FP16_H
