// tests/targets/cxx/use.cpp — calls vector_ops's kernels through the cxx
// target's namespace wrappers; compiled and linked (not run) by check-targets.
#include "vector_ops.hpp"

int main(int argc, char **)
{
    ks_launch launch = {};
    float *x = nullptr, *y = nullptr;
    if (argc > 99)   // never: linking is the test, a launch needs a GPU
        return vector_ops::saxpy(launch, 2.0f, x, y, 0) == KS_OK ? 0 : 1;
    return 0;
}
