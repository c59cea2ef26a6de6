# test_kernels.py — the Python target on the CPU: arguments converted at the
# kernel's exact types and checked (dtypes, ranges, arity, keywords), structs
# by value, device variables and errors, through the fake driver (conftest.py).
import struct
import sys
import types

import numpy as np
import pytest


class DevArray:
    """An object with __cuda_array_interface__ (what Numba, CuPy and torch give)."""

    def __init__(self, ptr, dtype, readonly=False, n=16):
        self.__cuda_array_interface__ = {
            "shape": (n,), "typestr": np.dtype(dtype).str, "data": (ptr, readonly), "version": 3,
            "strides": None,
        }


def f32(ptr=0x10000, **kw):
    return DevArray(ptr, np.float32, **kw)


def i32(ptr=0x20000, **kw):
    return DevArray(ptr, np.int32, **kw)


def u64(b):
    return struct.unpack("<Q", b)[0]


# ---- a plain launch ---------------------------------------------------------------------------

def test_saxpy_packs_each_argument_at_its_width(kernels, fake):
    kernels.saxpy(2.5, f32(0x1000), f32(0x2000), 7, grid=3, block=(32, 2))
    last = fake.last()
    assert last.symbol == b"saxpy"
    assert list(last.grid) == [3, 1, 1] and list(last.block) == [32, 2, 1]
    assert last.shared == 0 and last.stream is None and last.ex == 0
    assert struct.unpack("<f", fake.param("saxpy", "a"))[0] == 2.5
    assert u64(fake.param("saxpy", "x")) == 0x1000
    assert u64(fake.param("saxpy", "y")) == 0x2000
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == 7


def test_keywords_name_the_kernels_parameters(kernels, fake):
    kernels.saxpy(n=5, y=f32(0x2000), x=f32(0x1000), a=1.0, grid=(1, 2, 3), block=64, shared=256)
    last = fake.last()
    assert list(last.grid) == [1, 2, 3] and last.shared == 256
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == 5


def test_signature_is_introspectable(kernels):
    import inspect
    params = list(inspect.signature(kernels.saxpy).parameters)
    assert params[:6] == ["a", "x", "y", "n", "grid", "block"]
    assert inspect.signature(kernels.saxpy).parameters["grid"].kind == inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("call, words", [
    (lambda k: k.saxpy(1.0, 0, 0, grid=1, block=1), ["saxpy()", "missing", "'n'", "int"]),
    (lambda k: k.saxpy(1.0, 0, 0, 4, 5, grid=1, block=1), ["saxpy()", "4 positional", "5 were given"]),
    (lambda k: k.saxpy(1.0, 0, 0, 4, grid=1, block=1, z=3), ["saxpy()", "unexpected keyword", "'z'"]),
    (lambda k: k.saxpy(1.0, 0, 0, 4, grid=1, block=1, n=3), ["saxpy()", "multiple values", "'n'"]),
    (lambda k: k.saxpy(1.0, 0, 0, 4), ["saxpy()", "grid=", "block="]),
    (lambda k: k.saxpy(1.0, 0, 0, 4, grid=(1, 2, 3, 4), block=1), ["saxpy()", "grid", "1 to 3"]),
    (lambda k: k.saxpy(1.0, 0, 0, 4, grid=1.5, block=1), ["saxpy()", "grid", "integer", "float"]),
])
def test_arity_and_keywords_are_refused_naming_the_kernel(kernels, fake, call, words):
    with pytest.raises(TypeError) as e:
        call(kernels)
    for w in words:
        assert w in str(e.value)
    assert fake.launches() == 0


def test_launch_values_out_of_range(kernels, fake):
    with pytest.raises(OverflowError, match=r"saxpy\(\): block"):
        kernels.saxpy(1.0, 0, 0, 4, grid=1, block=-1)
    with pytest.raises(OverflowError, match=r"saxpy\(\): shared"):
        kernels.saxpy(1.0, 0, 0, 4, grid=1, block=1, shared=1 << 32)


# ---- pointers ---------------------------------------------------------------------------------

def test_a_wrong_dtype_names_kernel_parameter_and_both_dtypes(kernels, fake):
    with pytest.raises(TypeError) as e:
        kernels.saxpy(1.0, i32(), f32(), 4, grid=1, block=1)
    msg = str(e.value)
    for w in ["saxpy()", "parameter x", "const float *", "float32", "int32"]:
        assert w in msg, msg
    assert fake.launches() == 0


class RaisingArray:
    """An array whose interface raises: its own exception comes through, named by the parameter."""

    @property
    def __cuda_array_interface__(self):
        raise ValueError("the buffer was released")


def test_an_arrays_own_error_is_quoted_with_the_parameter(kernels, fake):
    # Python 3.12 hands the pending exception over as an instance, older ones as a str:
    # the message is the exception's text either way, never "?" (seen with torch on the GPU).
    with pytest.raises(ValueError) as e:
        kernels.saxpy(1.0, RaisingArray(), f32(), 4, grid=1, block=1)
    assert str(e.value) == "saxpy(): parameter x (const float *): the buffer was released", str(e.value)
    assert fake.launches() == 0


def test_read_only_arrays_go_only_to_const_pointers(kernels, fake):
    kernels.saxpy(1.0, f32(readonly=True), f32(), 4, grid=1, block=1)
    with pytest.raises(ValueError, match=r"saxpy\(\): parameter y \(float \*\) is written by the kernel"):
        kernels.saxpy(1.0, f32(), f32(readonly=True), 4, grid=1, block=1)
    assert fake.launches() == 1


def test_int_addresses_and_none(kernels, fake):
    kernels.saxpy(1.0, 0xABC000, None, 1, grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == 0xABC000
    assert u64(fake.param("saxpy", "y")) == 0


@pytest.mark.parametrize("bad", ["0x1000", 1.5, object(), [1, 2]])
def test_what_is_no_pointer_is_refused(kernels, fake, bad):
    with pytest.raises(TypeError, match=r"saxpy\(\): parameter x \(const float \*\) needs a device array"):
        kernels.saxpy(1.0, bad, 0, 1, grid=1, block=1)


def test_a_pointer_is_read_on_every_call_never_cached(kernels, fake):
    for ptr in (0x1000, 0x2000, 0x3000):
        kernels.saxpy(1.0, f32(ptr), f32(ptr + 8), 1, grid=1, block=1)
        assert u64(fake.param("saxpy", "x")) == ptr


def test_void_pointers_take_any_dtype(kernels, fake):
    kernels.untyped(i32(0x100), DevArray(0x200, np.float64, readonly=True), 3, grid=1, block=1)
    assert u64(fake.param("untyped", "p")) == 0x100 and u64(fake.param("untyped", "q")) == 0x200
    with pytest.raises(ValueError, match="untyped"):
        kernels.untyped(i32(readonly=True), 0, 3, grid=1, block=1)


def test_half_arrays(kernels, fake):
    kernels.halves(1.5, (1, 2, 3, 4.5), DevArray(0x300, np.float16), f32(), grid=1, block=1)
    assert fake.param("halves", "h") == np.float16(1.5).tobytes()
    assert fake.param("halves", "v") == np.array([1, 2, 3, 4.5], np.float32).tobytes()
    with pytest.raises(TypeError, match=r"parameter hp .*float16.*float32"):
        kernels.halves(1.5, (1, 2, 3, 4), f32(), f32(), grid=1, block=1)
    with pytest.raises(TypeError, match=r"parameter v .*4 components"):
        kernels.halves(1.5, (1, 2, 3), DevArray(0x300, np.float16), f32(), grid=1, block=1)


# ---- fast paths: CuPy arrays, torch tensors, cuda.core Buffers (stand-ins) ----------------------

@pytest.fixture(scope="module")
def array_libs():
    """Modules named cupy, torch and cuda.core.experimental whose classes look like theirs."""
    cupy = types.ModuleType("cupy")

    class MemoryPointer:
        def __init__(self, ptr):
            self.ptr = ptr

    class ndarray:
        def __init__(self, ptr, dtype):
            self.data = MemoryPointer(ptr)
            self.dtype = np.dtype(dtype)

    cupy.ndarray = ndarray
    torch = types.ModuleType("torch")
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        setattr(torch, name, type("dtype", (), {"__repr__": lambda self, n=name: "torch." + n})())

    class Tensor:
        def __init__(self, ptr, dtype, is_cuda=True):
            self._ptr, self.dtype, self.is_cuda = ptr, dtype, is_cuda

        def data_ptr(self):
            return self._ptr

    torch.Tensor = Tensor
    core = types.ModuleType("cuda.core.experimental")

    class Buffer:
        def __init__(self, handle):
            self.handle = handle

    core.Buffer = Buffer
    saved = {k: sys.modules.get(k) for k in ("cupy", "torch", "cuda.core.experimental")}
    sys.modules.update({"cupy": cupy, "torch": torch, "cuda.core.experimental": core})
    yield cupy, torch, core
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def test_cupy_arrays_read_directly(kernels, fake, array_libs):
    cupy, _, _ = array_libs
    kernels.saxpy(1.0, cupy.ndarray(0x4000, "float32"), cupy.ndarray(0x5000, "float32"), 1, grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == 0x4000 and u64(fake.param("saxpy", "y")) == 0x5000
    with pytest.raises(TypeError, match=r"parameter x .*float32, not a CuPy array of float64"):
        kernels.saxpy(1.0, cupy.ndarray(0x4000, "float64"), 0, 1, grid=1, block=1)


def test_torch_tensors_read_directly(kernels, fake, array_libs):
    _, torch, _ = array_libs
    kernels.saxpy(1.0, torch.Tensor(0x6000, torch.float32), torch.Tensor(0x7000, torch.float32), 1,
                  grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == 0x6000 and u64(fake.param("saxpy", "y")) == 0x7000
    with pytest.raises(TypeError, match=r"parameter y .*float32, not a torch tensor of int32"):
        kernels.saxpy(1.0, 0, torch.Tensor(0x7000, torch.int32), 1, grid=1, block=1)
    with pytest.raises(ValueError, match=r"parameter x .*not on a CUDA device"):
        kernels.saxpy(1.0, torch.Tensor(0x6000, torch.float32, is_cuda=False), 0, 1, grid=1, block=1)


def test_cuda_core_buffers_are_untyped_addresses(kernels, fake, array_libs):
    _, _, core = array_libs
    kernels.saxpy(1.0, core.Buffer(0x8000), core.Buffer(0x9000), 1, grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == 0x8000 and u64(fake.param("saxpy", "y")) == 0x9000


class CUdeviceptr:
    """cuda.bindings' handle type as a Buffer's .handle may be: an int through __int__ alone."""

    def __init__(self, v):
        self.v = v

    def __int__(self):
        return self.v


def test_a_buffers_handle_may_be_an_int_through_int_alone(kernels, fake, array_libs):
    _, _, core = array_libs
    kernels.saxpy(1.0, core.Buffer(CUdeviceptr(0x8000)), core.Buffer(CUdeviceptr(0x9000)), 1, grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == 0x8000 and u64(fake.param("saxpy", "y")) == 0x9000


def transient_bytes(launch):
    """Bytes the Python allocator handed out and took back during launch() (tracemalloc's peak over
    what is still held): an object made and dropped on the way, such as an exception."""
    import tracemalloc
    launch()                       # types found, dtypes seen, keyword slots kept, the image loaded
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        launch()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - current


def test_a_launch_makes_no_python_object_on_its_way(kernels, fake, array_libs):
    """The class, not the example: each argument kind's fast path (an address, None, a Buffer whose
    handle converts through __int__, a CuPy array, a torch tensor, grid and block as ints and
    tuples, the launch keywords in any order, an int or no stream) makes and drops no Python
    object; no exception is raised and cleared on the way."""
    cupy, torch, core = array_libs
    cx, tx = cupy.ndarray(0x4000, "float32"), torch.Tensor(0x6000, torch.float32)
    bx, by = core.Buffer(CUdeviceptr(0x8000)), core.Buffer(CUdeviceptr(0x9000))
    calls = {
        "addresses": lambda: kernels.saxpy(1.5, 0x1000, 0x2000, 7, grid=1, block=32),
        "none": lambda: kernels.saxpy(1.5, None, None, 7, grid=1, block=32, stream=None),
        "buffers": lambda: kernels.saxpy(1.5, bx, by, 7, grid=1, block=32),
        "cupy": lambda: kernels.saxpy(1.5, cx, 0, 7, grid=1, block=32, stream=0x66),
        "torch": lambda: kernels.saxpy(1.5, tx, 0, 7, grid=1, block=32),
        "tuples": lambda: kernels.saxpy(1.5, 0, 0, 7, block=(32, 2), grid=(1, 2, 3), shared=64),
        "keywords": lambda: kernels.saxpy(n=7, y=0, x=0, a=2.0, grid=1, block=1),
    }
    made = {name: transient_bytes(call) for name, call in calls.items()}
    assert made == {name: 0 for name in calls}


def call_with_kwnames(f, args, kwnames):
    """f called through PyObject_Vectorcall: the positional args, then one value per name of the
    kwnames tuple given, the very same tuple object every time (as a call site passes its own)."""
    import ctypes
    vc = ctypes.pythonapi.PyObject_Vectorcall
    vc.restype = ctypes.py_object
    vc.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_size_t, ctypes.py_object]
    objs = list(args)
    arr = (ctypes.c_void_p * max(len(objs), 1))(*[id(o) for o in objs])
    return vc(f, arr, len(objs) - len(kwnames), kwnames)


def test_keyword_slots_follow_each_calls_names_and_positional_count(kernels, fake):
    names = tuple(["n", "grid", "block"])
    call_with_kwnames(kernels.saxpy, (1.0, 0x10, 0x20, 5, 1, 1), names)
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == 5 and u64(fake.param("saxpy", "y")) == 0x20
    call_with_kwnames(kernels.saxpy, (3.0, 0x30, 0x40, 6, 2, 4), names)    # the same tuple again
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == 6 and list(fake.last().grid) == [2, 1, 1]
    assert list(fake.last().block) == [4, 1, 1] and u64(fake.param("saxpy", "x")) == 0x30
    # the same names after one positional more: n twice, refused as any such call is
    with pytest.raises(TypeError, match=r"saxpy\(\) got multiple values for argument 'n'"):
        call_with_kwnames(kernels.saxpy, (1.0, 0x10, 0x20, 5, 5, 1, 1), names)
    # one fewer: y missing
    with pytest.raises(TypeError, match=r"saxpy\(\) missing argument 'y'"):
        call_with_kwnames(kernels.saxpy, (1.0, 0x10, 5, 1, 1), names)
    call_with_kwnames(kernels.saxpy, (1.0, 0x10, 0x20, 8, 1, 1), names)    # and good again
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == 8


def test_each_call_site_keeps_its_own_keyword_order(kernels, fake):
    for i in range(3):
        kernels.saxpy(1.0, 0, 0, 1, grid=2 + i, block=32)
        assert list(fake.last().grid) == [2 + i, 1, 1] and list(fake.last().block) == [32, 1, 1]
        kernels.saxpy(1.0, 0, 0, 1, block=2 + i, grid=32)
        assert list(fake.last().grid) == [32, 1, 1] and list(fake.last().block) == [2 + i, 1, 1]
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'grd'"):
            kernels.saxpy(1.0, 0, 0, 1, grd=1, block=1)


# ---- scalars at their exact widths ----------------------------------------------------------------

WIDTHS = dict(i8=-128, u8=255, i16=-32768, u16=65535, i32=-2 ** 31, u32=2 ** 32 - 1, i64=-2 ** 63,
              u64=2 ** 64 - 1, d=0.5, b=True, m=200)


def test_every_width_at_its_limits(kernels, fake):
    kernels.widths(**WIDTHS, out=0, grid=1, block=1)
    got = {n: fake.param("widths", n) for n in WIDTHS}
    assert struct.unpack("<b", got["i8"])[0] == -128 and got["u8"] == b"\xff"
    assert struct.unpack("<h", got["i16"])[0] == -32768 and struct.unpack("<H", got["u16"])[0] == 65535
    assert struct.unpack("<i", got["i32"])[0] == -2 ** 31 and struct.unpack("<I", got["u32"])[0] == 2 ** 32 - 1
    assert struct.unpack("<q", got["i64"])[0] == -2 ** 63 and u64(got["u64"]) == 2 ** 64 - 1
    assert struct.unpack("<d", got["d"])[0] == 0.5 and got["b"] == b"\x01" and got["m"] == b"\xc8"


@pytest.mark.parametrize("name, value", [
    ("i8", 128), ("i8", -129), ("u8", 256), ("u8", -1), ("i16", 32768), ("u16", 65536), ("i32", 2 ** 31),
    ("u32", 2 ** 32), ("u32", -1), ("i64", 2 ** 63), ("u64", 2 ** 64), ("u64", -1), ("b", 2), ("m", 256),
])
def test_out_of_range_is_an_overflow_error_not_a_wrap(kernels, fake, name, value):
    args = dict(WIDTHS, **{name: value})
    with pytest.raises(OverflowError) as e:
        kernels.widths(**args, out=0, grid=1, block=1)
    assert "widths(): parameter %s" % name in str(e.value) and str(value) in str(e.value)
    assert fake.launches() == 0


def test_a_float_for_an_integer_is_refused(kernels, fake):
    with pytest.raises(TypeError, match=r"saxpy\(\): parameter n \(int\) needs an integer, not float"):
        kernels.saxpy(1.0, 0, 0, 4.0, grid=1, block=1)
    with pytest.raises(TypeError, match=r"saxpy\(\): parameter a \(float\) needs a number, not str"):
        kernels.saxpy("1", 0, 0, 4, grid=1, block=1)


def test_numpy_scalars_and_enums_convert(kernels, fake):
    args = dict(WIDTHS, i8=np.int8(-5), u64=np.uint64(7), d=np.float32(0.25), m=kernels.Mode.Exact)
    kernels.widths(**args, out=0, grid=1, block=1)
    assert fake.param("widths", "i8") == b"\xfb" and u64(fake.param("widths", "u64")) == 7
    assert fake.param("widths", "m") == b"\x02"
    assert kernels.Mode.Careful == 200 and kernels.Mode.Careful.name == "Careful"


def test_a_float_past_float32_is_an_overflow_error(kernels, fake):
    # the largest value said as a number (PyErr_Format has no %g: Python 3.12 raised SystemError)
    with pytest.raises(OverflowError, match=r"saxpy\(\): parameter a \(float\): 1e\+39 is out of range "
                                            r"\(largest 3\.40282e\+38\)"):
        kernels.saxpy(1e39, 0, 0, 1, grid=1, block=1)
    kernels.saxpy(float("inf"), 0, 0, 1, grid=1, block=1)   # not finite: as the user wrote it
    assert struct.unpack("<f", fake.param("saxpy", "a"))[0] == float("inf")


# ---- structs by value ---------------------------------------------------------------------------

def test_a_struct_class_packs_the_devices_layout(kernels, fake):
    p = kernels.Params(scale=1.5, count=3, bias=-2.0, tag=ord("x"))
    assert bytes(p) == struct.pack("<fid c7x", 1.5, 3, -2.0, b"x")
    kernels.scale_params(p, f32(), grid=1, block=32)
    assert fake.param("scale_params", "p") == bytes(p)
    assert p.scale == 1.5 and p.count == 3 and p.tag == ord("x")
    assert repr(p) == "Params(scale=1.5, count=3, bias=-2.0, tag=120)"
    assert kernels.Params(1.5, 3, -2.0, 120) == p


def test_struct_fields_are_checked_like_parameters(kernels):
    with pytest.raises(OverflowError, match=r"Params\.count \(int32_t\)|Params\.count"):
        kernels.Params(count=2 ** 31)
    with pytest.raises(TypeError, match=r"Params\(\) has no field 'nope'"):
        kernels.Params(nope=1)
    p = kernels.Params()
    with pytest.raises(TypeError, match=r"Params\.scale"):
        p.scale = "big"


def test_a_numpy_structured_scalar_of_the_generated_dtype(kernels, fake):
    dt = kernels.Params.dtype()
    assert dt.itemsize == 24 and dt.names == ("scale", "count", "bias", "tag")
    assert [dt.fields[n][1] for n in dt.names] == [0, 4, 8, 16]
    a = np.zeros((), dt)
    a["scale"], a["count"], a["bias"] = 2.0, 9, 1.0
    kernels.scale_params(a[()], f32(), grid=1, block=1)
    assert fake.param("scale_params", "p") == bytes(kernels.Params(2.0, 9, 1.0, 0))
    other = np.zeros((), np.dtype([("x", "<f8"), ("y", "<f8"), ("z", "<f8")]))
    with pytest.raises(TypeError, match=r"scale_params\(\): parameter p .*Params\.dtype\(\)"):
        kernels.scale_params(other[()], f32(), grid=1, block=1)


def test_struct_bytes_must_be_exactly_its_size(kernels, fake):
    kernels.scale_params(bytes(24), f32(), grid=1, block=1)
    with pytest.raises(TypeError, match=r"scale_params\(\): parameter p .*24 bytes, not a buffer of 23"):
        kernels.scale_params(bytes(23), f32(), grid=1, block=1)
    with pytest.raises(TypeError, match=r"parameter p .*needs a Params"):
        kernels.scale_params(3, f32(), grid=1, block=1)


def test_nested_structs_arrays_enums_and_pointers_inside(kernels, fake):
    n = kernels.Nested(p=kernels.Params(scale=1.0, count=2), v=(1, 2, 3), mode=kernels.Mode.Exact, buf=0x5000)
    assert n.v == (1.0, 2.0, 3.0) and n.p.count == 2 and n.mode == 2 and n.buf == 0x5000
    kernels.nested(n, DevArray(0x10, np.float64, readonly=True), DevArray(0x20, np.float64), grid=1, block=1)
    b = fake.param("nested", "n")
    assert b[:24] == bytes(kernels.Params(scale=1.0, count=2))
    assert b[24:36] == np.array([1, 2, 3], np.float32).tobytes() and b[36] == 2
    assert u64(b[40:48]) == 0x5000
    with pytest.raises(TypeError, match=r"Nested\.v"):
        n.v = (1, 2)
    assert kernels.Nested.dtype().itemsize == 48


def test_a_python_keyword_as_a_parameter_gets_an_underscore(kernels, fake):
    import inspect
    assert "in_" in inspect.signature(kernels.nested).parameters
    kernels.nested(kernels.Nested(), in_=DevArray(0x10, np.float64), out=0, grid=1, block=1)
    assert u64(fake.param("nested", "in")) == 0x10


# ---- one name over a template's instances ----------------------------------------------------------

def test_the_arrays_dtype_picks_the_instance(kernels, fake):
    kernels.fill(f32(0x100), 1.5, 10, grid=1, block=32)
    assert fake.last().symbol == b"_Z4fillIfEvPT_S0_j"
    kernels.fill(i32(0x200), 3, 10, grid=1, block=32)
    assert fake.last().symbol == b"_Z4fillIiEvPT_S0_j"
    assert struct.unpack("<i", fake.param("fill_int", "value"))[0] == 3
    with pytest.raises(TypeError, match=r"fill\(\): no instance takes arrays of these dtypes.*fill_float.*fill_int"):
        kernels.fill(DevArray(0x300, np.int64), 3, 10, grid=1, block=32)


# ---- launch configuration --------------------------------------------------------------------------

class Stream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_streams(kernels, fake):
    kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=Stream(0x77))
    assert fake.last().stream == 0x77
    kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=0x66)
    assert fake.last().stream == 0x66
    kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=None)
    assert fake.last().stream is None
    with pytest.raises(TypeError, match=r"saxpy\(\): stream="):
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream="s")


class TorchLikeStream:
    def __init__(self, handle):
        self.cuda_stream = handle


class CupyLikeStream:
    def __init__(self, handle):
        self.ptr = handle


def test_streams_of_each_kind_are_read_every_call(kernels, fake):
    for make in (Stream, TorchLikeStream, CupyLikeStream):
        for handle in (0x100, 0x200):
            kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=make(handle))
            assert fake.last().stream == handle, make.__name__


def test_torch_and_cupy_streams_are_read_through_their_own_handle(kernels, fake):
    """A torch or CuPy stream type gives its handle through .cuda_stream / .ptr, read every
    call; its __cuda_stream__ (a method building a tuple) is not called."""
    torch_c = types.ModuleType("torch._C")
    cupy_stream = types.ModuleType("cupy.cuda.stream")

    class _CudaStreamBase:
        def __init__(self, handle):
            self.cuda_stream = handle

        def __cuda_stream__(self):
            raise AssertionError("__cuda_stream__ called for a torch stream")

    class _BaseStream:                  # CuPy 14's name
        def __init__(self, handle):
            self.ptr = handle

        def __cuda_stream__(self):
            raise AssertionError("__cuda_stream__ called for a CuPy stream")

    class TorchStream(_CudaStreamBase):
        pass

    class CupyStream(_BaseStream):
        pass

    torch_c._CudaStreamBase = _CudaStreamBase
    cupy_stream._BaseStream = _BaseStream
    saved = {k: sys.modules.get(k) for k in ("torch._C", "cupy.cuda.stream")}
    sys.modules.update({"torch._C": torch_c, "cupy.cuda.stream": cupy_stream})
    try:
        for make in (TorchStream, CupyStream, TorchStream):
            s = make(0x100)
            for handle in (0x100, 0x200):
                if make is TorchStream:
                    s.cuda_stream = handle
                else:
                    s.ptr = handle
                kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=s)
                assert fake.last().stream == handle, make.__name__
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def test_a_negative_address_is_refused(kernels, fake):
    with pytest.raises(OverflowError, match=r"saxpy\(\): parameter x"):
        kernels.saxpy(1.0, -1, 0, 1, grid=1, block=1)


def test_launch_attributes(kernels, fake):
    kernels.saxpy(1.0, 0, 0, 1, grid=2, block=1, cluster=(2, 1, 1), priority=-1)
    last = fake.last()
    assert last.ex == 1 and list(last.cluster) == [2, 1, 1] and last.has_priority and last.priority == -1


# ---- the common path (read inline) and the whole way agree at every edge ---------------------------
# An exact int, a float, an int address, grid/block as ints or tuples of ints, shared= and an int
# stream handle are read inline; anything else (a subclass, a bool, a value past the inline range)
# goes the whole way. The class of values on both sides of each edge: Python's small ints (30 bits),
# the parameter's width, 2**63 and 2**64.

class IntSub(int):
    pass


SMALL_EDGES = [0, 1, -1, 2 ** 30 - 1, 2 ** 30, -(2 ** 30 - 1), -2 ** 30, -2 ** 30 - 1]


@pytest.mark.parametrize("v", SMALL_EDGES + [2 ** 31 - 1, -2 ** 31, IntSub(7), IntSub(-2 ** 31), True, False])
def test_an_int_parameter_at_each_edge(kernels, fake, v):
    kernels.saxpy(1.0, 0, 0, v, grid=1, block=1)
    assert struct.unpack("<i", fake.param("saxpy", "n"))[0] == int(v)


@pytest.mark.parametrize("v", [2 ** 31, -2 ** 31 - 1, 2 ** 63, -2 ** 63 - 1, 2 ** 64, IntSub(2 ** 31)])
def test_an_int_parameter_past_its_width(kernels, fake, v):
    msg = r"saxpy\(\): parameter n \(int\): %d is out of range \(-2147483648 to 2147483647\)" % v
    with pytest.raises(OverflowError, match=msg):
        kernels.saxpy(1.0, 0, 0, v, grid=1, block=1)
    assert fake.launches() == 0


@pytest.mark.parametrize("name, fmt, good, bad", [
    ("i64", "<q", [-2 ** 63, 2 ** 63 - 1, -2 ** 30 - 1, IntSub(-5)], [2 ** 63, -2 ** 63 - 1]),
    ("u64", "<Q", [0, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, IntSub(2 ** 63)], [-1, 2 ** 64, -2 ** 30]),
    ("u32", "<I", [0, 2 ** 30, 2 ** 32 - 1, True], [-1, 2 ** 32, -2 ** 63]),
    ("i8", "<b", [-128, 127], [128, -129, 2 ** 30]),
    ("u8", "<B", [0, 255], [-1, 256]),
])
def test_each_width_on_both_sides_of_each_edge(kernels, fake, name, fmt, good, bad):
    for v in good:
        kernels.widths(**dict(WIDTHS, **{name: v}), out=0, grid=1, block=1)
        assert struct.unpack(fmt, fake.param("widths", name))[0] == int(v)
    for v in bad:
        with pytest.raises(OverflowError, match=r"widths\(\): parameter %s .*%d is out of range" % (name, v)):
            kernels.widths(**dict(WIDTHS, **{name: v}), out=0, grid=1, block=1)


@pytest.mark.parametrize("a", [0, 2 ** 30, 0x7F3A12340000, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, IntSub(0x1000), True])
def test_an_int_address_at_each_edge(kernels, fake, a):
    kernels.saxpy(1.0, a, 0, 1, grid=1, block=1)
    assert u64(fake.param("saxpy", "x")) == int(a)


@pytest.mark.parametrize("a", [-1, -2 ** 63, 2 ** 64, IntSub(-1)])
def test_an_int_address_out_of_range(kernels, fake, a):
    with pytest.raises(OverflowError, match=r"saxpy\(\): parameter x \(const float \*\): "):
        kernels.saxpy(1.0, a, 0, 1, grid=1, block=1)
    assert fake.launches() == 0


def test_a_float_parameter_at_float32s_edge(kernels, fake):
    fmax = 3.4028234663852886e38
    above = float(np.nextafter(fmax, np.inf))            # past FLT_MAX: the whole way, still rounds to it
    for v, want in [(fmax, fmax), (-fmax, -fmax), (0.0, 0.0), (-0.0, -0.0), (5e-324, 0.0), (float("-inf"), float("-inf")),
                    (float("inf"), float("inf")), (above, fmax), (-above, -fmax)]:
        kernels.saxpy(v, 0, 0, 1, grid=1, block=1)
        got = struct.unpack("<f", fake.param("saxpy", "a"))[0]
        assert got == want and np.signbit(got) == np.signbit(want)
    kernels.saxpy(float("nan"), 0, 0, 1, grid=1, block=1)
    assert np.isnan(struct.unpack("<f", fake.param("saxpy", "a"))[0])
    kernels.saxpy(IntSub(3), 0, 0, 1, grid=1, block=1)
    assert struct.unpack("<f", fake.param("saxpy", "a"))[0] == 3.0


Dims = __import__("collections").namedtuple("Dims", "x y z")


@pytest.mark.parametrize("g, want", [
    (1, [1, 1, 1]), (2 ** 30 - 1, [2 ** 30 - 1, 1, 1]), (2 ** 30, [2 ** 30, 1, 1]), (2 ** 31 - 1, [2 ** 31 - 1, 1, 1]),
    ((5,), [5, 1, 1]), ((2, 3), [2, 3, 1]), ((2, 3, 4), [2, 3, 4]), ((2 ** 31 - 1, 65535, 1), [2 ** 31 - 1, 65535, 1]),
    (IntSub(6), [6, 1, 1]), (True, [1, 1, 1]), ((IntSub(2), True, np.int32(3)), [2, 1, 3]),
    (Dims(4, 5, 6), [4, 5, 6]), (np.uint16(9), [9, 1, 1]),
])
def test_grid_as_ints_and_tuples(kernels, fake, g, want):
    kernels.saxpy(1.0, 0, 0, 1, grid=g, block=1)
    assert list(fake.last().grid) == want and list(fake.last().block) == [1, 1, 1]


@pytest.mark.parametrize("b, want", [
    (32, [32, 1, 1]), ((32,), [32, 1, 1]), ((8, 4), [8, 4, 1]), ((4, 4, 2), [4, 4, 2]), (IntSub(16), [16, 1, 1]),
    ((True, 2), [1, 2, 1]), (Dims(2, 2, 2), [2, 2, 2]),
])
def test_block_as_ints_and_tuples(kernels, fake, b, want):
    kernels.saxpy(1.0, 0, 0, 1, grid=3, block=b)
    assert list(fake.last().grid) == [3, 1, 1] and list(fake.last().block) == want


def test_the_largest_grid_and_shared_pass_to_the_runtime(kernels, fake):
    """2**32 - 1 is converted (the runtime then refuses it against the device); 2**32 is not."""
    for kw in (dict(grid=2 ** 32 - 1), dict(grid=(1, 2 ** 32 - 1)), dict(shared=2 ** 32 - 1)):
        with pytest.raises(Exception) as e:
            kernels.saxpy(1.0, 0, 0, 1, **dict(dict(grid=1, block=1), **kw))
        assert type(e.value).__name__ == "InvalidConfigError"


@pytest.mark.parametrize("g, exc, words", [
    (2 ** 32, OverflowError, "grid is out of range (0 to 4294967295)"),
    (-1, OverflowError, "grid is out of range (0 to 4294967295)"),
    (2 ** 64, OverflowError, "grid is out of range"),
    ((1, -1), OverflowError, "grid is out of range"),
    ((1, 2 ** 40), OverflowError, "grid is out of range"),
    ((), TypeError, "grid needs an int or a tuple of 1 to 3 ints, not 0"),
    ((1, 2, 3, 4), TypeError, "grid needs an int or a tuple of 1 to 3 ints, not 4"),
    ([1, 2], TypeError, "grid needs an integer, not list"),
    ((1, 2.0), TypeError, "grid needs an integer, not float"),
])
def test_grid_refusals_are_the_same_either_way(kernels, fake, g, exc, words):
    with pytest.raises(exc) as e:
        kernels.saxpy(1.0, 0, 0, 1, grid=g, block=1)
    assert "saxpy(): " + words in str(e.value)
    assert fake.launches() == 0


def test_shared_and_an_int_stream_at_their_edges(kernels, fake):
    for sh in [0, 1024, 2 ** 14, IntSub(8), True]:
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, shared=sh)
        assert fake.last().shared == int(sh)
    for sh in [-1, 2 ** 32]:
        with pytest.raises(OverflowError, match=r"saxpy\(\): shared is out of range"):
            kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, shared=sh)
    for h in [1, 2 ** 30, 0x55D012345678, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, IntSub(0x99)]:
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=h)
        assert fake.last().stream == int(h)
    kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=0)
    assert not fake.last().stream
    for h in [-1, 2 ** 64]:
        with pytest.raises(OverflowError):
            kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, stream=h)


def test_more_keywords_than_the_kept_slots_are_sorted_every_call(kernels, fake):
    names16 = tuple(WIDTHS) + ("out", "grid", "block", "shared", "stream")      # 16: slots kept
    names17 = names16 + ("cluster",)                                            # 17: sorted each time
    assert len(names16) == 16
    for names in (names16, names17):
        for i in range(3):
            vals = dict(WIDTHS, i32=-i, u8=i, out=0x1000 + i, grid=(i + 1, 2), block=i + 3, shared=i,
                        stream=0x66 + i, cluster=None)
            call_with_kwnames(kernels.widths, tuple(vals[n] for n in names), names)
            last = fake.last()
            assert struct.unpack("<i", fake.param("widths", "i32"))[0] == -i
            assert fake.param("widths", "u8") == bytes([i]) and u64(fake.param("widths", "out")) == 0x1000 + i
            assert list(last.grid) == [i + 1, 2, 1] and list(last.block) == [i + 3, 1, 1]
            assert last.shared == i and last.stream == 0x66 + i


def test_a_launch_attribute_given_as_its_default_takes_the_whole_way(kernels, fake):
    kernels.saxpy(1.0, 0, 0, 1, grid=2, block=3, stream=0x66, cooperative=False, pdl=False, cluster=None,
                  priority=None)
    last = fake.last()
    assert list(last.grid) == [2, 1, 1] and last.stream == 0x66 and not last.cooperative and not last.pdl


# ---- device variables -----------------------------------------------------------------------------

def test_a_scalar_variable(kernels, fake):
    kernels.g_scale.set(2.5)
    assert fake.global_bytes("g_scale", 4) == struct.pack("<f", 2.5)
    assert kernels.g_scale.get() == 2.5
    assert kernels.g_scale.count == 1 and kernels.g_scale.ctype == "float" and kernels.g_scale.address != 0
    with pytest.raises(TypeError, match="variable g_scale"):
        kernels.g_scale.set("x")


def test_an_array_variable(kernels, fake):
    kernels.c_table.set(range(8))
    assert fake.global_bytes("c_table", 32) == np.arange(8, dtype=np.float32).tobytes()
    kernels.c_table.write(2, [9, 9])
    assert kernels.c_table.get() == [0, 1, 9, 9, 4, 5, 6, 7]
    assert kernels.c_table.read(6, 2) == [6, 7]
    with pytest.raises(ValueError, match="variable c_table: 8 elements wanted, 3 given"):
        kernels.c_table.set([1, 2, 3])
    with pytest.raises(IndexError, match="variable c_table has 8 elements"):
        kernels.c_table.write(7, [1, 2])
    with pytest.raises(OverflowError, match="variable c_table"):
        kernels.c_table.write(0, [1e300])


def test_a_struct_variable(kernels, fake):
    p = kernels.Params(scale=3.0, count=4, bias=0.5, tag=1)
    kernels.g_params.set(p)
    assert fake.global_bytes("g_params", 24) == bytes(p)
    assert kernels.g_params.get() == p


# ---- errors ----------------------------------------------------------------------------------------

CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_INVALID_VALUE = 1


def test_a_driver_failure_is_a_kstub_error_with_the_c_apis_detail(kernels, fake):
    fake.fail("cuLaunchKernel", CUDA_ERROR_INVALID_VALUE)
    with pytest.raises(kernels.KstubError) as e:
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1)
    err = e.value
    assert isinstance(err, RuntimeError)
    assert err.status_name.startswith("KS_ERR_") and err.status > 0
    assert type(err).__name__.endswith("Error") and type(err) is not kernels.KstubError
    assert err.call == "cuLaunchKernel" and err.cu_name == "CUDA_ERROR_INVALID_VALUE"
    assert "saxpy" in str(err)


def test_the_sticky_fault_message_is_kept(kernels, fake):
    fake.fail("cuLaunchKernel", CUDA_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(kernels.KstubError) as e:
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1)
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in str(e.value) and e.value.cu_result == CUDA_ERROR_ILLEGAL_ADDRESS


def test_error_classes_map_ks_status_and_are_shared(kernels):
    errors = sys.modules["_kstub_errors"]
    assert kernels.KstubError is errors.KstubError
    assert issubclass(kernels.LaunchError, kernels.KstubError)
    assert issubclass(kernels.AbiMismatchError, kernels.KstubError)
    assert kernels.NoDriverError is errors.NoDriverError


def test_an_abi_mismatch_is_refused_at_load(kernels, fake):
    import ctypes
    o = (ctypes.c_size_t * 3)(0, 8, 16)
    s = (ctypes.c_size_t * 3)(4, 8, 8)          # one parameter short: not saxpy's layout
    fake.lib.fake_cuda_set_params(b"saxpy", 3, o, s)
    with pytest.raises(kernels.AbiMismatchError) as e:
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1)
    assert e.value.status_name == "KS_ERR_ABI_MISMATCH"


# ---- docs/python.md quotes these messages: each must be what the module says -------------------------

def test_the_messages_docs_python_md_quotes(kernels, fake):
    import os
    docs = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")).read()
    calls = [
        lambda: kernels.saxpy(1.0, DevArray(0x1000, np.int32), f32(), 4, grid=1, block=32),
        lambda: kernels.saxpy(1.0, f32(), f32(), 2 ** 31, grid=1, block=32),
        lambda: kernels.saxpy(1.0, f32(), f32(), 4.0, grid=1, block=32),
        lambda: kernels.fill(DevArray(0x1000, np.int64), 3, 4, grid=1, block=32),
    ]
    for call in calls:
        with pytest.raises(Exception) as e:
            call()
        line = "%s: %s" % (type(e.value).__name__, e.value)
        assert line in docs, line
    for words in ("saxpy() missing argument 'n'\n(int)", "saxpy() got an unexpected keyword argument 'nn'"):
        assert words in docs
    with pytest.raises(TypeError, match=r"saxpy\(\) missing argument 'n' \(int\)"):
        kernels.saxpy(1.0, 0, 0, grid=1, block=1)
    with pytest.raises(TypeError, match=r"saxpy\(\) got an unexpected keyword argument 'nn'"):
        kernels.saxpy(1.0, 0, 0, 1, grid=1, block=1, nn=3)
