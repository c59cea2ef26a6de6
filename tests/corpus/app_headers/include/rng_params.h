/* rng_params.h — a C-looking header whose own include is C++ only
 * (curand_kernel.h): C cannot include it (issue 39 #19). */
#ifndef RNG_PARAMS_H
#define RNG_PARAMS_H
#include <curand_kernel.h>
typedef struct rng_params {
    float mean;
    unsigned long long seed;
} rng_params;
#endif
