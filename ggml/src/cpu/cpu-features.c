// cpu-features.c - run-time CPU feature detection (CPUID/XGETBV on x86-64, HWCAP on arm64),
// the SIMD dispatch level, and the public ggml_cpu_has_* queries.

#include "cpu/cpu-features.h"

#include "ggml.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#define GGML_X_CPU_X86 1
#include <cpuid.h>
#elif defined(__aarch64__)
#define GGML_X_CPU_ARM64 1
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#endif

static struct ggml_x_cpu_features g_features;
static enum ggml_x_cpu_level      g_level_detected;
static enum ggml_x_cpu_level      g_level;
static pthread_once_t             g_once = PTHREAD_ONCE_INIT;

#if defined(GGML_X_CPU_X86)
// XCR0 via XGETBV, without requiring the compiler's xsave target flag
static unsigned long long ggml_x_xgetbv0(void) {
    unsigned int eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long) edx << 32) | eax;
}

static void ggml_x_detect_x86(struct ggml_x_cpu_features * f) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    unsigned int max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 1 || !__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx)) {
        return;
    }
    const unsigned int ecx1 = ecx;
    f->sse3  = (ecx1 >> 0) & 1;
    f->ssse3 = (ecx1 >> 9) & 1;

    const bool osxsave = (ecx1 >> 27) & 1;
    bool os_avx = false;    // XMM and YMM state saved by the OS
    bool os_avx512 = false; // plus opmask and ZMM state
    if (osxsave) {
        const unsigned long long xcr0 = ggml_x_xgetbv0();
        os_avx    = (xcr0 & 0x6) == 0x6;
        os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
    }

    f->avx  = os_avx && ((ecx1 >> 28) & 1);
    f->fma  = f->avx && ((ecx1 >> 12) & 1);
    f->f16c = f->avx && ((ecx1 >> 29) & 1);

    if (max_leaf >= 7 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
        const unsigned int ebx7 = ebx, ecx7 = ecx, eax7 = eax;
        f->avx2        = f->avx && ((ebx7 >> 5) & 1);
        f->avx512f     = os_avx512 && ((ebx7 >> 16) & 1);
        f->avx512dq    = f->avx512f && ((ebx7 >> 17) & 1);
        f->avx512bw    = f->avx512f && ((ebx7 >> 30) & 1);
        f->avx512vl    = f->avx512f && ((ebx7 >> 31) & 1);
        f->avx512_vbmi = f->avx512f && ((ecx7 >> 1) & 1);
        f->avx512_vnni = f->avx512f && ((ecx7 >> 11) & 1);
        if (eax7 >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
            f->avx_vnni = f->avx2 && ((eax >> 4) & 1);
        }
    }
}
#endif

#if defined(GGML_X_CPU_ARM64)
static void ggml_x_detect_arm64(struct ggml_x_cpu_features * f) {
    f->neon = true; // mandatory in AArch64
    f->arm_fma = true;
#if defined(__linux__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    f->dotprod = (hwcap >> 20) & 1; // HWCAP_ASIMDDP
#elif defined(__ARM_FEATURE_DOTPROD)
    f->dotprod = true;
#endif
}
#endif

static enum ggml_x_cpu_level ggml_x_level_from_features(const struct ggml_x_cpu_features * f) {
    enum ggml_x_cpu_level level = GGML_X_CPU_SCALAR;
    if (f->avx2 && f->fma && f->f16c) {
        level = GGML_X_CPU_AVX2;
        if (f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq) {
            level = GGML_X_CPU_AVX512;
            if (f->avx512_vnni) {
                level = GGML_X_CPU_AVX512_VNNI;
            }
        }
    }
    if (f->neon) {
        level = f->dotprod ? GGML_X_CPU_NEON_DOTPROD : GGML_X_CPU_NEON;
    }
    return level;
}

static bool ggml_x_level_supported_impl(enum ggml_x_cpu_level level);

static bool ggml_x_level_parse(const char * s, enum ggml_x_cpu_level * out) {
    static const struct { const char * name; enum ggml_x_cpu_level level; } names[] = {
        { "scalar", GGML_X_CPU_SCALAR },
        { "none",   GGML_X_CPU_SCALAR },
        { "avx2",   GGML_X_CPU_AVX2 },
        { "avx512", GGML_X_CPU_AVX512 },
        { "vnni",   GGML_X_CPU_AVX512_VNNI },
        { "avx512_vnni", GGML_X_CPU_AVX512_VNNI },
        { "neon",   GGML_X_CPU_NEON },
        { "dotprod", GGML_X_CPU_NEON_DOTPROD },
        { "neon_dotprod", GGML_X_CPU_NEON_DOTPROD },
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].level;
            return true;
        }
    }
    return false;
}

static void ggml_x_cpu_detect(void) {
    memset(&g_features, 0, sizeof(g_features));
#if defined(GGML_X_CPU_X86)
    ggml_x_detect_x86(&g_features);
#elif defined(GGML_X_CPU_ARM64)
    ggml_x_detect_arm64(&g_features);
#endif
    g_level_detected = ggml_x_level_from_features(&g_features);
    g_level = g_level_detected;

    const char * env = getenv("GGML_X_CPU_LEVEL");
    enum ggml_x_cpu_level want;
    if (env != NULL && env[0] != '\0' && ggml_x_level_parse(env, &want)) {
        // only lower, and only within this architecture (or to scalar)
        if (want == GGML_X_CPU_SCALAR || (ggml_x_level_supported_impl(want) && want < g_level)) {
            g_level = want;
        }
    }
}

const struct ggml_x_cpu_features * ggml_x_cpu_features(void) {
    pthread_once(&g_once, ggml_x_cpu_detect);
    return &g_features;
}

enum ggml_x_cpu_level ggml_x_cpu_level_detected(void) {
    pthread_once(&g_once, ggml_x_cpu_detect);
    return g_level_detected;
}

enum ggml_x_cpu_level ggml_x_cpu_level(void) {
    pthread_once(&g_once, ggml_x_cpu_detect);
    return g_level;
}

static bool ggml_x_level_supported_impl(enum ggml_x_cpu_level level) {
    const enum ggml_x_cpu_level det = g_level_detected;
    if (level == GGML_X_CPU_SCALAR) {
        return true;
    }
    if (level >= GGML_X_CPU_AVX2 && level <= GGML_X_CPU_AVX512_VNNI) {
        return det >= GGML_X_CPU_AVX2 && det <= GGML_X_CPU_AVX512_VNNI && level <= det;
    }
    if (level >= GGML_X_CPU_NEON && level <= GGML_X_CPU_NEON_DOTPROD) {
        return det >= GGML_X_CPU_NEON && det <= GGML_X_CPU_NEON_DOTPROD && level <= det;
    }
    return false;
}

const char * ggml_x_cpu_level_name(enum ggml_x_cpu_level level) {
    switch (level) {
        case GGML_X_CPU_SCALAR:       return "scalar";
        case GGML_X_CPU_AVX2:         return "avx2";
        case GGML_X_CPU_AVX512:       return "avx512";
        case GGML_X_CPU_AVX512_VNNI:  return "vnni";
        case GGML_X_CPU_NEON:         return "neon";
        case GGML_X_CPU_NEON_DOTPROD: return "dotprod";
        default:                      return "unknown";
    }
}

bool ggml_x_cpu_level_supported(enum ggml_x_cpu_level level) {
    pthread_once(&g_once, ggml_x_cpu_detect);
    return ggml_x_level_supported_impl(level);
}

// ---------------------------------------------------------------------------------------------
// public queries

int ggml_cpu_has_avx(void)         { return ggml_x_cpu_features()->avx; }
int ggml_cpu_has_avx_vnni(void)    { return ggml_x_cpu_features()->avx_vnni; }
int ggml_cpu_has_avx2(void)        { return ggml_x_cpu_features()->avx2; }
int ggml_cpu_has_avx512(void)      { return ggml_x_cpu_features()->avx512f; }
int ggml_cpu_has_avx512_vbmi(void) { return ggml_x_cpu_features()->avx512_vbmi; }
int ggml_cpu_has_avx512_vnni(void) { return ggml_x_cpu_features()->avx512_vnni; }
int ggml_cpu_has_fma(void)         { return ggml_x_cpu_features()->fma; }
int ggml_cpu_has_neon(void)        { return ggml_x_cpu_features()->neon; }
int ggml_cpu_has_arm_fma(void)     { return ggml_x_cpu_features()->arm_fma; }
int ggml_cpu_has_f16c(void)        { return ggml_x_cpu_features()->f16c; }
int ggml_cpu_has_sse3(void)        { return ggml_x_cpu_features()->sse3; }
int ggml_cpu_has_ssse3(void)       { return ggml_x_cpu_features()->ssse3; }
int ggml_cpu_has_fp16_va(void)     { return 0; }
int ggml_cpu_has_wasm_simd(void)   { return 0; }
int ggml_cpu_has_vsx(void)         { return 0; }

// Accelerator backends may provide strong definitions of these; without one they report 0.
__attribute__((weak)) int ggml_cpu_has_blas(void)    { return 0; }
__attribute__((weak)) int ggml_cpu_has_cublas(void)  { return 0; }
__attribute__((weak)) int ggml_cpu_has_clblast(void) { return 0; }
__attribute__((weak)) int ggml_cpu_has_gpublas(void) { return 0; }
__attribute__((weak)) int ggml_cpu_has_metal(void)   { return 0; }
