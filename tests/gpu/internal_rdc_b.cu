// One of two files linked into one -rdc image (tests/gpu/internal_rdc_a.cu,
// internal_rdc_b.cu): each has a static kernel and an anonymous-namespace
// kernel of the same names as the other's, and each stub must launch its own
// file's (issue 31 #1). They differ in the constants they write.
// kstub:name set_static = set_static_b
// kstub:name (anonymous)::add_anon = add_anon_b
static __global__ void set_static(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 200.0f + (float)i;
}

namespace {
__global__ void add_anon(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += 2.5f;
}
} // namespace

void launch_b(float *p, int n)
{
    set_static<<<(n + 255) / 256, 256>>>(p, n);
    add_anon<<<(n + 255) / 256, 256>>>(p, n);
}
