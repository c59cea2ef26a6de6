# test_gpu.py — the Python target on a GPU (make gpu-check-python): the
# module of kernels.cu, its PTX embedded, launched with CuPy arrays, torch
# tensors and cuda.core Buffers and streams; results against a NumPy
# reference, outputs poisoned first. Skips what is not installed.
import struct

import numpy as np
import pytest

cp = pytest.importorskip("cupy")
import kernels  # noqa: E402  (built by tests/python/gpu-check-python.sh)

N = 1000
rng = np.random.default_rng(46)


def blocks(n, b=128):
    return (n + b - 1) // b


def test_saxpy_with_cupy_arrays():
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    dx, dy = cp.asarray(x), cp.asarray(y)
    kernels.saxpy(2.5, dx, dy, N, grid=blocks(N), block=128)
    cp.cuda.runtime.deviceSynchronize()
    # the GPU fuses a*x+y into one FMA (one rounding), NumPy rounds twice
    np.testing.assert_allclose(cp.asnumpy(dy), 2.5 * x + y, rtol=1e-5, atol=1e-6)


def test_saxpy_on_a_cupy_stream_and_keywords():
    x = cp.arange(N, dtype=cp.float32)
    y = cp.full(N, -1.0, dtype=cp.float32)
    s = cp.cuda.Stream(non_blocking=True)
    kernels.saxpy(a=1.0, x=x, y=y, n=N, grid=(blocks(N), 1, 1), block=(128, 1, 1), stream=s)
    s.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), np.arange(N, dtype=np.float32) - 1)


def test_a_cupy_array_of_another_dtype_is_refused():
    with pytest.raises(TypeError, match=r"saxpy\(\): parameter x \(const float \*\) needs float32, not a CuPy array of int32"):
        kernels.saxpy(1.0, cp.zeros(N, cp.int32), cp.zeros(N, cp.float32), N, grid=1, block=128)


def test_a_struct_by_value():
    out = cp.full(N, cp.nan, dtype=cp.float32)               # poisoned
    p = kernels.Params(scale=0.5, count=N, bias=3.0, tag=ord("x"))
    kernels.scale_params(p, out, grid=blocks(N), block=128)
    cp.cuda.runtime.deviceSynchronize()
    want = 0.5 * np.arange(N, dtype=np.float32) + 3.0 + 1000.0
    np.testing.assert_allclose(cp.asnumpy(out), want, rtol=1e-6)


def test_a_struct_as_a_numpy_structured_scalar():
    out = cp.full(8, cp.nan, dtype=cp.float32)
    v = np.zeros((), kernels.Params.dtype())
    v["scale"], v["count"], v["bias"] = 2.0, 8, 1.0
    kernels.scale_params(v[()], out, grid=1, block=32)
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_allclose(cp.asnumpy(out), 2.0 * np.arange(8) + 1.0)


def test_exact_widths_reach_the_kernel():
    out = cp.full(11, -7, dtype=cp.int64)
    kernels.widths(-128, 255, -32768, 65535, -2 ** 31, 2 ** 32 - 1, -2 ** 63, 2 ** 63 - 1, 9.0, True,
                   kernels.Mode.Careful, out, grid=1, block=1)
    cp.cuda.runtime.deviceSynchronize()
    assert cp.asnumpy(out).tolist() == [-128, 255, -32768, 65535, -2 ** 31, 2 ** 32 - 1, -2 ** 63, 2 ** 63 - 1,
                                        9, 1, 200]


def test_nested_struct_and_a_python_keyword_parameter():
    src = cp.asarray([4.0])
    out = cp.full(1, cp.nan, dtype=cp.float64)
    buf = cp.zeros(1, cp.uint8)
    n = kernels.Nested(p=kernels.Params(scale=1.0), v=(0, 0, 2.0), mode=kernels.Mode.Exact, buf=buf.data.ptr)
    kernels.nested(n, in_=src, out=out, grid=1, block=1)
    cp.cuda.runtime.deviceSynchronize()
    assert cp.asnumpy(out)[0] == 1.0 + 2.0 + 4.0 + 2.0 and int(buf[0]) == 1


def test_halves_and_vectors():
    hp = cp.asarray([0.25], dtype=cp.float16)
    out = cp.full(1, cp.nan, dtype=cp.float32)
    kernels.halves(1.5, (0, 0, 0, 2.0), hp, out, grid=1, block=1)
    cp.cuda.runtime.deviceSynchronize()
    assert float(out[0]) == 1.5 + 2.0 + 0.25


def test_the_dtype_picks_the_template_instance():
    f = cp.zeros(N, cp.float32)
    i = cp.zeros(N, cp.int32)
    kernels.fill(f, 1.5, N, grid=blocks(N), block=128)
    kernels.fill(i, 7, N, grid=blocks(N), block=128)
    cp.cuda.runtime.deviceSynchronize()
    assert (cp.asnumpy(f) == 1.5).all() and (cp.asnumpy(i) == 7).all()


def test_device_variables():
    kernels.g_scale.set(2.0)
    kernels.c_table.set([float(k) for k in range(8)])
    kernels.g_params.set(kernels.Params(scale=0.5))
    assert kernels.g_scale.get() == 2.0 and kernels.c_table.read(3, 2) == [3.0, 4.0]
    assert kernels.g_params.get().scale == 0.5 and kernels.g_scale.address != 0
    out = cp.full(1, cp.nan, dtype=cp.float32)
    kernels.use_globals(out, grid=1, block=1)          # thread 0: g_scale * c_table[0] + g_params.scale
    cp.cuda.runtime.deviceSynchronize()
    assert float(out[0]) == 0.5


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    y = torch.ones(N, dtype=torch.float32, device="cuda")
    kernels.saxpy(3.0, x, y, N, grid=blocks(N), block=128, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert torch.equal(y.cpu(), torch.arange(N, dtype=torch.float32) * 3 + 1)
    with pytest.raises(TypeError, match=r"parameter y .*float32, not a torch tensor of float64"):
        kernels.saxpy(1.0, x, torch.zeros(N, dtype=torch.float64, device="cuda"), N, grid=1, block=1)
    with pytest.raises(ValueError, match="not on a CUDA device"):
        kernels.saxpy(1.0, x.cpu(), y, N, grid=1, block=1)


def test_torch_tensors_through_the_exchange_table_and_the_getters():
    """An exact torch.Tensor goes through torch's DLPack C exchange table where torch has one
    (kstub_python.h: ks__py_dl_torch); a view at an offset, a tensor that requires grad and a
    Parameter (a subclass: its getters) launch with the same addresses torch gives."""
    torch = pytest.importorskip("torch")
    base = torch.arange(N + 8, dtype=torch.float32, device="cuda")
    views = {"view": base[8:], "grad": base[8:].clone().requires_grad_(True),
             "param": torch.nn.Parameter(base[8:].clone(), requires_grad=False)}
    for what, x in views.items():
        y = torch.ones(N, dtype=torch.float32, device="cuda")
        kernels.saxpy(2.0, x, y, N, grid=blocks(N), block=128, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        assert torch.equal(y.cpu(), torch.arange(8, N + 8, dtype=torch.float32) * 2 + 1), what


def descriptor_kind(cls, name):
    """What the look-up of name on cls finds, as kstub_python.h sees it: "getset", "member",
    "method" (a C method), else the type's name."""
    import inspect
    a = inspect.getattr_static(cls, name)
    return {"getset_descriptor": "getset", "member_descriptor": "member",
            "method_descriptor": "method"}.get(type(a).__name__, type(a).__name__)


def reads_as_object_does(cls):
    """No __getattr__ and no Python __getattribute__ in cls's MRO: its attribute reads are the
    generic ones (or a C extension type's own), which the direct reads stand for."""
    return all("__getattr__" not in vars(b) and
               type(vars(b).get("__getattribute__", object.__getattribute__)).__name__ == "wrapper_descriptor"
               for b in cls.__mro__)


def test_the_array_libraries_attributes_are_c_descriptors():
    """kstub reads a torch tensor's is_cuda, data_ptr() and dtype, a CuPy array's data and dtype
    and its MemoryPointer's ptr through their C descriptors' entry points (the general path,
    PyObject_GetAttr, where they are not). The speed measured in bench/ rests on this shape of
    the installed libraries: a change in it shows here first."""
    assert reads_as_object_does(cp.ndarray)
    assert {n: descriptor_kind(cp.ndarray, n) for n in ("data", "dtype")} in (
        {"data": k1, "dtype": k2} for k1 in ("getset", "member") for k2 in ("getset", "member"))
    mem = type(cp.zeros(1).data)
    assert reads_as_object_does(mem) and descriptor_kind(mem, "ptr") in ("getset", "member")
    torch = pytest.importorskip("torch")
    assert reads_as_object_does(torch.Tensor) and reads_as_object_does(torch.nn.Parameter)
    assert [descriptor_kind(torch.Tensor, n) for n in ("is_cuda", "data_ptr", "dtype")] == \
        ["getset", "method", "getset"]


class OnlyDLPack:
    """A device array seen only through DLPack (as a JAX array is): a torch tensor or a CuPy array's
    __dlpack__ and __dlpack_device__, nothing else, so the module takes the DLPack path."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, *args, **kw):
        return self.a.__dlpack__(*args, **kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_torch_tensors_through_dlpack():
    torch = pytest.importorskip("torch")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    y = torch.full((N + 4,), float("nan"), dtype=torch.float32, device="cuda")
    y[4:] = 1.0
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        kernels.saxpy(3.0, OnlyDLPack(x), OnlyDLPack(y[4:]), N, grid=blocks(N), block=128, stream=s)
    torch.cuda.synchronize()
    assert torch.equal(y[4:].cpu(), torch.arange(N, dtype=torch.float32) * 3 + 1)   # the view's offset
    with pytest.raises(TypeError, match=r"parameter y .*float32, not a DLPack tensor of float64"):
        kernels.saxpy(1.0, x, OnlyDLPack(torch.zeros(N, dtype=torch.float64, device="cuda")), N, grid=1, block=1)
    with pytest.raises(ValueError, match=r"the DLPack tensor is on kDLCPU"):
        kernels.saxpy(1.0, OnlyDLPack(x.cpu()), y, N, grid=1, block=1)


def test_cupy_arrays_through_dlpack():
    x = cp.arange(N, dtype=cp.float32)
    y = cp.full(N, -1.0, dtype=cp.float32)
    kernels.saxpy(1.0, OnlyDLPack(x), OnlyDLPack(y), N, grid=blocks(N), block=128, stream=cp.cuda.Stream())
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), np.arange(N, dtype=np.float32) - 1)


def test_cuda_core_buffers_and_streams():
    try:  # cuda.core 0.4 and later; older releases keep it under .experimental
        import cuda.core as core
        core.Device
    except (ImportError, AttributeError):
        core = pytest.importorskip("cuda.core.experimental")
    dev = core.Device()
    dev.set_current()
    stream = dev.create_stream()
    buf = dev.allocate(N * 4, stream=stream)
    y = cp.ndarray(N, cp.float32, cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(int(buf.handle), N * 4, buf), 0))
    stream.sync()
    y.fill(1.0)
    cp.cuda.runtime.deviceSynchronize()
    x = cp.arange(N, dtype=cp.float32)
    kernels.saxpy(2.0, x, buf, N, grid=blocks(N), block=128, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(cp.asnumpy(y), 2 * np.arange(N, dtype=np.float32) + 1)


def test_a_negative_address_is_refused_before_the_launch():
    with pytest.raises(OverflowError):
        kernels.saxpy(1.0, -1, 0, N, grid=1, block=1)
    assert struct.calcsize("P") == 8
