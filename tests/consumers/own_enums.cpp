// own_enums.cpp — a C++ caller of cxx_own_enums.cu's stubs (issue 30 #6)
// that passes the application's own enums from own_enums.hpp as it has
// them: enumerators, enum class values, a namespace's and a class's enums,
// Layer and Tagged<Color, Act::Relu> holding them; no cast, no mirror. The
// enum and struct cxx_own_enums.cu declares itself (Local, LocalRec) are
// mirrors, as in C. Compiled by check-real as C++17 (g++, clang++; strict
// mode too; own_enums.hpp included before the generated header, or after
// with OWN_AFTER) under -Werror, and run against the fake driver beside
// own_enums.c, which makes the same launches with the C mirrors.
#ifndef OWN_AFTER
#include "own_enums.hpp"
#endif
#include "cxx_own_enums.kstub.h"
#include "own_enums.hpp"

#include <cstring>

extern "C" int cxx_enums_launch(float *x, const void *all, void *colors, int *out);

extern "C" int cxx_enums_launch(float *x, const void *all, void *colors, int *out)
{
    ks_launch l = ks_launch_1d(1, 32);
    Layer y;
    std::memset(&y, 0, sizeof y);
    y.kind = Layer::CONV;
    y.norm = nn::Norm::L2;
    y.color = GREEN;
    y.act = Act::Relu;
    y.flags = 3;
    y.width = -4;
    Tagged<Color, Act::Relu> tc = {BLUE, RED, 7};
    Tagged<nn::Norm, Act::Gelu> tn = {nn::Norm::L1, nn::Norm::L2, -2};
    LocalRec r = {Local_B, Act::Gelu, nn::Norm::L1};   // a mirror holding the application's enums
    Color *cs = static_cast<Color *>(colors);
    int rc = 0;
    rc |= paint(l, BLUE, Act::Gelu, nn::Norm::L1, nn::AVG_POOL, Layer::CONV, x);
    rc |= layer(l, y, static_cast<const Layer *>(all), cs);
    rc |= tagged(l, tc, out);                          // the template's one name picks the instance
    rc |= tagged_nn_Norm_Act_Gelu(l, tn, out);
    rc |= local(l, Local_B, r, Holder_Mode_M_B, out);
#ifndef KSTUB_STRICT
    // The C names of the constants are the application's values in C++.
    Color c = Color_BLUE;
    Act a = Act_Gelu;
    rc |= paint(l, c, a, nn_Norm_L1, nn_Pool_AVG_POOL, Layer_Kind_CONV, x);
#endif
    return rc;
}
