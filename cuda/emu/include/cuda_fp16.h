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

// half -> integer, rounded toward zero and clamped to [lo, hi] (NaN -> 0), as CUDA's __half2*_rz
inline double f16_to_int_rz(unsigned short h, double lo, double hi) {
    const double v = (double) f16_bits_to_f32(h);
    if (v != v) {
        return 0.0;
    }
    const double t = v < 0 ? -__builtin_floor(-v) : __builtin_floor(v);
    return t < lo ? lo : (t > hi ? hi : t);
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

    // CUDA's integral conversions convert the *value* (constructors round to nearest, conversion
    // operators truncate toward zero): code that moves raw bits through an integer breaks here
    // as it does on a GPU (e.g. ggml_fp16_t, which ggml.h makes `half` for nvcc on ARM hosts)
    __half(short v) : __half((float) v) {}
    __half(unsigned short v) : __half((float) v) {}
    __half(int v) : __half((float) v) {}
    __half(unsigned int v) : __half((float) v) {}
    __half(long long v) : __half((float) v) {}
    __half(unsigned long long v) : __half((float) v) {}
    operator short() const { return (short) ::ggml_cuda_emu::f16_to_int_rz(__x, -32768.0, 32767.0); }
    operator unsigned short() const { return (unsigned short) ::ggml_cuda_emu::f16_to_int_rz(__x, 0.0, 65535.0); }
    operator int() const { return (int) ::ggml_cuda_emu::f16_to_int_rz(__x, -2147483648.0, 2147483647.0); }
    operator unsigned int() const { return (unsigned int) ::ggml_cuda_emu::f16_to_int_rz(__x, 0.0, 4294967295.0); }
    operator long long() const { return (long long) ::ggml_cuda_emu::f16_to_int_rz(__x, -9.2e18, 9.2e18); }
    operator unsigned long long() const {
        return (unsigned long long) ::ggml_cuda_emu::f16_to_int_rz(__x, 0.0, 1.8e19);
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
