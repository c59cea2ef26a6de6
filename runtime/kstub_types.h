/*
 * kstub_types.h — C-side types and layout checks that generated headers use:
 * half-precision types with the device types' size and alignment, conversion
 * helpers, and portable alignment/static-assert macros. Part of libkstub's
 * public API; compiles as C99, C11 and C++ under -Wpedantic.
 */
#ifndef KSTUB_TYPES_H
#define KSTUB_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layout macros for mirrored types --------------------------------------------------- */

#define KS_ALIGNED(n) __attribute__((aligned(n)))
#define KS_PACKED __attribute__((packed))

#if defined(__cplusplus)
#define KS_ALIGNOF(T) alignof(T)
#define KS_STATIC_ASSERT(cond, msg, id) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KS_ALIGNOF(T) _Alignof(T)
#define KS_STATIC_ASSERT(cond, msg, id) _Static_assert(cond, msg)
#else /* C99: gcc's and clang's __alignof__, and the negative-array trick */
#define KS_ALIGNOF(T) __alignof__(T)
#define KS_STATIC_ASSERT(cond, msg, id) typedef char ks__static_assert_##id[(cond) ? 1 : -1]
#endif

/* A constant of an enum mirrored as a one-member struct. */
#if defined(__cplusplus)
#define KS_ENUM_VALUE(T, v) (T{v})
#else
#define KS_ENUM_VALUE(T, v) ((T){v})
#endif

/*
 * Strict mode (define KSTUB_STRICT before including a generated header, C11):
 * each argument must have exactly its parameter's type; `ok` is a _Generic
 * test made by the generator, and `msg` names the kernel and parameter.
 */
#if defined(KSTUB_STRICT) && !defined(__cplusplus)
#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "KSTUB_STRICT needs C11 (_Generic); compile with -std=c11 or later"
#endif
#define KS_STRICT_ARG(arg, ok, msg) \
    ((void)sizeof(struct { _Static_assert(ok, msg); int ks__unused; }), (arg))
#endif

/*
 * The stubs' macro form (C) checks each argument where it is written.
 * KS_ARG_POINTER(arg, exact, ok, exact_msg, msg): a pointer argument; strict
 * mode tests `exact`, the default mode `ok` (the pointer types C converts
 * without a diagnostic). KS_ARG_VALUE(arg, exact, msg): any other argument,
 * tested in strict mode only (C's conversions apply otherwise). Both are
 * _Generic tests made by the generator; before C11 nothing is tested.
 */
#if !defined(__cplusplus)
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KS__ARG_CHECK(arg, ok, msg) \
    ((void)sizeof(struct { _Static_assert(ok, msg); int ks__unused; }), (arg))
#if defined(KSTUB_STRICT)
#define KS_ARG_POINTER(arg, exact, ok, exact_msg, msg) KS__ARG_CHECK(arg, exact, exact_msg)
#define KS_ARG_VALUE(arg, exact, msg) KS__ARG_CHECK(arg, exact, msg)
#else
#define KS_ARG_POINTER(arg, exact, ok, exact_msg, msg) KS__ARG_CHECK(arg, ok, msg)
#define KS_ARG_VALUE(arg, exact, msg) (arg)
#endif
/* A typed graph node (or an array of them, or of a kernel's _args): only
 * that kernel's, in every mode. */
#define KS_ARG_NODES(arg, ok, msg) KS__ARG_CHECK(arg, ok, msg)
/* A template's one C name (C11 only): whether an instance takes the arguments. */
#define KS_ARG_INSTANCE(arg, ok, msg) KS__ARG_CHECK(arg, ok, msg)
#else
#define KS_ARG_POINTER(arg, exact, ok, exact_msg, msg) (arg)
#define KS_ARG_VALUE(arg, exact, msg) (arg)
#define KS_ARG_NODES(arg, ok, msg) (arg)
#endif
#endif

/* ---- half precision --------------------------------------------------------------------- */

/* The bits of a CUDA __half (IEEE binary16): 2 bytes, 2-byte aligned. */
typedef struct ks_half { uint16_t bits; } ks_half;
/* __half2: two halves, 4-byte aligned. */
typedef struct KS_ALIGNED(4) ks_half2 { ks_half x, y; } ks_half2;
/* The bits of a CUDA __nv_bfloat16: 2 bytes, 2-byte aligned. */
typedef struct ks_bfloat16 { uint16_t bits; } ks_bfloat16;
/* __nv_bfloat162: two bfloat16s, 4-byte aligned. */
typedef struct KS_ALIGNED(4) ks_bfloat162 { ks_bfloat16 x, y; } ks_bfloat162;

static inline uint32_t ks__float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ks__bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/** float to half, rounding to nearest even (as __float2half does). */
static inline ks_half ks_half_from_float(float f)
{
    uint32_t x = ks__float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    ks_half h;
    if (exp == 0xffu) {                         /* inf or NaN (keep it a NaN) */
        h.bits = (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
        return h;
    }
    int e = (int)exp - 127 + 15;
    if (e >= 31) {                              /* overflow: inf */
        h.bits = (uint16_t)(sign | 0x7c00u);
        return h;
    }
    if (e <= 0) {                               /* subnormal half, or zero */
        if (e < -10) {
            h.bits = (uint16_t)sign;
            return h;
        }
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        uint32_t half_man = man >> shift;
        uint32_t rest = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rest > halfway || (rest == halfway && (half_man & 1u)))
            half_man++;
        h.bits = (uint16_t)(sign | half_man);
        return h;
    }
    uint32_t bits = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u)))
        bits++;                                 /* may carry into the exponent: correct */
    h.bits = (uint16_t)bits;
    return h;
}

/** half to float (exact). */
static inline float ks_half_to_float(ks_half h)
{
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1fu, man = h.bits & 0x3ffu;
    if (exp == 0x1fu)
        return ks__bits_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return ks__bits_float(sign);
        while (!(man & 0x400u)) {               /* normalise a subnormal */
            man <<= 1;
            exp--;
        }
        exp++;
        man &= 0x3ffu;
    }
    return ks__bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

/** float to bfloat16, rounding to nearest even (as __float2bfloat16 does). */
static inline ks_bfloat16 ks_bfloat16_from_float(float f)
{
    uint32_t x = ks__float_bits(f);
    ks_bfloat16 b;
    if ((x & 0x7fffffffu) > 0x7f800000u) {      /* NaN stays a quiet NaN */
        b.bits = (uint16_t)((x >> 16) | 0x40u);
        return b;
    }
    x += 0x7fffu + ((x >> 16) & 1u);
    b.bits = (uint16_t)(x >> 16);
    return b;
}

/** bfloat16 to float (exact). */
static inline float ks_bfloat16_to_float(ks_bfloat16 b)
{
    return ks__bits_float((uint32_t)b.bits << 16);
}

static inline ks_half2 ks_half2_make(float x, float y)
{
    ks_half2 h;
    h.x = ks_half_from_float(x);
    h.y = ks_half_from_float(y);
    return h;
}

static inline ks_bfloat162 ks_bfloat162_make(float x, float y)
{
    ks_bfloat162 b;
    b.x = ks_bfloat16_from_float(x);
    b.y = ks_bfloat16_from_float(y);
    return b;
}

#ifdef __cplusplus
}
#endif

#endif /* KSTUB_TYPES_H */
