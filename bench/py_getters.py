#!/usr/bin/env python3
"""py_getters.py — where a Python launch's time goes with real torch tensors and CuPy arrays:
kstub's Python target over the fake driver (tests/support/fake_cuda.c, KSTUB_LIBCUDA), so no
GPU launch is timed, with the arrays of the installed torch and CuPy (on the GPU machine),
against the same call with int addresses; and the libraries' own getters from Python.
Reported, not asserted (issue 46). On the GPU machine:

    make build/tests/libcuda_fake.so bench-py-module BENCH_PYTHON=python3
    KSTUB_LIBCUDA=$PWD/build/tests/libcuda_fake.so PYTHONPATH=build/bench/py:bench \\
        python3 bench/py_getters.py [ROUNDS] [BATCH]
"""
import random
import sys
import time

import launch_py_cpu


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    launch_py_cpu.fake_driver()
    import bench_kernels as k
    import cupy
    import torch
    n = 32
    tx = torch.zeros(n, dtype=torch.float32, device="cuda")
    ty = torch.zeros(n, dtype=torch.float32, device="cuda")
    ts = torch.cuda.Stream()
    cx = cupy.zeros(n, dtype=cupy.float32)
    cy = cupy.zeros(n, dtype=cupy.float32)
    cs = cupy.cuda.Stream(non_blocking=False)
    ax, ay, sh = tx.data_ptr(), ty.data_ptr(), ts.cuda_stream
    f = k.bench_args

    def loop(call):
        def run(c):
            for _ in range(c):
                call()
        return run

    vs = {
        "ints, int stream": loop(lambda: f(1.5, ax, ay, n, 1, grid=1, block=32, stream=sh)),
        "ints, no stream": loop(lambda: f(1.5, ax, ay, n, 1, grid=1, block=32)),
        "torch, int stream": loop(lambda: f(1.5, tx, ty, n, 1, grid=1, block=32, stream=sh)),
        "torch, torch stream": loop(lambda: f(1.5, tx, ty, n, 1, grid=1, block=32, stream=ts)),
        "cupy, int stream": loop(lambda: f(1.5, cx, cy, n, 1, grid=1, block=32, stream=sh)),
        "cupy, cupy stream": loop(lambda: f(1.5, cx, cy, n, 1, grid=1, block=32, stream=cs)),
        "lambda only": loop(lambda: None),
        "t.is_cuda": loop(lambda: tx.is_cuda),
        "t.data_ptr()": loop(lambda: tx.data_ptr()),
        "t.dtype": loop(lambda: tx.dtype),
        "stream.cuda_stream": loop(lambda: ts.cuda_stream),
        "a.data.ptr": loop(lambda: cx.data.ptr),
        "a.dtype": loop(lambda: cx.dtype),
    }
    for run in vs.values():
        run(10)
    times = {name: [] for name in vs}
    names = list(vs)
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            t0 = time.perf_counter_ns()
            vs[name](batch)
            times[name].append((time.perf_counter_ns() - t0) / batch)
    med = {nm: sorted(t)[len(t) // 2] for nm, t in times.items()}
    base = med["lambda only"]
    print("| call (fake driver: no GPU launch) | ns | less the empty lambda loop |")
    print("| --- | ---: | ---: |")
    for nm in vs:
        print("| %s | %.0f | %.0f |" % (nm, med[nm], med[nm] - base))
    print("\n%d rounds of %d calls, interleaved, medians; torch %s, CuPy %s, Python %s"
          % (rounds, batch, torch.__version__, cupy.__version__, sys.version.split()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
