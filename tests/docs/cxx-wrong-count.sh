# tests/docs/cxx-wrong-count.sh — docs/generated-api.md's report of a C++
# call with another number of arguments under g++ (check-docs runs it):
# vector_ops.cu's stubs, and a C++17 caller leaving out saxpy's n.
set -e
root=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"${KSTUB:-build/bin/kstub}" kernels/vector_ops.cu -o "$t/vector_ops.kstub"
cd "$t"
cat > app.cpp <<'CPP'
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y);
}
CPP
LC_ALL=C "${DOC_CXX:-g++}" -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$root/include/kstub" -I. -c app.cpp -o app.o 2>&1 || true
