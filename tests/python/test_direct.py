# test_direct.py — the known array types' attributes read through their C
# descriptors (kstub_python.h: a getset's get, a member's slot, a METH_NOARGS
# method's ml_meth), with the test double array_double.c: C types that read as
# torch's and CuPy's do, registered as sys.modules["torch"] and ["cupy"]. Run
# in a pytest process of its own (check-python.sh): the module keeps the first
# torch.Tensor it finds, and test_kernels.py's stand-ins are Python classes.
#
# Each read must give what PyObject_GetAttr gives, on every call: a type
# changed after it was verified (an attribute assigned, a subclass that
# overrides, an instance's own attribute) is read as Python reads it.
import struct
import sys
import types

import numpy as np
import pytest

import array_double as ad


def u64(b):
    return struct.unpack("<Q", b)[0]


@pytest.fixture(scope="module")
def libs():
    """torch.Tensor and cupy.ndarray as Python classes over the double's C types, as torch's
    Tensor is a Python class over torch._C.TensorBase."""
    torch = types.ModuleType("torch")
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        setattr(torch, name, type("dtype", (), {"__repr__": lambda self, n=name: "torch." + n})())

    class Tensor(ad.TensorBase):
        pass

    torch.Tensor = Tensor
    cupy = types.ModuleType("cupy")

    class ndarray(ad.ndarray_base):
        pass

    cupy.ndarray = ndarray
    saved = {k: sys.modules.get(k) for k in ("torch", "cupy")}
    sys.modules.update({"torch": torch, "cupy": cupy})
    yield torch, cupy
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def launch(kernels, fake, x, y=0):
    """saxpy with x and y; the addresses it passed, and how many times the double's types were
    asked for an attribute through tp_getattro (0: every read was direct)."""
    before = ad.getattr_calls()
    kernels.saxpy(1.0, x, y, 1, grid=1, block=1)
    asked = ad.getattr_calls() - before
    return u64(fake.param("saxpy", "x")), u64(fake.param("saxpy", "y")), asked


def refusal(kernels, x):
    """The exception saxpy raises for x, as (type, text)."""
    with pytest.raises(Exception) as e:
        kernels.saxpy(1.0, x, 0, 1, grid=1, block=1)
    return type(e.value), str(e.value)


def f32_array(cupy, ptr, dtype="float32", mem=ad.MemoryPointer):
    return cupy.ndarray(mem(ptr), np.dtype(dtype))


# ---- the direct reads and the general path agree ------------------------------------------------

def test_known_types_are_read_through_their_c_descriptors(kernels, fake, libs):
    torch, cupy = libs
    t, a = torch.Tensor(0x6000, torch.float32), f32_array(cupy, 0x4000)
    assert launch(kernels, fake, t, a) == (0x6000, 0x4000, 0)
    assert launch(kernels, fake, t, a) == (0x6000, 0x4000, 0)      # verified once, read each call
    t2 = torch.Tensor(0x6100, torch.float32)                         # no pointer kept across calls
    assert launch(kernels, fake, t2, f32_array(cupy, 0x4100)) == (0x6100, 0x4100, 0)


def generic_twins(torch, cupy):
    """Subclasses that read the same C getters through Python properties and methods: the
    general path (PyObject_GetAttr) over the very same values."""
    class TensorViaPython(torch.Tensor):
        is_cuda = property(lambda self: ad.TensorBase.is_cuda.__get__(self))
        dtype = property(lambda self: ad.TensorBase.dtype.__get__(self))

        def data_ptr(self):
            return ad.TensorBase.data_ptr(self)

    class ArrayViaPython(cupy.ndarray):
        data = property(lambda self: ad.ndarray_base.data.__get__(self))
        dtype = property(lambda self: ad.ndarray_base.dtype.__get__(self))

    class MemViaPython(ad.MemoryPointer):
        ptr = property(lambda self: ad.MemoryPointer.ptr.__get__(self))

    return TensorViaPython, ArrayViaPython, MemViaPython


def test_direct_and_general_reads_give_the_same(kernels, fake, libs):
    torch, cupy = libs
    TensorViaPython, ArrayViaPython, MemViaPython = generic_twins(torch, cupy)
    direct = launch(kernels, fake, torch.Tensor(0x6000, torch.float32), f32_array(cupy, 0x4000))
    general = launch(kernels, fake, TensorViaPython(0x6000, torch.float32),
                     ArrayViaPython(MemViaPython(0x4000), np.dtype("float32")))
    assert direct[:2] == general[:2] == (0x6000, 0x4000)
    assert direct[2] == 0 and general[2] > 0
    # every refusal and every failing getter: the same exception and text both ways
    cases = [
        (lambda T: T(0x6000, torch.int32), TypeError,
         "saxpy(): parameter x (const float *) needs float32, not a torch tensor of int32"),
        (lambda T: T(0x6000, torch.float32, is_cuda=False), ValueError,
         "saxpy(): parameter x (const float *): the tensor is not on a CUDA device (move it with .cuda())"),
        (lambda T: T(0x6000, torch.float32, fail="is_cuda"), RuntimeError,
         "saxpy(): parameter x (const float *): is_cuda failed"),
        (lambda T: T(0x6000, torch.float32, fail="data_ptr"), RuntimeError,
         "saxpy(): parameter x (const float *): data_ptr failed"),
        (lambda T: T(0x6000, torch.float32, fail="dtype"), RuntimeError,
         "saxpy(): parameter x (const float *): dtype failed"),
    ]
    for make, exc, text in cases:
        assert refusal(kernels, make(torch.Tensor)) == refusal(kernels, make(TensorViaPython)) == (exc, text)
    wrong = refusal(kernels, f32_array(cupy, 0x4000, "float64"))
    assert wrong == refusal(kernels, ArrayViaPython(MemViaPython(0x4000), np.dtype("float64")))
    assert wrong == (TypeError, "saxpy(): parameter x (const float *) needs float32, not a CuPy array of float64")
    # a T_OBJECT_EX member left NULL: AttributeError, as the member descriptor says it
    assert refusal(kernels, cupy.ndarray(None, np.dtype("float32"))) == (
        AttributeError, "saxpy(): parameter x (const float *): 'ndarray' object has no attribute 'data'")


# ---- a type changed after it was verified --------------------------------------------------------

def test_an_attribute_assigned_on_the_type_is_read_at_once(kernels, fake, libs):
    torch, cupy = libs
    t, a = torch.Tensor(0x6000, torch.float32), f32_array(cupy, 0x4000)
    assert launch(kernels, fake, t, a) == (0x6000, 0x4000, 0)
    torch.Tensor.data_ptr = lambda self: 0x6600
    cupy.ndarray.data = property(lambda self: ad.MemoryPointer(0x4400))
    try:
        assert launch(kernels, fake, t, a)[:2] == (0x6600, 0x4400)
        torch.Tensor.dtype = property(lambda self: torch.int32)
        assert refusal(kernels, t)[1].endswith("not a torch tensor of int32")
    finally:
        del torch.Tensor.data_ptr, torch.Tensor.dtype, cupy.ndarray.data
    assert launch(kernels, fake, t, a) == (0x6000, 0x4000, 0)      # the C descriptors again


def test_a_base_changed_after_its_subclass_was_verified(kernels, fake, libs):
    torch, _ = libs

    class Parameter(torch.Tensor):     # as torch.nn.Parameter: a subclass that overrides nothing
        pass

    p = Parameter(0x6000, torch.float32)
    assert launch(kernels, fake, p) == (0x6000, 0, 0)
    torch.Tensor.data_ptr = lambda self: 0x6700
    try:
        assert launch(kernels, fake, p)[:2] == (0x6700, 0)
    finally:
        del torch.Tensor.data_ptr
    assert launch(kernels, fake, p) == (0x6000, 0, 0)


def test_a_getter_that_changes_the_type_mid_launch(kernels, fake, libs):
    """Each read is guarded as the type is when it is made: a getter that runs Python code may
    change the type (or the object's class) between two reads of one argument."""
    torch, _ = libs

    class Sneaky(torch.Tensor):
        @property
        def is_cuda(self):
            Sneaky.data_ptr = lambda self: 0x6a00
            return True

    class Other(torch.Tensor):
        def data_ptr(self):
            return 0x6b00

    class Shifty(torch.Tensor):
        @property
        def is_cuda(self):
            self.__class__ = Other
            return True

    s = Sneaky(0x6000, torch.float32)
    assert launch(kernels, fake, s)[:2] == (0x6a00, 0)
    del Sneaky.data_ptr
    assert launch(kernels, fake, Shifty(0x6000, torch.float32))[:2] == (0x6b00, 0)


def test_a_subclass_is_verified_on_its_own(kernels, fake, libs):
    torch, cupy = libs

    class Parameter(torch.Tensor):
        pass

    class OwnPointer(torch.Tensor):
        def data_ptr(self):
            return 0x6800

    class OnHost(torch.Tensor):
        is_cuda = False

    class WithGetattr(torch.Tensor):   # its own attribute hook: read as Python reads it
        def __getattr__(self, name):
            raise AttributeError(name)

    class Array(cupy.ndarray):
        dtype = np.dtype("int32")

    assert launch(kernels, fake, Parameter(0x6000, torch.float32)) == (0x6000, 0, 0)
    assert launch(kernels, fake, OwnPointer(0x6000, torch.float32))[:2] == (0x6800, 0)
    assert refusal(kernels, OnHost(0x6000, torch.float32))[0] is ValueError
    x, _, asked = launch(kernels, fake, WithGetattr(0x6000, torch.float32))
    assert x == 0x6000 and asked > 0
    assert refusal(kernels, Array(ad.MemoryPointer(0x4000), np.dtype("float32")))[1].endswith(
        "not a CuPy array of int32")
    assert launch(kernels, fake, Parameter(0x6100, torch.float32)) == (0x6100, 0, 0)


def test_an_instance_attribute_shadows_a_method(kernels, fake, libs):
    torch, _ = libs
    t = torch.Tensor(0x6000, torch.float32)
    t.data_ptr = lambda: 0x6900
    assert launch(kernels, fake, t)[:2] == (0x6900, 0)
    del t.data_ptr
    assert launch(kernels, fake, t) == (0x6000, 0, 0)
    t.__dict__["is_cuda"] = False      # a getset is a data descriptor: the instance's own loses
    assert launch(kernels, fake, t) == (0x6000, 0, 0)
