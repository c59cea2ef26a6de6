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
cuda.core.experimental in sys.modules, whose classes look like theirs):
cupy and torch are Python classes over tests/python/array_double.c's C
types, whose attributes are C getsets, a member and a METH_NOARGS method as
CuPy's and torch's are, so kstub reads them through their C entry points;
cupy_py and torch_py override every attribute in Python, so they take
PyObject_GetAttr (what every array row cost before the direct reads). The
C getters are the double's, not CuPy's or torch's. raw_loop, raw_call,
raw_args and stub_loop are bench/py_raw.c's rows over the same fake: the
raw cuLaunchKernel in a C loop, from one Python call per launch, from a
call given kstub's 8 arguments (unread), and kstub's C stub in a C loop;
"over raw" is a row less raw_loop, "/ stub" a row over stub_loop. The GPU
numbers come from bench/launch_py.py on the GPU machine.

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
    """cupy, torch and cuda.core.experimental as modules whose classes look like theirs. torch's
    Tensor and CuPy's ndarray are Python classes over tests/python/array_double.c's C types,
    which read as torch's and CuPy's do (getsets, a member, a METH_NOARGS method), so kstub
    reads them through their C entry points; the *_py twins override every attribute in
    Python (instance attributes and a Python method), so they take PyObject_GetAttr."""
    import array_double as ad

    class DType:                      # what NumPy's dtype answers: kind and itemsize
        def __init__(self, kind, itemsize):
            self.kind, self.itemsize = kind, itemsize

    cupy = types.ModuleType("cupy")

    class ndarray(ad.ndarray_base):
        pass

    class MemoryPointer:
        def __init__(self, ptr):
            self.ptr = ptr

    class ndarray_py(ndarray):
        data = dtype = None            # plain class attributes: the instance's own are read

        def __init__(self, ptr, dtype):
            super().__init__(None, dtype)
            self.data, self.dtype = MemoryPointer(ptr), dtype

    cupy.ndarray = ndarray
    torch = types.ModuleType("torch")
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        setattr(torch, name, type("dtype", (), {})())

    class Tensor(ad.TensorBase):
        pass

    class Tensor_py(Tensor):
        is_cuda = dtype = None

        def __init__(self, ptr, dtype):
            super().__init__(ptr, dtype)
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
    return {"cupy": (ndarray(ad.MemoryPointer(0x4000), f32), ndarray(ad.MemoryPointer(0x5000), f32)),
            "cupy_py": (ndarray_py(0x4000, f32), ndarray_py(0x5000, f32)),
            "torch": (Tensor(0x6000, torch.float32), Tensor(0x7000, torch.float32)),
            "torch_py": (Tensor_py(0x6000, torch.float32), Tensor_py(0x7000, torch.float32)),
            "buffer": (Buffer(0x8000), Buffer(0x9000)),
            "buffer_devptr": (Buffer(CUdeviceptr(0x8000)), Buffer(CUdeviceptr(0x9000)))}


class CoreStream:
    """A stream as cuda.core gives it: __cuda_stream__() -> (version, handle)."""
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def variants(k, e, raw, arrays):
    s = CoreStream(0x77)
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

    def arrays_of(name):
        x, y = arrays[name]

        def run(n):
            for _ in range(n):
                f(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=s)
        return run

    # py_raw (bench/py_raw.c): the fake's cuLaunchKernel in a C loop, from one Python call per
    # launch, and from a call given the 8 arguments kstub's rows are given; kstub's C stub in a
    # C loop (the C stub in this process: what "<= 1.2 x the C stub" is measured against).
    def raw_loop(n):
        raw.loop(n)

    def raw_call(n):
        launch = raw.launch
        for _ in range(n):
            launch()

    def raw_args(n):
        launch = raw.launch_args
        x, y = arrays["cupy"]
        for _ in range(n):
            launch(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=s)

    def stub_loop(n):
        raw.stub_loop(n)

    vs = {"empty": empty, "ints": ints, "ints_stream": ints_stream, "ints_tuples": ints_tuples}
    vs.update((name, arrays_of(name)) for name in arrays)
    vs.update(raw_loop=raw_loop, raw_call=raw_call, raw_args=raw_args, stub_loop=stub_loop)
    return vs


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
    import py_raw
    py_raw.stub_prepare(0, 0x1000, 0x2000, NELEM)      # the stub's own libkstub loads the image
    py_raw.stub_loop(1)
    py_raw.prepare(py_raw.stub_handle(), 0, 0x1000, 0x2000, NELEM)
    vs = variants(bench_kernels, py_empty.empty, py_raw, stand_ins())
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
    print("%-14s %8s %8s %8s %10s %10s %9s" % ("variant", "median", "p10", "p90", "over empty", "over raw", "/ stub"))
    for n in vs:
        t = sorted(times[n])
        print("%-14s %8.0f %8.0f %8.0f %10.0f %10.0f %9.2f" % (
            n, med[n], t[len(t) // 10], t[(len(t) * 9) // 10], med[n] - med["empty"],
            med[n] - med["raw_loop"], med[n] / med["stub_loop"]))
    print("ns per call, %d rounds of %d calls, variants interleaved (Python %s)"
          % (a.rounds, a.batch, sys.version.split()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
