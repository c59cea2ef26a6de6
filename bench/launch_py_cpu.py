#!/usr/bin/env python3
"""launch_py_cpu.py — the Python target's own cost per launch, on the CPU
machine: the module of bench/gen/python (bench_args: float, const float *,
float *, int, long long) built for this Python and run over the fake driver
(tests/support/fake_cuda.c, KSTUB_LIBCUDA), against an empty METH_FASTCALL
function (bench/py_empty.c) called with the same arguments from the same
loop. What is left is what kstub's C adds: the argument conversions, the C
stub and the fake's launch (a mutex and a recorded launch, the same for
every row). Reported, never asserted: `make bench-py-cpu`.

The array rows use stand-ins (modules named cupy, torch and
cuda.core.experimental in sys.modules, whose classes look like theirs, as
tests/python/test_kernels.py makes them): the C side takes the same fast
paths as with the real libraries, but each attribute the stand-in answers
costs what a Python object's does, not what CuPy's or torch's C getters do.
The GPU numbers come from bench/launch_py.py on the GPU machine.

    launch_py_cpu.py [--rounds R] [--batch B] [--only VARIANT --calls N]

--only runs one variant N times untimed and prints nothing: for
valgrind --tool=callgrind, whose instruction counts for two values of N
give the instructions per call.
"""
import argparse
import ctypes
import os
import random
import sys
import time
import types

GRID, BLOCK, NELEM = 1, 32, 32


def fake_driver():
    """Declares bench_args's layout to the fake driver (the library libkstub loads)."""
    lib = ctypes.CDLL(os.environ["KSTUB_LIBCUDA"])
    lib.fake_cuda_reset()
    for sym, layout in (("bench_args", ((0, 4), (8, 8), (16, 8), (24, 4), (32, 8))),):
        n = len(layout)
        offs = (ctypes.c_size_t * n)(*[o for o, _ in layout])
        sizes = (ctypes.c_size_t * n)(*[s for _, s in layout])
        lib.fake_cuda_set_params(sym.encode(), n, offs, sizes)
    return lib


def stand_ins():
    """cupy, torch and cuda.core.experimental as modules whose classes look like theirs."""
    class DType:                      # what NumPy's dtype answers: kind and itemsize
        def __init__(self, kind, itemsize):
            self.kind, self.itemsize = kind, itemsize

    cupy = types.ModuleType("cupy")

    class MemoryPointer:
        def __init__(self, ptr):
            self.ptr = ptr

    class ndarray:
        def __init__(self, ptr, dtype):
            self.data = MemoryPointer(ptr)
            self.dtype = dtype

    cupy.ndarray = ndarray
    torch = types.ModuleType("torch")
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        setattr(torch, name, type("dtype", (), {})())

    class Tensor:
        def __init__(self, ptr, dtype):
            self._ptr, self.dtype, self.is_cuda = ptr, dtype, True

        def data_ptr(self):
            return self._ptr

    torch.Tensor = Tensor
    core = types.ModuleType("cuda.core.experimental")

    class Buffer:
        def __init__(self, handle):
            self.handle = handle

    class CUdeviceptr:                 # cuda.bindings' handle: an int through __int__ alone
        def __init__(self, v):
            self.v = v

        def __int__(self):
            return self.v

    core.Buffer = Buffer
    sys.modules.update({"cupy": cupy, "torch": torch, "cuda.core.experimental": core})
    f32 = DType("f", 4)
    return {"cupy": (ndarray(0x4000, f32), ndarray(0x5000, f32)),
            "torch": (Tensor(0x6000, torch.float32), Tensor(0x7000, torch.float32)),
            "buffer": (Buffer(0x8000), Buffer(0x9000)),
            "buffer_devptr": (Buffer(CUdeviceptr(0x8000)), Buffer(CUdeviceptr(0x9000)))}


class CoreStream:
    """A stream as cuda.core gives it: __cuda_stream__() -> (version, handle)."""
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def variants(k, e, arrays):
    s = CoreStream(0x77)
    cx, cy = arrays["cupy"]
    tx, ty = arrays["torch"]
    bx, by = arrays["buffer"]
    dx, dy = arrays["buffer_devptr"]
    f = k.bench_args

    def empty(n):
        for _ in range(n):
            e(1.5, 0x1000, 0x2000, NELEM, 1, grid=GRID, block=BLOCK, stream=None)

    def ints(n):
        for _ in range(n):
            f(1.5, 0x1000, 0x2000, NELEM, 1, grid=GRID, block=BLOCK, stream=None)

    def ints_stream(n):
        for _ in range(n):
            f(1.5, 0x1000, 0x2000, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    def ints_tuples(n):
        g, b = (GRID, 1, 1), (BLOCK, 1, 1)
        for _ in range(n):
            f(1.5, 0x1000, 0x2000, NELEM, 1, grid=g, block=b, stream=None)

    def cupy(n):
        for _ in range(n):
            f(1.5, cx, cy, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    def torch(n):
        for _ in range(n):
            f(1.5, tx, ty, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    def buffer(n):
        for _ in range(n):
            f(1.5, bx, by, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    def buffer_devptr(n):
        for _ in range(n):
            f(1.5, dx, dy, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    return {"empty": empty, "ints": ints, "ints_stream": ints_stream, "ints_tuples": ints_tuples,
            "cupy": cupy, "torch": torch, "buffer": buffer,
            "buffer_devptr": buffer_devptr}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--batch", type=int, default=20000)
    ap.add_argument("--only")
    ap.add_argument("--calls", type=int, default=0)
    a = ap.parse_args()
    fake_driver()
    import bench_kernels
    import py_empty
    vs = variants(bench_kernels, py_empty.empty, stand_ins())
    for run in vs.values():            # every path taken once: types found, image loaded
        run(2)
    if a.only:
        vs[a.only](a.calls)
        return 0
    times = {name: [] for name in vs}
    names = list(vs)
    for _ in range(a.rounds):
        random.shuffle(names)
        for name in names:
            t0 = time.perf_counter_ns()
            vs[name](a.batch)
            times[name].append((time.perf_counter_ns() - t0) / a.batch)
    med = {n: sorted(t)[len(t) // 2] for n, t in times.items()}
    print("%-14s %8s %8s %8s %10s" % ("variant", "median", "p10", "p90", "over empty"))
    for n in vs:
        t = sorted(times[n])
        print("%-14s %8.0f %8.0f %8.0f %10.0f" % (n, med[n], t[len(t) // 10], t[(len(t) * 9) // 10],
                                                   med[n] - med["empty"]))
    print("ns per call, %d rounds of %d calls, variants interleaved (Python %s)"
          % (a.rounds, a.batch, sys.version.split()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
