/* hd_macros.h — the project's spelling of CUDA's qualifiers. */
#ifndef HD_MACROS_H
#define HD_MACROS_H
#define HD __host__ __device__
#define KERNEL __global__
#endif
