// cxx_types.cpp — a C++ caller of app_types.cu's stubs (issue 14) that
// passes the types the kernels were written with: CUDA's __half and
// __nv_bfloat16 (pointers and by value), nn::Act and nn::Round values of
// the application's enum classes, and model_params.h's LayerShape. Compiled
// by check-real as C++17 (g++, clang++; strict mode too) under -Werror.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "activations.hpp"
#include "model_params.h"
#include "app_types.kstub.h"

#include <cstring>

int consumer_main(__half *y, const __half *x, __nv_bfloat16 *by, const __nv_bfloat16 *bx,
                  const nn::Act *acts, float *f, ks_half *ky);

int consumer_main(__half *y, const __half *x, __nv_bfloat16 *by, const __nv_bfloat16 *bx,
                  const nn::Act *acts, float *f, ks_half *ky)
{
    ks_launch l;
    std::memset(&l, 0, sizeof l);
    __half scale = __float2half(0.5f);
    LocalScale s = {1.0f, ks_half_from_float(0.0f)};
    LayerShape shape = {2, 64, 64, ACT_RELU};
    int rc = 0;
    // Every argument as the kernel was written: exact in strict mode too.
    rc |= act_half(l, y, x, scale, nn::Act::Gelu, nn::Round::Nearest, 64);
    rc |= act_half_n(64, nullptr, y, x, scale, nn::Act::Relu, nn::Round::Down, 64);
    rc |= act_bf16(l, by, bx, acts, s, 64);
    rc |= shaped_act(l, f, shape, ACT_GELU);
#ifndef KSTUB_STRICT
    // Outside strict mode kstub's and CUDA's types mix, and nullptr stays a
    // pointer of either kind.
    rc |= act_half(l, ky, x, ks_half_from_float(1.0f), nn_Act_None, nn::Round::Down, 64);
    rc |= act_half(l, nullptr, nullptr, scale, nn::Act::None, nn_v1_Round_Nearest, 0);
    rc |= act_half(l, ky, nullptr, ks_half_from_float(1.0f), nn_Act_Relu, nn_v1_Round_Down, 0);
#else
    (void)ky;
#endif
    return rc;
}
