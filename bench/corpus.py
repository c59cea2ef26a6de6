#!/usr/bin/env python3
"""corpus.py — write a synthetic corpus of CUDA kernel files for the
generator benchmark (bench/generator.py): FILES files of KERNELS kernels
each, deterministic (a fixed seed), every kernel one kstub accepts.

    corpus.py OUTDIR [FILES] [KERNELS]      default 30 files x 10 kernels

The kernels mix what real files hold: extern "C" and namespaced C++ kernels,
overloads, scalars of every width, const/restrict pointers, structs and
enums by value, CUDA vector types, halves (cuda_fp16.h), __launch_bounds__,
shared-memory reductions, and template kernels with explicit
instantiations; bodies are a few loops and math calls, so nvcc has real
code to compile.
"""
import os
import random
import sys

SCALARS = ["float", "double", "int", "unsigned int", "long long", "short", "size_t"]


def elementwise(rng, i):
    t = rng.choice(["float", "double", "int"])
    op = rng.choice(["a * x[i] + y[i]", "x[i] * x[i] - a", "max(x[i], a) + y[i]"])
    if t == "float":
        op = rng.choice(["a * x[i] + y[i]", "sinf(x[i]) * a + y[i]", "fmaf(a, x[i], y[i])"])
    elif t == "double":
        op = rng.choice(["a * x[i] + y[i]", "sqrt(fabs(x[i])) * a", "exp(-x[i]) + a"])
    return ("extern \"C\" __global__ void ew_%d(const %s *__restrict__ x, const %s *__restrict__ y,\n"
            "                                %s *__restrict__ out, %s a, int n)\n"
            "{\n"
            "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
            "        out[i] = %s;\n"
            "}\n" % (i, t, t, t, t, op))


def with_struct(rng, i):
    fields = rng.sample(["float scale", "int count", "double bias", "char tag", "short step",
                         "long long offset", "float2 shift", "bool enabled"], 4)
    body = "\n".join("    %s;" % f for f in fields)
    return ("struct Cfg%d {\n%s\n};\n\n"
            "__global__ void with_cfg_%d(Cfg%d cfg, const float *in, float *out, size_t n)\n"
            "{\n"
            "    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
            "    if (i < n)\n"
            "        out[i] = in[i] * (float)sizeof(cfg) + (float)cfg.%s;\n"
            "}\n" % (i, body, i, i, fields[0].split()[-1] if "float2" not in fields[0]
                     else fields[1].split()[-1]))


def with_half(rng, i):
    return ("__global__ void half_scale_%d(const __half *x, __half *y, __half s, __half2 pair, int n)\n"
            "{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n)\n"
            "        y[i] = __hadd(__hmul(x[i], s), __low2half(pair));\n"
            "}\n" % i)


def with_vector(rng, i):
    v = rng.choice(["float4", "int2", "double2", "uchar4"])
    return ("__global__ void vec_%d(%s v, %s *out, unsigned int n)\n"
            "{\n"
            "    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n)\n"
            "        out[i] = v;\n"
            "}\n" % (i, v, v))


def with_enum(rng, i):
    return ("enum class Mode%d : unsigned char { Off = 0, Fast = 1, Exact = 2 };\n\n"
            "__global__ void moded_%d(Mode%d mode, float *x, int n)\n"
            "{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n && mode != Mode%d::Off)\n"
            "        x[i] = mode == Mode%d::Fast ? __expf(x[i]) : expf(x[i]);\n"
            "}\n" % (i, i, i, i, i))


def namespaced(rng, i):
    s = rng.sample(SCALARS, 3)
    return ("namespace lib%d {\n"
            "__global__ void __launch_bounds__(256) scale(float *x, %s a, %s b, %s c, int n)\n"
            "{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n)\n"
            "        x[i] = x[i] * (float)a + (float)b - (float)c;\n"
            "}\n"
            "__global__ void scale(double *x, double a, int n)\n"
            "{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n)\n"
            "        x[i] *= a;\n"
            "}\n"
            "} // namespace lib%d\n" % (i, s[0], s[1], s[2], i))


def reduction(rng, i):
    return ("extern \"C\" __global__ void __launch_bounds__(256) block_sum_%d(const float *in, float *out,\n"
            "                                                             unsigned long long n)\n"
            "{\n"
            "    __shared__ float buf[256];\n"
            "    float acc = 0.0f;\n"
            "    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)\n"
            "        acc += in[i];\n"
            "    buf[threadIdx.x] = acc;\n"
            "    __syncthreads();\n"
            "    for (int s = 128; s > 0; s >>= 1) {\n"
            "        if (threadIdx.x < s)\n"
            "            buf[threadIdx.x] += buf[threadIdx.x + s];\n"
            "        __syncthreads();\n"
            "    }\n"
            "    if (threadIdx.x == 0)\n"
            "        atomicAdd(out, buf[0]);\n"
            "}\n" % i)


def template(rng, i):
    return ("template <typename T, int UNROLL>\n"
            "__global__ void axpy_t%d(T a, const T *x, T *y, int n)\n"
            "{\n"
            "    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;\n"
            "#pragma unroll\n"
            "    for (int u = 0; u < UNROLL; u++)\n"
            "        if (base + u < n)\n"
            "            y[base + u] += a * x[base + u];\n"
            "}\n"
            "template __global__ void axpy_t%d<float, 4>(float, const float *, float *, int);\n"
            "template __global__ void axpy_t%d<double, 2>(double, const double *, double *, int);\n"
            % (i, i, i))


MAKERS = [elementwise, with_struct, with_vector, with_enum, namespaced, reduction, template, with_half]


def make_file(rng, index, kernels):
    parts = []
    uses_half = False
    for k in range(kernels):
        maker = rng.choice(MAKERS)
        uses_half |= maker is with_half
        parts.append(maker(rng, index * 1000 + k))
    head = ["// corpus_%03d.cu - synthetic kernels for kstub's generator benchmark" % index,
            "// (written by bench/corpus.py; do not edit)."]
    if uses_half:
        head.append("#include <cuda_fp16.h>")
    return "\n".join(head) + "\n\n" + "\n".join(parts)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    kernels = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261129)
    for f in range(files):
        path = os.path.join(out, "corpus_%03d.cu" % f)
        text = make_file(rng, f, kernels)
        with open(path, "w") as fh:
            fh.write(text)
    print("corpus: %d files of %d kernels in %s" % (files, kernels, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
