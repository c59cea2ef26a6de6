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


/* ---- the stubs' macro form (C) ---------------------------------------------------------- */

/* What follows is expanded inside the caller's code. gcc reports an error
 * at the caller's line (not at the line of this header that spells the
 * static assertion) when the macro comes from a system header; the
 * generated headers say the same of their macro section. Not in a file
 * compiled on its own (__INCLUDE_LEVEL__ 0), where the pragma warns. */
#if !defined(__cplusplus) && defined(__GNUC__) && defined(__INCLUDE_LEVEL__)
#if __INCLUDE_LEVEL__ > 0
#pragma GCC system_header
#endif
#endif

#if !defined(__cplusplus)
/*
 * The stubs' macro form checks each argument where it is written (C11).
 * KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick): a
 * pointer argument; strict mode tests `exact`, the default mode `ok` (the
 * pointer types C converts without a diagnostic) and refuses an integer (a
 * literal 0 included: C's NULL is a pointer). The message names kernel and
 * parameter (`who`) and the type wanted; `pick` (`exact_pick` in strict
 * mode) is the argument itself, a _Generic with no default whose error
 * names the type given. KS_ARG_VALUE(arg, exact, msg): any other argument,
 * tested in strict mode only (C's conversions apply otherwise). The tests
 * are _Generic selections made by the generator; before C11 nothing is
 * tested (see KS__ARG_TYPEDEFS below). `tag` names the struct or typedef
 * the argument is checked against (KS_ARG_TYPE_CHECK).
 *
 * clang reports an error in a macro with a note per macro the failing
 * token came through ("expanded from macro"), which a static assertion three
 * macros deep makes 34 lines. There the pointer test is instead
 * KS_ARG_TYPE_CHECK(arg, exact, ok, type, tag)(arg), written by the
 * generator where the stub's macro names the argument: a function pointer
 * taking `type` when the test passes, and otherwise one taking `struct tag`
 * (the generated header defines it; its name says kernel, parameter and
 * type), so that clang's one error is at the argument and names the type
 * given and the tag: "passing 'int *' to parameter of incompatible type
 * 'struct kernel_saxpy_parameter_x_needs_const_float_pointer'". It sits in a
 * sizeof (never called) and KS_ARG_POINTER passes the argument on without a
 * second error. gcc's static assertions are reported at the caller's line
 * (the pragma above), and there KS_ARG_TYPE_CHECK is empty; before C11 it
 * takes a typedef of the same name (below).
 */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KS__ASSERT(ok, msg) (void)sizeof(struct { _Static_assert(ok, msg); int ks__unused; })
/* 1 when a or b, as a _Generic: clang's report of a failed assertion then
 * shows its message, not the whole expression. */
#define KS__EITHER(a, b) _Generic((char (*)[1 + !!(a) + !!(b)])0, char (*)[1]: 0, default: 1)
#define KS__ARG_CHECK(arg, ok, msg) (KS__ASSERT(ok, msg), (arg))
/* Whether an argument is an integer (where a pointer belongs). */
#define KS__INTEGER(arg) \
    _Generic((arg), _Bool: 1, char: 1, signed char: 1, unsigned char: 1, short: 1, unsigned short: 1, \
             int: 1, unsigned: 1, long: 1, unsigned long: 1, long long: 1, unsigned long long: 1, default: 0)
#if defined(__clang__)
#define KS__ARG_TAGS 1
/* The structs a pointer argument is checked against (the generated header
 * declares them for each pointer parameter). */
#define KS__ARG_STRUCTS(tag) \
    struct KS__ARG_TAG(tag) { char ks__never; }; \
    struct tag##_not_an_integer_pass_NULL { char ks__never; }
/* The argument where its test passed, else a null pointer (its error is
 * KS_ARG_TYPE_CHECK's). A _Generic, not a comma, passes the value on: NULL
 * stays a null pointer constant, which a function pointer takes. */
#define KS__PASS_IF(ok, arg) _Generic((char (*)[1 + !!(ok)])0, char (*)[2]: (arg), default: (void *)0)
/* The struct a wrong argument is reported against: its name ends
 * "_exactly" in strict mode. */
#if defined(KSTUB_STRICT)
#define KS__ARG_TAG(tag) tag##_exactly
#define KS_ARG_TYPE_CHECK(arg, exact, ok, type, tag) \
    _Generic((char (*)[1 + !!(exact)])0, char (*)[2]: (int (*)(type))0, default: (int (*)(struct KS__ARG_TAG(tag)))0)
#define KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick, tag) KS__PASS_IF(exact, arg)
#else
#define KS__ARG_TAG(tag) tag
/* An integer, a literal 0 included, is reported against a struct whose
 * name ends "_not_an_integer_pass_NULL" ("passing 'int' to parameter of
 * incompatible type 'struct
 * kernel_saxpy_parameter_y_needs_float_pointer_not_an_integer_pass_NULL'"). */
#define KS_ARG_TYPE_CHECK(arg, exact, ok, type, tag) \
    _Generic((char (*)[1 + !!(ok) + 2 * KS__INTEGER(arg)])0, char (*)[2]: (int (*)(type))0, \
             char (*)[3]: (int (*)(struct tag##_not_an_integer_pass_NULL))0, default: (int (*)(struct tag))0)
#define KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick, tag) KS__PASS_IF(ok, arg)
#endif
#else
#define KS_ARG_TYPE_CHECK(arg, exact, ok, type, tag)
#if defined(KSTUB_STRICT)
#define KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick, tag) \
    (KS__ASSERT(exact, who " needs exactly " type), exact_pick)
#else
#define KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick, tag) \
    (KS__ASSERT(KS__EITHER(ok, KS__INTEGER(arg)), who " needs " ok_type ", not another pointer type"), \
     KS__ASSERT(KS__EITHER(0, !KS__INTEGER(arg)), who " needs " ok_type ", not an integer (0 is an int: pass NULL)"), \
     pick)
#endif
#endif
#if defined(KSTUB_STRICT)
#define KS_ARG_VALUE(arg, exact, msg) KS__ARG_CHECK(arg, exact, msg)
#else
#define KS_ARG_VALUE(arg, exact, msg) (arg)
#endif
/* A kernel's value argument: KS_ARG_BY_VALUE(arg, exact, msg, converts,
 * type), `converts` 1 where C converts the argument to the parameter's
 * type (arithmetic types; the default mode lets those pass), 0 for a
 * struct (a mirrored enum, a vector, a half), which must match in every
 * mode. The test (C11; gcc in strict mode keeps its static assertion) is
 * KS_VALUE_CHECK(arg, exact, converts, tag)(0, arg), written by the
 * generator where the stub's macro names the argument, in a sizeof: a
 * function taking anything
 * (ks__any_args) when it passes, else one taking the struct named for kernel, parameter and type,
 * so that the one error is at the argument ("passing 'double' to parameter
 * of incompatible type 'struct kernel_saxpy_parameter_n_needs_size_t_exactly'");
 * the argument is then passed on, or where it failed a zero of the
 * parameter's type, without a second error (gcc: "incompatible type for
 * argument 2 of '0'", then "expected 'struct kernel_..._needs_ks_half' but
 * argument is of type 'float'", at the argument). */
#if defined(KSTUB_STRICT)
#define KS__VALUE_OK(exact, converts) (exact)
#else
#define KS__VALUE_OK(exact, converts) ((exact) || (converts))
#endif
/* The argument where its test passed, else a zero of the parameter's type. */
#define KS__VALUE_PASS(arg, exact, converts, type) \
    _Generic((char (*)[1 + !!KS__VALUE_OK(exact, converts)])0, char (*)[2]: (arg), default: (type){0})
#define KS__VALUE_TAGS 1
#if defined(KSTUB_STRICT)
#define KS__VALUE_STRUCT(tag) struct tag##_exactly { char ks__never; }
#define KS__VALUE_TAG(tag) tag##_exactly
#else
#define KS__VALUE_STRUCT(tag) struct tag { char ks__never; }
#define KS__VALUE_TAG(tag) tag
#endif
#if defined(KSTUB_STRICT) && !defined(__clang__)
/* gcc in strict mode: the static assertion naming kernel and parameter, at
 * the caller's line (6 lines), then no second error. */
#define KS_VALUE_CHECK(arg, exact, converts, tag) ks__any_args
#define KS_ARG_BY_VALUE(arg, exact, msg, converts, type) \
    (KS__ASSERT(exact, msg), KS__VALUE_PASS(arg, exact, converts, type))
#else
#define KS_VALUE_CHECK(arg, exact, converts, tag) \
    _Generic((char (*)[1 + !!KS__VALUE_OK(exact, converts)])0, char (*)[2]: ks__any_args, \
             default: (int (*)(int, struct KS__VALUE_TAG(tag)))0)
#define KS_ARG_BY_VALUE(arg, exact, msg, converts, type) KS__VALUE_PASS(arg, exact, converts, type)
#endif
/* A typed graph node (or an array of them, or of a kernel's _args): only
 * that kernel's, in every mode. */
#define KS_ARG_NODES(arg, ok, msg) KS__ARG_CHECK(arg, ok, msg)
/* A template's one C name (C11 only): whether an instance takes the
 * arguments. clang: KS_INSTANCE_CHECK(arg, ok, tag)(0, arg), in a sizeof, is
 * the one error, at the argument the instances are told apart by first
 * ("passing 'float *' to parameter of incompatible type 'struct
 * no_instance_of_fill_takes_these_argument_types_its_instances_fill_int_fill_u16'"),
 * as KS_ARG_TYPE_CHECK; the call goes to ks__no_instance, without a second
 * error. Elsewhere a static assertion at the caller's line. */
#if defined(__clang__)
#define KS_INSTANCE_CHECK(arg, ok, tag) \
    _Generic((char (*)[1 + !!(ok)])0, char (*)[2]: ks__any_args, default: (int (*)(int, struct tag))0)
#define KS_ARG_INSTANCE(arg, ok, msg) (arg)
#else
#define KS_INSTANCE_CHECK(arg, ok, tag) ks__any_args
#define KS_ARG_INSTANCE(arg, ok, msg) KS__ARG_CHECK(arg, ok, msg)
#endif
/* The call of a stub's macro form with another number of arguments: its
 * message ends "not " and is completed with the number given (C11); C99
 * has no assertion with a message, and names the array `id` instead. */
#define KS__WRONG_COUNT(msg, id, ...) \
    ks__wrong_arg_count(sizeof(struct { _Static_assert(0, msg KS__STR(KS__ARGC(__VA_ARGS__))); int ks__unused; }), \
                        __VA_ARGS__)
#else
/* Before C11 nothing is refused, but the compiler's own warning comes once,
 * at the argument, and names kernel and parameter: the argument is passed
 * to a function taking `tag`, a typedef of the parameter's type the
 * generated header declares (KS__ARG_TYPEDEFS: "passing 'int *' to
 * parameter of type 'kernel_saxpy_parameter_x_needs_const_float_pointer'
 * (aka 'const float *')"), and passed on converted to it. */
#define KS__ARG_TYPEDEFS 1
#define KS__ARG_TAG(tag) tag
#define KS_ARG_TYPE_CHECK(arg, exact, ok, type, tag) ((int (*)(tag))0)
#define KS_ARG_POINTER(arg, exact, ok, who, type, ok_type, exact_pick, pick, tag) ((tag)(arg))
#define KS_ARG_VALUE(arg, exact, msg) (arg)
#define KS_VALUE_CHECK(arg, exact, converts, tag) ks__any_args
#define KS_ARG_BY_VALUE(arg, exact, msg, converts, type) (arg)
#define KS_ARG_NODES(arg, ok, msg) (arg)
#define KS__WRONG_COUNT(msg, id, ...) ks__wrong_arg_count(sizeof(struct { char id[-1]; }), __VA_ARGS__)
#endif
/* clang: a call with another number of arguments calls, in place of the
 * stub, an object the generated header declares (never defined), of a struct
 * named for kernel, count and parameters: "called object type 'struct
 * kernel_saxpy_takes_5_arguments_launch_a_x_y_n' is not a function or
 * function pointer", at the call, under one note. A static assertion's
 * token would be spelled in a macro here, with a note per macro it came
 * through (19 lines). Elsewhere that name is a macro, KS__WRONG_COUNT. */
#if defined(__clang__)
#define KS__COUNT_TAGS 1
#endif
/* Declared, never defined: what a call with the wrong number of arguments
 * (or, for a template's one name, of no instance's types) calls, taking
 * every argument as it is, so that its error is the only one. */
int ks__wrong_arg_count(size_t ks__never, ...);
int ks__no_instance(const char *ks__file, int ks__line, ...);
/* What a value argument's test passes it to, in a sizeof (never called). */
int ks__any_args(int ks__never, ...);

/* KS__ARGC_IS(n, args...): _call when the arguments (counted after their
 * own macros expanded) are n, else _wrong; up to 128. */
#define KS__CAT(a, b) KS__CAT_NOW(a, b)
#define KS__CAT_NOW(a, b) a##b
#define KS__STR(x) KS__STR_NOW(x)
#define KS__STR_NOW(x) #x
#define KS__SECOND(...) KS__SECOND_OF(__VA_ARGS__)
#define KS__SECOND_OF(a, b, ...) b
#define KS__ARGC(...) KS__ARGC_AT(__VA_ARGS__, 128, 127, 126, 125, 124, 123, 122, 121, 120, 119, 118, 117, 116, 115, 114, 113, 112, 111, 110, 109, 108, 107, 106, 105, 104, 103, 102, 101, 100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define KS__ARGC_AT(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, _65, _66, _67, _68, _69, _70, _71, _72, _73, _74, _75, _76, _77, _78, _79, _80, _81, _82, _83, _84, _85, _86, _87, _88, _89, _90, _91, _92, _93, _94, _95, _96, _97, _98, _99, _100, _101, _102, _103, _104, _105, _106, _107, _108, _109, _110, _111, _112, _113, _114, _115, _116, _117, _118, _119, _120, _121, _122, _123, _124, _125, _126, _127, _128, n, ...) n
#define KS__ARGC_IS(n, ...) KS__SECOND(KS__CAT(KS__CAT(KS__SAME_, n), KS__CAT(_, KS__ARGC(__VA_ARGS__))), _wrong, ~)
/* KS__PICK_COUNT(n, call, wrong, args...): the macro name call when the
 * arguments are n, else wrong; both spelled by the caller's macro. */
#define KS__PICK_COUNT(n, call, wrong, ...) KS__CAT(KS__PICK, KS__ARGC_IS(n, __VA_ARGS__))(call, wrong)
#define KS__PICK_call(call, wrong) call
#define KS__PICK_wrong(call, wrong) wrong
#define KS__SAME_1_1 ~, _call
#define KS__SAME_2_2 ~, _call
#define KS__SAME_3_3 ~, _call
#define KS__SAME_4_4 ~, _call
#define KS__SAME_5_5 ~, _call
#define KS__SAME_6_6 ~, _call
#define KS__SAME_7_7 ~, _call
#define KS__SAME_8_8 ~, _call
#define KS__SAME_9_9 ~, _call
#define KS__SAME_10_10 ~, _call
#define KS__SAME_11_11 ~, _call
#define KS__SAME_12_12 ~, _call
#define KS__SAME_13_13 ~, _call
#define KS__SAME_14_14 ~, _call
#define KS__SAME_15_15 ~, _call
#define KS__SAME_16_16 ~, _call
#define KS__SAME_17_17 ~, _call
#define KS__SAME_18_18 ~, _call
#define KS__SAME_19_19 ~, _call
#define KS__SAME_20_20 ~, _call
#define KS__SAME_21_21 ~, _call
#define KS__SAME_22_22 ~, _call
#define KS__SAME_23_23 ~, _call
#define KS__SAME_24_24 ~, _call
#define KS__SAME_25_25 ~, _call
#define KS__SAME_26_26 ~, _call
#define KS__SAME_27_27 ~, _call
#define KS__SAME_28_28 ~, _call
#define KS__SAME_29_29 ~, _call
#define KS__SAME_30_30 ~, _call
#define KS__SAME_31_31 ~, _call
#define KS__SAME_32_32 ~, _call
#define KS__SAME_33_33 ~, _call
#define KS__SAME_34_34 ~, _call
#define KS__SAME_35_35 ~, _call
#define KS__SAME_36_36 ~, _call
#define KS__SAME_37_37 ~, _call
#define KS__SAME_38_38 ~, _call
#define KS__SAME_39_39 ~, _call
#define KS__SAME_40_40 ~, _call
#define KS__SAME_41_41 ~, _call
#define KS__SAME_42_42 ~, _call
#define KS__SAME_43_43 ~, _call
#define KS__SAME_44_44 ~, _call
#define KS__SAME_45_45 ~, _call
#define KS__SAME_46_46 ~, _call
#define KS__SAME_47_47 ~, _call
#define KS__SAME_48_48 ~, _call
#define KS__SAME_49_49 ~, _call
#define KS__SAME_50_50 ~, _call
#define KS__SAME_51_51 ~, _call
#define KS__SAME_52_52 ~, _call
#define KS__SAME_53_53 ~, _call
#define KS__SAME_54_54 ~, _call
#define KS__SAME_55_55 ~, _call
#define KS__SAME_56_56 ~, _call
#define KS__SAME_57_57 ~, _call
#define KS__SAME_58_58 ~, _call
#define KS__SAME_59_59 ~, _call
#define KS__SAME_60_60 ~, _call
#define KS__SAME_61_61 ~, _call
#define KS__SAME_62_62 ~, _call
#define KS__SAME_63_63 ~, _call
#define KS__SAME_64_64 ~, _call
#define KS__SAME_65_65 ~, _call
#define KS__SAME_66_66 ~, _call
#define KS__SAME_67_67 ~, _call
#define KS__SAME_68_68 ~, _call
#define KS__SAME_69_69 ~, _call
#define KS__SAME_70_70 ~, _call
#define KS__SAME_71_71 ~, _call
#define KS__SAME_72_72 ~, _call
#define KS__SAME_73_73 ~, _call
#define KS__SAME_74_74 ~, _call
#define KS__SAME_75_75 ~, _call
#define KS__SAME_76_76 ~, _call
#define KS__SAME_77_77 ~, _call
#define KS__SAME_78_78 ~, _call
#define KS__SAME_79_79 ~, _call
#define KS__SAME_80_80 ~, _call
#define KS__SAME_81_81 ~, _call
#define KS__SAME_82_82 ~, _call
#define KS__SAME_83_83 ~, _call
#define KS__SAME_84_84 ~, _call
#define KS__SAME_85_85 ~, _call
#define KS__SAME_86_86 ~, _call
#define KS__SAME_87_87 ~, _call
#define KS__SAME_88_88 ~, _call
#define KS__SAME_89_89 ~, _call
#define KS__SAME_90_90 ~, _call
#define KS__SAME_91_91 ~, _call
#define KS__SAME_92_92 ~, _call
#define KS__SAME_93_93 ~, _call
#define KS__SAME_94_94 ~, _call
#define KS__SAME_95_95 ~, _call
#define KS__SAME_96_96 ~, _call
#define KS__SAME_97_97 ~, _call
#define KS__SAME_98_98 ~, _call
#define KS__SAME_99_99 ~, _call
#define KS__SAME_100_100 ~, _call
#define KS__SAME_101_101 ~, _call
#define KS__SAME_102_102 ~, _call
#define KS__SAME_103_103 ~, _call
#define KS__SAME_104_104 ~, _call
#define KS__SAME_105_105 ~, _call
#define KS__SAME_106_106 ~, _call
#define KS__SAME_107_107 ~, _call
#define KS__SAME_108_108 ~, _call
#define KS__SAME_109_109 ~, _call
#define KS__SAME_110_110 ~, _call
#define KS__SAME_111_111 ~, _call
#define KS__SAME_112_112 ~, _call
#define KS__SAME_113_113 ~, _call
#define KS__SAME_114_114 ~, _call
#define KS__SAME_115_115 ~, _call
#define KS__SAME_116_116 ~, _call
#define KS__SAME_117_117 ~, _call
#define KS__SAME_118_118 ~, _call
#define KS__SAME_119_119 ~, _call
#define KS__SAME_120_120 ~, _call
#define KS__SAME_121_121 ~, _call
#define KS__SAME_122_122 ~, _call
#define KS__SAME_123_123 ~, _call
#define KS__SAME_124_124 ~, _call
#define KS__SAME_125_125 ~, _call
#define KS__SAME_126_126 ~, _call
#define KS__SAME_127_127 ~, _call
#define KS__SAME_128_128 ~, _call
#endif

#endif /* KSTUB_TYPES_H */
