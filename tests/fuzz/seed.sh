#!/usr/bin/env bash
# seed.sh — (re)writes the seed inputs of each fuzz target's replay corpus,
# tests/fuzz/corpus/<target>/, that are not copies of a file of the tree:
# the generated manifests of kernels/, nvcc's images of a kernel, and the
# regression inputs of issue 19 (written below). Copies (the .cu files of
# tests/corpus/ and kernels/, the templates, the golden manifest) are not
# committed: scripts/sanitize.sh adds them to each target's seeds at fuzz
# time. Seeds are named seed-*; the other files there are inputs that once
# found something and are never rewritten. Run from the repository root; images need nvcc
# (skipped without it), manifests of kernels/ need `make gen`.
#
#   bash tests/fuzz/seed.sh          then review and commit tests/fuzz/corpus/
set -eu
C=tests/fuzz/corpus
NVCC=${NVCC:-${CUDA_PATH:-/usr/local/cuda}/bin/nvcc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kstub-seed-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
put() {   # put TARGET NAME < bytes
    mkdir -p "$C/$1"
    cat > "$C/$1/seed-$2"
}

# ---- .cu text: the scanner, the cache key's #include scanner ---------------------------
# Issue 19 #2: where a directive may start (after a comment, a form feed, a
# vertical tab, a line splice): each hides "h.h" from a scanner that only
# skips spaces and tabs.
printf '/* c */ #include "h.h"\n__global__ void k(cfg_t *p) {}\n\0typedef int cfg_t;\n' | put fuzz_cache_includes i19-comment-before-hash
printf '\f#include "h.h"\n\v#  include "h.h"\n\0typedef int cfg_t;\n' | put fuzz_cache_includes i19-ff-vt
printf '#\\\ninclude "h.h"\n#inc\\\nlude "h.h"\n/* a\n */ # include "h.h"\n\0typedef int cfg_t;\n' | put fuzz_cache_includes i19-splices
printf '/* c */ #include "h.h"\n\f#include <x.h>\n#\\\ninclude "y.h"\n// kstub:name k = k2\n' | put fuzz_gen_source i19-directive-positions.cu

# ---- issue 19's .cu regressions, for the scanner and the whole generator ------------------
cat > "$tmp/names.cu" <<'CU'
// Issue 19 #4 and #5: the stub's own parameter names taken by the kernel, and
// names the runtime's headers #define.
struct KSTUB_VERSION_MINOR { int KSTUB_VERSION_PATCH; };
extern "C" __global__ void own(int launch, int ks_launch_, int stream, int ks_stream_,
                               int n_items, int ks_n_items_, int ks_launch__) {}
extern "C" __global__ void macros(KSTUB_VERSION_MINOR v, int KSTUB_H, int KSTUB_TYPES_H,
                                  int KSTUB_VERSION, int KSTUB_VERSION_MAJOR, float KS_RESTRICT) {}
CU
cat > "$tmp/macro_kernel.cu" <<'CU'
// Issue 19 #5: a kernel named after a runtime macro is refused (exit 1).
extern "C" __global__ void fine(int *p) {}
extern "C" __global__ void KSTUB_VERSION(int *p) {}
CU
for f in names macro_kernel; do
    put fuzz_gen_source "i19-$f.cu" < "$tmp/$f.cu"
    mkdir -p "$C/gen_whole"
    cp "$tmp/$f.cu" "$C/gen_whole/seed-i19-$f.cu"
done

# ---- manifests ------------------------------------------------------------------------------
for f in build/gen/*.kstub.json; do
    [ -f "$f" ] && put fuzz_gen_manifest "$(basename "$f")" < "$f"
done
# Issue 19 #13: one kernel listed twice.
printf '{"format": 1, "source": "s.cu", "kernels": [%s, %s]}\n' \
    '{"name": "k", "c_name": "k", "symbol": "k", "line": 1, "launch_bounds": null, "params": []}' \
    '{"name": "k", "c_name": "k", "symbol": "k", "line": 1, "launch_bounds": null, "params": []}' |
    put fuzz_gen_manifest i19-twice.json

# ---- depfile paths (NUL-separated: the target, the input, its headers) -------------------------
printf 'out dir/x.kstub.h\0in put/$k#.cu\0inc/a\\ b.h\0x\n::error::y.h\0c:\\\\d.h\0' | put fuzz_gen_depfile i19-paths

# ---- images: nvcc's, and issue 19 #11's corrupt ones ------------------------------------------
if [ -x "$NVCC" ]; then
    k=kernels/vector_ops.cu
    "$NVCC" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 -o "$tmp/two.fatbin" "$k"
    "$NVCC" -fatbin -arch=sm_90 -compress-mode=speed -o "$tmp/lz4.fatbin" "$k"
    "$NVCC" -fatbin -arch=sm_90 -compress-mode=size -o "$tmp/zstd.fatbin" "$k"
    "$NVCC" -cubin -arch=sm_90 -o "$tmp/k.cubin" "$k"
    "$NVCC" -ptx -arch=sm_90 -o "$tmp/k.ptx" "$k"
    # device variables: PTX .global/.const declarations, an -rdc cubin's object symbols
    "$NVCC" -ptx -arch=sm_90 -o "$tmp/variables.ptx" tests/corpus/abi_globals.cu
    "$NVCC" -cubin -rdc=true -arch=sm_90 -o "$tmp/rdc-variables.cubin" tests/golden/globals.cu
    head -c 16 "$tmp/two.fatbin" > "$tmp/cut16.fatbin"
    python3 - "$tmp" <<'PY'
import struct, sys
t = sys.argv[1]
d = open(t + '/two.fatbin', 'rb').read()
open(t + '/garbage.fatbin', 'wb').write(d[:4] + b'\xab' * (len(d) - 4))
open(t + '/members.fatbin', 'wb').write(d[:16] + b'\xab' * (len(d) - 16))
c = bytearray(open(t + '/k.cubin', 'rb').read())
struct.pack_into('<Q', c, 0x28, len(c) + 4096)
open(t + '/shoff.cubin', 'wb').write(c)
PY
    for f in two.fatbin lz4.fatbin zstd.fatbin k.cubin k.ptx cut16.fatbin garbage.fatbin \
             members.fatbin shoff.cubin variables.ptx rdc-variables.cubin; do
        put fuzz_gen_image "$f" < "$tmp/$f"
        put fuzz_image_kind "$f" < "$tmp/$f"
    done
else
    echo "seed.sh: no nvcc at $NVCC: image seeds left as they are"
fi
du -sb "$C" | awk '{printf "seed.sh: tests/fuzz/corpus holds %d KB\n", $1 / 1024}'
