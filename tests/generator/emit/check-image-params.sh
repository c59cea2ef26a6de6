#!/usr/bin/env bash
# check-image-params.sh — an --embed image built from another version of the
# kernels (issue 41 #6): for PTX, cubin and fatbin images that nvcc builds
# here, a parameter whose size or offset differs (a scalar widened under the
# same extern "C" name, a struct whose layout changed under the same mangled
# name), or a parameter added, is an error at the kernel's file:line:col that
# names the kernel, the parameter and both sizes, and nothing is written;
# `kstub check` says so in its note; images built from the same source (every
# parameter kind: scalars, pointers, arrays in structs, aligned structs, no
# parameters) are accepted, their stubs written.
#
#   KSTUB=build/bin/kstub NVCC=/usr/local/cuda/bin/nvcc check-image-params.sh
set -u
kstub=${KSTUB:-build/bin/kstub}
kstub=$(cd "$(dirname "$kstub")" && pwd)/$(basename "$kstub")
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kstub-imgparams-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

images() {   # $1: source; builds $1.ptx, $1.cubin, $1.fatbin (PTX and cubin members)
    "$nvcc" -ptx -arch=sm_90 -o "$1.ptx" "$1.cu" &&
    "$nvcc" -cubin -arch=sm_90 -o "$1.cubin" "$1.cu" &&
    "$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
        -gencode arch=compute_90,code=compute_90 \
        -o "$1.fatbin" "$1.cu"
}

cat > old.cu <<'CU'
extern "C" __global__ void widened(long long a, int b) {}
struct P { char c; int v; };
__global__ void relaid(P p, float f) {}
extern "C" __global__ void grown(int a) {}
CU
cat > new.cu <<'CU'
extern "C" __global__ void widened(int a, int b) {}
struct P { char c; double v; };
__global__ void relaid(P p, float f) {}
extern "C" __global__ void grown(int a, float *extra) {}
CU
cat > same.cu <<'CU'
#include <cstdint>
struct alignas(16) A { float x[3]; };
struct S { char c; double d; short s[5]; };
extern "C" __global__ void mix(long long a, int b, S s, char c, float *p, A al, uint8_t u) {}
__global__ void none() {}
struct alignas(128) Big { unsigned char b[128]; };
extern "C" __global__ void over(unsigned char *out, const __grid_constant__ Big big, long t) {}
template <typename T> __global__ void t(T *x, T v, int n) {}
template __global__ void t<double>(double *, double, int);
CU
images old || { echo "FAIL: nvcc could not build the images"; exit 1; }
images same || { echo "FAIL: nvcc could not build the images"; exit 1; }

for kind in ptx cubin fatbin; do
    cp new.cu k.cu
    rm -f g.h g.c
    msg=$("$kstub" k.cu --embed old.$kind -o g 2>&1); rc=$?
    if [ $rc -eq 1 ] && [ ! -e g.h ] && [ ! -e g.c ]; then ok; else bad "$kind: exit $rc, outputs: $(ls g.* 2>/dev/null)"; fi
    # PTX states offsets in the launch's buffer (compared); a cubin, places
    # in its constant bank (sizes only); the fatbin's first member is a cubin
    at0=" at offset 0" bytes=" (4 bytes)"
    [ $kind != ptx ] && at0= bytes=
    for want in "k.cu:1:28: error: kernel 'widened' parameter 'a' is 4 bytes$at0 in the source but 8 bytes$at0 in" \
                "k.cu:3:17: error: kernel 'relaid' parameter 'p' is 16 bytes$at0 in the source but 8 bytes$at0 in" \
                "k.cu:4:28: error: kernel 'grown' takes 2 parameters (16 bytes) in the source but 1$bytes in"; do
        if echo "$msg" | grep -qF "$want"; then ok; else bad "$kind: lacks \"$want\" in: $msg"; fi
    done
    msg=$("$kstub" check k.cu --embed old.$kind -o g 2>&1); rc=$?
    if [ $rc -eq 4 ] && echo "$msg" | grep -qF "note: the image's parameters differ from the source's: kernel 'widened' parameter 'a' is 4 bytes$at0 in the source but 8 bytes$at0"; then
        ok
    else
        bad "check, $kind: exit $rc: $msg"
    fi
    cp same.cu k.cu
    msg=$("$kstub" k.cu --embed same.$kind -o g 2>&1); rc=$?
    if [ $rc -eq 0 ] && [ -e g.h ]; then ok; else bad "same source, $kind: exit $rc: $msg"; fi
done
echo "check-image-params: $pass passed, $fail failed"
[ $fail -eq 0 ]
