// ABI oracle corpus: pointer parameters. Any pointee, const, volatile and
// __restrict__ in every position, pointers to pointers, void pointers,
// pointers to structs and typedef'd pointers, mixed with narrow scalars so
// the 8-byte pointers need padding. Checked against nvcc's PTX by
// tests/generator/check_abi.c.
#include <cstddef>
#include <cstdint>

struct Particle {
    float x, y, z;
    int id;
};
typedef float *float_ptr;
typedef const float_ptr const_float_ptr;   // const pointer to float
typedef Particle *particle_ptr;

extern "C" __global__ void qualifiers(const float *a, volatile float *b, const volatile float *c,
                                      float *__restrict__ d, const float *__restrict__ e,
                                      float *const f, const float *const __restrict__ g)
{
    *d = *a + *b + *c + *e + *f + *g;
}

extern "C" __global__ void pointees(void *a, const void *b, char *c, const unsigned char *d,
                                    short *e, int64_t *f, double *g, bool *h, size_t *i,
                                    Particle *j, const Particle *k)
{
    (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)h; (void)i;
    j->x = k->y;
}

extern "C" __global__ void pointer_to_pointer(float **a, const float *const *b,
                                              int *const *__restrict__ c, void **d,
                                              Particle **e, char ***f)
{
    (void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
}

extern "C" __global__ void typedef_pointers(float_ptr a, const_float_ptr b, particle_ptr c)
{
    *a = *b + c->x;
}

// Narrow scalars between pointers: each pointer lands on the next 8-byte boundary.
extern "C" __global__ void pointers_and_padding(char c, float *p, short s, const int *q, bool b,
                                                volatile double *r, uint8_t u, void **v)
{
    (void)c; (void)p; (void)s; (void)q; (void)b; (void)r; (void)u; (void)v;
}

// Array-declared parameters are pointers, as in C.
extern "C" __global__ void decays(float x[], const int y[10], char c, double *z) {}
