// own_enums_abi.cpp — check-real's proof that a C++ caller passing the
// application's own enums packs the same bytes as a C caller passing the
// mirrors (issue 30 #6): own_enums.c and own_enums.cpp make the same six
// launches of cxx_own_enums.cu's stubs (its .c compiled as C) against the
// fake libcuda given as argv[1]; every parameter's bytes must agree, and a
// few are checked against the values the kernels' enums give them.
#include "cxx_own_enums.kstub.h"
#include "fake_cuda.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

extern "C" int c_enums_launch(float *x, const void *all, void *colors, int *out);
extern "C" int cxx_enums_launch(float *x, const void *all, void *colors, int *out);

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    setenv("KSTUB_LIBCUDA", argv[1], 1);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::printf("%s\n", dlerror());
        return 1;
    }
    void (*set)(const char *, unsigned, const size_t *, const size_t *);
    const fake_launch *(*get)(int);
    void *sym = dlsym(lib, "fake_cuda_set_params");
    std::memcpy(&set, &sym, sizeof set);
    sym = dlsym(lib, "fake_cuda_launch");
    std::memcpy(&get, &sym, sizeof get);
    // Each kernel as its descriptor has it, in the order both sides launch.
    const ks_kernel *order[] = {&paint_kernel, &layer_kernel, &tagged_Color_Act_Relu_kernel,
                                &tagged_nn_Norm_Act_Gelu_kernel, &local_kernel, &paint_kernel};
    const unsigned n = sizeof order / sizeof order[0];
    for (const ks_kernel *k : order) {
        size_t off[16], size[16];
        for (unsigned j = 0; j < k->nparams; j++) {
            off[j] = k->params[j].offset;
            size[j] = k->params[j].size;
        }
        set(k->symbol, k->nparams, off, size);
    }
    float x[4];
    Layer all[1] = {};
    Color colors[4];
    int out[4];
    if (c_enums_launch(x, all, colors, out) != 0 || cxx_enums_launch(x, all, colors, out) != 0) {
        std::printf("a launch failed: %s\n", ks_last_error_message());
        return 1;
    }
    int failures = 0;
    for (unsigned i = 0; i < n; i++) {
        const fake_launch *c = get((int)i), *cxx = get((int)(n + i));
        if (!c || !cxx || std::strcmp(c->symbol, order[i]->symbol) != 0 ||
            std::strcmp(cxx->symbol, order[i]->symbol) != 0) {
            std::printf("launch %u: not %s\n", i, order[i]->symbol);
            failures++;
            continue;
        }
        for (unsigned j = 0; j < order[i]->nparams; j++) {
            const ks_param_desc *p = &order[i]->params[j];
            if (std::memcmp(c->params + p->offset, cxx->params + p->offset, p->size) != 0) {
                std::printf("launch %u (%s), parameter %s: C and C++ packed different bytes\n", i,
                            order[i]->name, p->name);
                failures++;
            }
        }
    }
    // The values themselves: BLUE is 6, Act::Gelu 200, nn::Norm::L1 -1, nn::AVG_POOL 1, Layer::CONV 2.
    const unsigned char *p = get(0)->params;
    std::uint32_t color, pool;
    std::int16_t norm;
    std::uint16_t kind;
    std::memcpy(&color, p + paint_kernel.params[0].offset, 4);
    std::memcpy(&norm, p + paint_kernel.params[2].offset, 2);
    std::memcpy(&pool, p + paint_kernel.params[3].offset, 4);
    std::memcpy(&kind, p + paint_kernel.params[4].offset, 2);
    if (color != 6 || p[paint_kernel.params[1].offset] != 200 || norm != -1 || pool != 1 || kind != 2) {
        std::printf("paint packed %u %u %d %u %u\n", color, p[paint_kernel.params[1].offset], norm, pool,
                    kind);
        failures++;
    }
    if (failures == 0)
        std::printf("C and C++ packed the same bytes: %u launches\n", n);
    return failures != 0;
}
