/* Outside strict mode the macro form accepts what C converts without a
 * diagnostic: the exact pointer type, const added, void *, NULL, arrays; and
 * scalars convert as C converts them. Compiled with -Werror as C99, C11 and C++17. */
#include <stdlib.h>
#include "vector_ops.kstub.h"
/* Arguments another macro writes: the stub's macro counts them after expansion. */
#define SAXPY_ARGS(x, y) 2.0f, x, y, 32
void call(float *x, const float *cx, float *y, void *v, const void *cv, int n);
void call(float *x, const float *cx, float *y, void *v, const void *cv, int n)
{
    float arr[32], out[32];
    (void)saxpy(ks_launch_1d(1, 32), 2, x, y, (size_t)n);
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, cx, y, 32u);
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, arr, out, 32);
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, NULL, y, 32);
    (void)saxpy_n(32, NULL, 2.0f, x, y, 32);
    (void)saxpy(ks_launch_1d(1, 32), SAXPY_ARGS(x, y));
    (void)saxpy_n(32, NULL, SAXPY_ARGS(cx, y));
    /* The stub's address, its type named (in C++ the name is an overload
     * set: the deleted overloads that report wrong calls, issue 39 #8). */
    ks_status (*f)(ks_launch, float, const float *, float *, size_t) = saxpy;
    ks_status (*g)(ks_launch, float, const float *, float *, size_t) = &saxpy;
    (void)f(ks_launch_1d(1, 32), 2.0f, x, y, 32);
    (void)g;
#ifndef __cplusplus
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, cv, v, 32);
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, v, malloc(128), 32);
    (void)(saxpy)(ks_launch_1d(1, 32), 2.0f, x, y, 32);       /* the function itself */
#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, 0, 32);         /* C99 (no checks): 0 as C takes it */
#endif
#else
    (void)cv, (void)v;
#endif
}
