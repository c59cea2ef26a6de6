// ABI oracle corpus: scalar parameters. Every integer width and signedness,
// bool, float, double, size_t and <stdint.h> types, typedefs and typedef
// chains of them, and orders that force padding between parameters. Each
// kernel is checked against nvcc's PTX by tests/generator/check_abi.c; the bodies only
// keep the parameters alive.
#include <cstddef>
#include <cstdint>

typedef int my_int;
typedef my_int my_int2;                 // chain of two
typedef my_int2 my_int3;                // chain of three
typedef unsigned char byte_t;
typedef int64_t ticks_t;
typedef ticks_t duration_t;
typedef double real_t;
typedef float real32_t;
typedef bool flag_t;
typedef size_t count_t;
using index_t = long long;              // alias declaration
using uindex_t = unsigned long;

// Every builtin integer type, in increasing width, with both signednesses.
extern "C" __global__ void all_ints(long long *out, char c, signed char sc, unsigned char uc,
                                    short s, unsigned short us, int i, unsigned int u, long l,
                                    unsigned long ul, long long ll, unsigned long long ull)
{
    out[0] = c + sc + uc + s + us + i + u + l + (long long)ul + ll + (long long)ull;
}

// Every fixed-width <stdint.h> type plus the size and pointer-sized ones.
extern "C" __global__ void stdint_types(int64_t *out, int8_t i8, uint8_t u8, int16_t i16,
                                        uint16_t u16, int32_t i32, uint32_t u32, int64_t i64,
                                        uint64_t u64, size_t sz, ptrdiff_t pd, intptr_t ip,
                                        uintptr_t up, int_least8_t il8, int_fast16_t if16,
                                        uint_fast32_t uf32, intmax_t im, uintmax_t um)
{
    out[0] = i8 + u8 + i16 + u16 + i32 + u32 + i64 + (int64_t)u64 + (int64_t)sz + pd + ip +
             (int64_t)up + il8 + if16 + uf32 + im + (int64_t)um;
}

// bool and floating point, each followed by something wider.
extern "C" __global__ void bool_and_float(double *out, bool b, float f, bool b2, double d,
                                          bool b3)
{
    out[0] = b + f + b2 + d + b3;
}

// The padding order from the brief: 1, 8, 2, 8, 1, 8 bytes.
extern "C" __global__ void padding_mix(char c, double d, short s, int64_t i64, bool b, float *p)
{
    p[0] = c + d + s + i64 + b;
}

// Small after large after small: every boundary needs padding.
extern "C" __global__ void padding_zigzag(unsigned char a, uint64_t b, uint16_t c, double d,
                                          int8_t e, float f, signed char g, long long h,
                                          bool i, int *out)
{
    out[0] = a + b + c + d + e + f + g + h + i;
}

// Narrow parameters only: no padding at all, odd total size.
extern "C" __global__ void narrow_only(bool a, char b, unsigned char c, short d, bool e)
{
    if (a && b && c && d && e)
        __trap();
}

// Typedefs and typedef chains resolve to their canonical layout.
extern "C" __global__ void typedef_chains(my_int a, my_int2 b, my_int3 c, byte_t d,
                                          duration_t e, real_t f, real32_t g, flag_t h,
                                          count_t i, index_t j, uindex_t k, double *out)
{
    out[0] = a + b + c + d + e + f + g + h + i + j + k;
}

// A kernel without parameters.
extern "C" __global__ void no_params(void)
{
}

// A single one-byte parameter and a single eight-byte one.
extern "C" __global__ void one_byte(bool flag)
{
    if (flag)
        __trap();
}

extern "C" __global__ void one_double(double d)
{
    if (d != d)
        __trap();
}

// Other spellings of the same types, cv-qualified scalars (the qualifier
// does not change the layout) and a type named through decltype.
extern "C" __global__ void spellings_and_qualifiers(signed s, unsigned u, long int li,
                                                    unsigned long long int ulli, short int si,
                                                    const int ci, volatile char vc,
                                                    const volatile double cvd, const bool cb,
                                                    decltype(sizeof(int)) sz)
{
    if (s + u + li + ulli + si + ci + vc + cvd + cb + sz == 0)
        __trap();
}

// Unnamed parameters still take their slots in the parameter buffer.
extern "C" __global__ void unnamed_params(short, double, bool, float *)
{
}
