# tests/docs/setup.sh — sourced by the scripts that make the output docs/ci.md
# shows: a scratch copy of kernels/vector_ops.cu with its stubs generated
# (build/), then changed as the page says: saxpy's n from size_t to int, and
# a kernel added. kstub runs from PATH, as a reader's shell has it.
set -e
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/kernels"
ln -s "$(realpath "${KSTUB:-build/bin/kstub}")" "$t/bin/kstub"
cp kernels/vector_ops.cu "$t/kernels/"
cd "$t"
PATH="$t/bin:$PATH"
kstub kernels/vector_ops.cu -o build/vector_ops.kstub --manifest build/vector_ops.kstub.json
sed -i 's/^\( *\)size_t n)$/\1int n)/' kernels/vector_ops.cu
cat >> kernels/vector_ops.cu <<'CU'

extern "C" __global__ void saxpy_double(double a, const double *x, double *y, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
CU
