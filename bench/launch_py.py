#!/usr/bin/env python3
"""launch_py.py — question 1's Python rows: CPU time per launch of the same
kernels (bench/kernels/bench_kernels.cu) through CuPy's RawKernel,
cuda.core's launch() and kstub's Python target (the module of
bench/gen/python, built by `make bench-py-module` into build/bench/py), measured
like launch.c: batches of BATCH launches on a user stream, the stream
synchronised before each batch and only the launch loop timed
(time.perf_counter_ns, CLOCK_MONOTONIC on Linux), variants interleaved,
medians over ROUNDS rounds. The kstub rows pass the arrays themselves (CuPy
arrays, torch tensors, cuda.core Buffers), never addresses taken beforehand,
but for one floor row (kstub_py_addr: int addresses and an int stream
handle, read once), which splits kstub's overhead into the libraries'
getters and the rest.

Every library is tried on the struct kernel the way its documentation
allows (CuPy: a NumPy structured scalar; cuda.core: a NumPy structured
scalar, then a ctypes.Structure); a struct row that cannot launch says what
the library answered. A struct launch that runs is checked once for the
right result (y[i] = scale * x[i] + bias).

Optional by design: a package that does not import, or a variant that fails,
is recorded as skipped with the reason and the others go on. Always writes
OUTDIR/launch_py_summary.csv (kernel,variant,label,median_ns,p10_ns,p90_ns,
rounds,status,over_raw_ns,ratio_raw,over_stub_ns,ratio_stub) and exits 0 unless
the arguments are wrong. over_raw_ns and ratio_raw are medians over rounds of
the row against the raw C loop of the same kernel in the same round and
process (bench/py_raw.c: the driver's cuLaunchKernel with arguments prepared
once), where that row ran; over_stub_ns and ratio_stub the same against
kstub's C stub in a C loop in this process (kstub_c_loop, py_raw's stub_loop).
raw_py_args is the raw launch from a call given the kstub rows' 8 arguments
(unread): the interpreter's share of a kstub call.

    launch_py.py KERNEL.cu OUTDIR [ROUNDS] [BATCH]
"""
import csv
import ctypes
import os
import sys
import time
import traceback

GRID, BLOCK, NELEM = 1, 32, 32


def quantile(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    pos = q * (len(s) - 1)
    i = int(pos)
    return s[i] + (pos - i) * (s[i + 1] - s[i]) if i + 1 < len(s) else s[i]


def setup_cupy(src):
    """Variants through CuPy: RawKernel compiled by CuPy (NVRTC)."""
    import cupy
    import numpy as np

    mod = cupy.RawModule(code=src, options=("-std=c++17",))
    k_args = mod.get_function("bench_args")
    k_struct = mod.get_function("bench_struct")
    stream = cupy.cuda.Stream(non_blocking=False)
    x = cupy.zeros(NELEM, dtype=cupy.float32)
    y = cupy.zeros(NELEM, dtype=cupy.float32)
    args = (np.float32(1.5), x, y, np.int32(NELEM), np.int64(1))
    # BenchParams {float scale; int n; double bias; const float *x;} as NumPy
    # lays out an aligned struct: 24 bytes, like the device's.
    dt = np.dtype([("scale", np.float32), ("n", np.int32), ("bias", np.float64),
                   ("x", np.uint64)], align=True)
    assert dt.itemsize == 24, dt.itemsize
    params = np.array([(2.0, NELEM, 0.5, x.data.ptr)], dtype=dt)[0]
    sargs = (params, y)

    def run_args(count):
        for _ in range(count):
            k_args((GRID,), (BLOCK,), args, stream=stream)

    def run_struct(count):
        for _ in range(count):
            k_struct((GRID,), (BLOCK,), sargs, stream=stream)

    notes = {"bench_struct": check_struct(lambda: run_struct(1), stream.synchronize, y, "a NumPy structured scalar")}
    return stream.synchronize, {"bench_args": run_args, "bench_struct": run_struct}, \
        "CuPy %s" % cupy.__version__, notes


def check_struct(launch_once, sync, y_cupy, how):
    """Launch the struct kernel once and check y = 2 * 0 + 0.5 (x is zeros): its row's note."""
    y_cupy.fill(-1)
    sync()
    launch_once()
    sync()
    got = float(y_cupy[0])
    if got != 0.5:
        return "wrong result: bench_struct as %s gave y[0] = %r, not 0.5" % (how, got)
    return "ok: as " + how


def kstub_module():
    """The Python target's module of bench_kernels.cu (make bench-py-module)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "build", "bench", "py"))
    import bench_kernels
    return bench_kernels


def setup_kstub_cupy(src):
    """kstub's Python target with CuPy arrays and a CuPy stream: the arrays passed each call."""
    del src
    import cupy
    k = kstub_module()
    stream = cupy.cuda.Stream(non_blocking=False)
    x = cupy.zeros(NELEM, dtype=cupy.float32)
    y = cupy.zeros(NELEM, dtype=cupy.float32)
    p = k.BenchParams(scale=2.0, n=NELEM, bias=0.5, x=x)

    def run_args(count):
        for _ in range(count):
            k.bench_args(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=stream)

    def run_struct(count):
        for _ in range(count):
            k.bench_struct(p, y, grid=GRID, block=BLOCK, stream=stream)

    notes = {"bench_struct": check_struct(lambda: run_struct(1), stream.synchronize, y,
                                          "the generated class BenchParams")}
    return stream.synchronize, {"bench_args": run_args, "bench_struct": run_struct}, \
        "kstub, CuPy %s arrays" % cupy.__version__, notes


def setup_kstub_torch(src):
    """kstub's Python target with torch tensors and a torch stream."""
    del src
    import torch
    k = kstub_module()
    stream = torch.cuda.Stream()
    x = torch.zeros(NELEM, dtype=torch.float32, device="cuda")
    y = torch.zeros(NELEM, dtype=torch.float32, device="cuda")
    p = k.BenchParams(scale=2.0, n=NELEM, bias=0.5, x=x)

    def run_args(count):
        for _ in range(count):
            k.bench_args(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=stream)

    def run_struct(count):
        for _ in range(count):
            k.bench_struct(p, y, grid=GRID, block=BLOCK, stream=stream)

    return stream.synchronize, {"bench_args": run_args, "bench_struct": run_struct}, \
        "kstub, torch %s tensors" % torch.__version__, {}


def core_stream_and_buffers():
    """cuda.core's device 0 made current, a stream of its own and two NELEM-float Buffers
    (allocate() took the stream as of cuda.core 0.3)."""
    try:
        from cuda.core import Device
    except ImportError:
        from cuda.core.experimental import Device
    dev = Device(0)
    dev.set_current()
    stream = dev.create_stream()
    try:
        x = dev.allocate(NELEM * 4, stream=stream)
        y = dev.allocate(NELEM * 4, stream=stream)
    except TypeError:
        x = dev.allocate(NELEM * 4)
        y = dev.allocate(NELEM * 4)
    return stream, x, y


def setup_kstub_core(src):
    """kstub's Python target with cuda.core Buffers and a cuda.core stream (cuda.core's own objects)."""
    del src
    try:
        import cuda.core as core
    except ImportError:
        import cuda.core.experimental as core
    k = kstub_module()
    stream, x, y = core_stream_and_buffers()
    p = k.BenchParams(scale=2.0, n=NELEM, bias=0.5, x=x)

    def run_args(count):
        for _ in range(count):
            k.bench_args(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=stream)

    def run_struct(count):
        for _ in range(count):
            k.bench_struct(p, y, grid=GRID, block=BLOCK, stream=stream)

    return stream.sync, {"bench_args": run_args, "bench_struct": run_struct}, \
        "kstub, cuda.core %s Buffers" % getattr(core, "__version__", "?"), {}


def setup_kstub_addr(src):
    """kstub's Python target given int addresses and an int stream handle, read from CuPy (else
    cuda.core) objects once beforehand: the floor of a kstub Python launch, every argument on
    its inline path. Its distance to the rows above is what the libraries' getters cost; its
    distance to the C stub, the Python call itself and the driver called from a Python loop."""
    del src
    k = kstub_module()
    try:
        import cupy
        stream = cupy.cuda.Stream(non_blocking=False)
        x = cupy.zeros(NELEM, dtype=cupy.float32)
        y = cupy.zeros(NELEM, dtype=cupy.float32)
        xp, yp, sp, sync, what = x.data.ptr, y.data.ptr, stream.ptr, stream.synchronize, "CuPy"
    except ImportError:
        stream, x, y = core_stream_and_buffers()
        xp, yp, sp, sync, what = int(x.handle), int(y.handle), int(stream.handle), stream.sync, "cuda.core"

    def run_args(count):
        for _ in range(count):
            k.bench_args(1.5, xp, yp, NELEM, 1, grid=GRID, block=BLOCK, stream=sp)

    run_args.keep = (x, y, stream)     # the memory and stream outlive the addresses
    return sync, {"bench_args": run_args}, "kstub, int addresses and stream handle (from %s)" % what, \
        {"bench_struct": "not run: the floor row launches bench_args only"}


def setup_raw(src):
    """The raw cuLaunchKernel of bench_args inside this process (bench/py_raw.c): "loop" runs a
    batch in a C loop, the baseline the Python rows' overhead is taken against (same process,
    same rounds); "launch" is one raw launch per Python call, the floor of any launch made from
    a Python loop; "launch_args" the same launch from a call given what a kstub call is given
    (the scalars, the CuPy arrays, grid, block and the stream object; none of them read), which
    splits the interpreter's cost of passing them from kstub's own; "stub_loop" kstub's C stub
    of bench_args (bench/gen, linked into py_raw with a libkstub of its own) in a C loop, the
    in-process C stub the Python rows are held to (<= 1.2 x); "stub_call" that stub once per
    Python call given the same arguments, unread (what a kstub row costs over it is the
    module's reading of its arguments). The raw handle is CuPy's
    CUfunction of the same source."""
    import cupy
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench", "py"))
    import py_raw

    mod = cupy.RawModule(code=src, options=("-std=c++17",))
    k = mod.get_function("bench_args")
    fn = k.kernel.ptr
    stream = cupy.cuda.Stream(non_blocking=False)
    x = cupy.zeros(NELEM, dtype=cupy.float32)
    y = cupy.zeros(NELEM, dtype=cupy.float32)
    py_raw.prepare(fn, stream.ptr, x.data.ptr, y.data.ptr, NELEM)
    py_raw.stub_prepare(stream.ptr, x.data.ptr, y.data.ptr, NELEM)
    keep = (mod, k, stream, x, y)

    def run_loop(count):
        py_raw.loop(count)

    def run_calls(count):
        launch = py_raw.launch
        for _ in range(count):
            launch()

    def run_args(count):
        launch = py_raw.launch_args
        for _ in range(count):
            launch(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=stream)

    def run_stub(count):
        py_raw.stub_loop(count)

    def run_stub_call(count):
        call = py_raw.stub_call
        for _ in range(count):
            call(1.5, x, y, NELEM, 1, grid=GRID, block=BLOCK, stream=stream)

    def run_struct_stub(count):
        py_raw.stub_struct_loop(count)

    run_loop.keep = run_calls.keep = run_args.keep = run_stub.keep = run_stub_call.keep = keep
    run_struct_stub.keep = keep
    # bench_struct: only kstub's C stub in a C loop (its Python rows' in-process reference).
    return stream.synchronize, {"bench_args": (run_loop, run_calls, run_args, run_stub, run_stub_call),
                                "bench_struct": (None, None, None, run_struct_stub, None)}, \
        "CuPy %s's CUfunction" % cupy.__version__, {"bench_struct": "ok: kstub's C stub loop only"}


# setup_raw's rows: (variant, what the label says after the SETUPS label).
RAW_ROWS = (("raw_c_loop", "(a C loop)"), ("raw_py_call", "(one Python call per launch)"),
            ("raw_py_args", "(one Python call per launch, given kstub's 8 arguments, unread)"),
            ("kstub_c_loop", "kstub's C stub, a C loop in this process (bench/py_raw.c)"),
            ("kstub_c_call", "kstub's C stub of bench_args, one Python call per launch, given the 8 arguments, unread "
             "(bench/py_raw.c)"))


def setup_cuda_core(src):
    """Variants through cuda.core: Program (NVRTC) to cubin, launch()."""
    try:
        import cuda.core as core
        from cuda.core import Device, LaunchConfig, Program, launch
    except ImportError:
        import cuda.core.experimental as core
        from cuda.core.experimental import Device, LaunchConfig, Program, launch
    import numpy as np

    dev = Device(0)
    dev.set_current()
    cc = dev.compute_capability
    arch = "sm_%d%d" % (cc[0], cc[1])
    ProgramOptions = getattr(core, "ProgramOptions", None)
    if ProgramOptions is not None:
        prog = Program(src, code_type="c++", options=ProgramOptions(std="c++17", arch=arch))
        obj = prog.compile("cubin")
    else:  # before ProgramOptions, options went to compile()
        prog = Program(src, "c++")
        obj = prog.compile("cubin", options=("-std=c++17", "-arch=" + arch))
    kernel = obj.get_kernel("bench_args")
    kstruct = obj.get_kernel("bench_struct")
    stream = dev.create_stream()
    try:
        x = dev.allocate(NELEM * 4, stream=stream)
        y = dev.allocate(NELEM * 4, stream=stream)
    except TypeError:
        x = dev.allocate(NELEM * 4)
        y = dev.allocate(NELEM * 4)
    config = LaunchConfig(grid=GRID, block=BLOCK)
    args = (np.float32(1.5), x, y, np.int32(NELEM), np.int64(1))

    # launch(stream, config, kernel, *args) since cuda.core 0.3; before it the
    # stream was part of the LaunchConfig and launch(kernel, config, *args).
    try:
        launch(stream, config, kernel, *args)
        new_api = True
    except TypeError:
        config = LaunchConfig(grid=GRID, block=BLOCK, stream=stream)
        launch(kernel, config, *args)
        new_api = False
    stream.sync()

    if new_api:
        def run_args(count):
            for _ in range(count):
                launch(stream, config, kernel, *args)
    else:
        def run_args(count):
            for _ in range(count):
                launch(kernel, config, *args)

    version = getattr(core, "__version__", "?")
    fns = {"bench_args": run_args}
    notes = {}

    # The struct kernel, each way cuda.core's launch() documents arguments: a NumPy
    # scalar (here a structured one, as CuPy takes it), then a ctypes object.
    dt = np.dtype([("scale", np.float32), ("n", np.int32), ("bias", np.float64),
                   ("x", np.uint64)], align=True)
    as_numpy = np.array([(2.0, NELEM, 0.5, int(x.handle))], dtype=dt)[0]

    class BenchParams(ctypes.Structure):
        _fields_ = [("scale", ctypes.c_float), ("n", ctypes.c_int), ("bias", ctypes.c_double),
                    ("x", ctypes.c_void_p)]

    as_ctypes = BenchParams(2.0, NELEM, 0.5, int(x.handle))
    said = []
    for how, value in (("a NumPy structured scalar", as_numpy), ("a ctypes.Structure", as_ctypes)):
        sargs = (value, y)
        try:
            if new_api:
                launch(stream, config, kstruct, *sargs)
            else:
                launch(kstruct, config, *sargs)
            stream.sync()
        except Exception as e:  # what the library said is the row's result
            said.append("%s: %s: %s" % (how, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
            continue
        if new_api:
            def run_struct(count, sargs=sargs):
                for _ in range(count):
                    launch(stream, config, kstruct, *sargs)
        else:
            def run_struct(count, sargs=sargs):
                for _ in range(count):
                    launch(kstruct, config, *sargs)
        fns["bench_struct"] = run_struct
        notes["bench_struct"] = "ok: launched as %s (result not checked: Buffers)" % how
        break
    if "bench_struct" not in fns:
        notes["bench_struct"] = "refused: " + "; ".join(said)
    return stream.sync, fns, "cuda.core %s" % version, notes


SETUPS = [
    ("raw_py", "raw C cuLaunchKernel in this process", setup_raw),
    ("cupy_rawkernel", "CuPy RawKernel (Python)", setup_cupy),
    ("cuda_core_launch", "cuda.core launch() (Python)", setup_cuda_core),
    ("kstub_py_cupy", "kstub Python target (Python)", setup_kstub_cupy),
    ("kstub_py_torch", "kstub Python target (Python)", setup_kstub_torch),
    ("kstub_py_core", "kstub Python target (Python)", setup_kstub_core),
    ("kstub_py_addr", "kstub Python target (Python)", setup_kstub_addr),
]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src_path, outdir = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    with open(src_path) as f:
        src = f.read()

    rows = []        # summary rows
    active = []      # (id, label, kernel, sync, fn)
    for vid, label, setup in SETUPS:
        try:
            sync, fns, version, notes = setup(src)
            print("launch_py: %s ready (%s)" % (vid, version), flush=True)
            for kernel, note in notes.items():
                print("launch_py: %s %s: %s" % (vid, kernel, note), flush=True)
            for kernel, note in notes.items():
                if not note.startswith("ok"):
                    fns.pop(kernel, None)
            for kernel, fn in fns.items():
                if isinstance(fn, tuple):   # setup_raw: RAW_ROWS, in order
                    for (rid, what), f in zip(RAW_ROWS, fn):
                        if f is None:
                            continue
                        active.append((rid, "%s %s, %s" % (label, what, version) if not rid.startswith("kstub_c_")
                                       else what, kernel, sync, f))
                    continue
                active.append((vid, "%s, %s" % (label, version), kernel, sync, fn))
            for kernel in ("bench_args", "bench_struct"):
                if kernel not in fns:
                    rows.append([kernel, vid, "%s, %s" % (label, version), "", "", "", 0,
                                 notes.get(kernel, "not run")])
        except Exception as e:  # optional part: record why and go on
            why = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            print("launch_py: %s skipped (%s)" % (vid, why), flush=True)
            if not isinstance(e, ImportError):
                traceback.print_exc(limit=3)
            for kernel in ("bench_args", "bench_struct"):
                rows.append([kernel, vid, label, "", "", "", 0, "skipped: " + why])

    times = {(a[0], a[2]): [] for a in active}
    by_round = []    # per round: {(variant, kernel): ns per launch}
    failed = {}
    # Warm-up, then interleaved rounds.
    for vid, _, kernel, sync, fn in active:
        try:
            for _ in range(3):
                sync()
                fn(batch)
            sync()
        except Exception as e:
            failed[(vid, kernel)] = "%s: %s" % (type(e).__name__, e)
    for r in range(rounds if active else 0):
        n = len(active)
        by_round.append({})
        for i in range(n):
            vid, _, kernel, sync, fn = active[(i + r) % n]
            if (vid, kernel) in failed:
                continue
            try:
                sync()
                t0 = time.perf_counter_ns()
                fn(batch)
                t1 = time.perf_counter_ns()
                times[(vid, kernel)].append((t1 - t0) / batch)
                by_round[-1][(vid, kernel)] = (t1 - t0) / batch
            except Exception as e:
                failed[(vid, kernel)] = "%s: %s" % (type(e).__name__, e)
        if (r + 1) % 10 == 0:
            print("launch_py: round %d of %d" % (r + 1, rounds), flush=True)
    for vid, label, kernel, sync, _ in active:
        try:
            sync()
        except Exception:
            pass
        t = times[(vid, kernel)]
        if (vid, kernel) in failed or not t:
            rows.append([kernel, vid, label, "", "", "", 0,
                         "failed: " + failed.get((vid, kernel), "no rounds")])
            continue
        # Against the raw C loop of the same kernel in the same round (this process).
        pairs = [(rd[(vid, kernel)], rd[("raw_c_loop", kernel)]) for rd in by_round
                 if (vid, kernel) in rd and ("raw_c_loop", kernel) in rd]
        over = "%.1f" % quantile([v - b for v, b in pairs], 0.5) if pairs else ""
        ratio = "%.4f" % quantile([v / b for v, b in pairs], 0.5) if pairs else ""
        # Against kstub's C stub in a C loop, the same round and process.
        spairs = [(rd[(vid, kernel)], rd[("kstub_c_loop", kernel)]) for rd in by_round
                  if (vid, kernel) in rd and ("kstub_c_loop", kernel) in rd]
        over_stub = "%.1f" % quantile([v - b for v, b in spairs], 0.5) if spairs else ""
        ratio_stub = "%.4f" % quantile([v / b for v, b in spairs], 0.5) if spairs else ""
        rows.append([kernel, vid, label, "%.1f" % quantile(t, 0.5), "%.1f" % quantile(t, 0.1),
                     "%.1f" % quantile(t, 0.9), len(t), "ok", over, ratio, over_stub, ratio_stub])
        print("launch_py: %-14s %-60s %8.1f ns/launch" % (kernel, label, quantile(t, 0.5)))

    with open(os.path.join(outdir, "launch_py_summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "variant", "label", "median_ns", "p10_ns", "p90_ns", "rounds", "status",
                    "over_raw_ns", "ratio_raw", "over_stub_ns", "ratio_stub"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
