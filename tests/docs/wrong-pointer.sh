# tests/docs/wrong-pointer.sh — docs/generated-api.md's report of a wrong
# pointer type under gcc (check-docs runs it; wrong-pointer-clang.sh runs it
# with DOC_CC=clang): vector_ops.cu's stubs, and a C11 caller passing an
# int * for saxpy's const float *x.
set -e
root=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"${KSTUB:-build/bin/kstub}" kernels/vector_ops.cu -o "$t/vector_ops.kstub"
cd "$t"
cat > app.c <<'C'
#include "vector_ops.kstub.h"
void call(int *x, float *y);
void call(int *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32);
}
C
LC_ALL=C "${DOC_CC:-gcc}" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$root/include/kstub" -I. -c app.c -o app.o 2>&1 || true
