# tests/docs/wrong-count.sh — docs/generated-api.md's report of a call with
# another number of arguments under clang (check-docs runs it):
# vector_ops.cu's stubs, and a C11 caller leaving out saxpy's n.
set -e
root=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"${KSTUB:-build/bin/kstub}" kernels/vector_ops.cu -o "$t/vector_ops.kstub"
cd "$t"
cat > app.c <<'C'
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y);
}
C
LC_ALL=C "${DOC_CC:-clang}" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$root/include/kstub" -I. -c app.c -o app.o 2>&1 || true
