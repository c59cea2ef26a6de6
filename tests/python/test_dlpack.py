# test_dlpack.py — pointer arguments through DLPack (__dlpack__ and __dlpack_device__), on the CPU
# with the fake driver (conftest.py): producers made here with ctypes hand the module real
# PyCapsules ("dltensor" and "dltensor_versioned") over DLPack structs laid out from the spec,
# with a deleter that counts its calls and a capsule destructor that frees an unconsumed tensor,
# as producers do. Every case ends with each tensor freed exactly once.
import ctypes
import struct

import numpy as np
import pytest

# ---- a DLPack producer --------------------------------------------------------------------------


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL, FLOAT8_E4M3 = 0, 1, 2, 4, 5, 6, 10

deleted = {}          # address of a managed tensor: how many times its deleter ran


@DELETER
def count_deleter(addr):
    deleted[addr] = deleted.get(addr, 0) + 1


_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]
_cap_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_GetName", ctypes.pythonapi))
_cap_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
NAMES = {b"dltensor": ctypes.create_string_buffer(b"dltensor"),
         b"dltensor_versioned": ctypes.create_string_buffer(b"dltensor_versioned")}


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def capsule_destructor(cap):
    """A producer's: a capsule nobody consumed frees its tensor; a consumed one ("used_...") is the
    consumer's to free."""
    name = _cap_name(cap)
    if name in NAMES:
        count_deleter(_cap_pointer(cap, name))


class DLArray:
    """A device array known only through DLPack. versioned: a DLPack 1 producer (takes max_version,
    copy; gives "dltensor_versioned" when asked for 1.x); else an older one (stream only)."""

    def __init__(self, ptr, code=FLOAT, bits=32, lanes=1, device=CUDA, versioned=True, flags=0,
                 byte_offset=0, major=1, tensor_device=None, n=16):
        self.ptr, self.code, self.bits, self.lanes = ptr, code, bits, lanes
        self.device, self.versioned, self.flags, self.byte_offset = device, versioned, flags, byte_offset
        self.major, self.tensor_device, self.n = major, tensor_device, n
        self.calls = []           # the keywords each __dlpack__ call got
        self.made = []            # (managed struct, capsule name) kept alive
        self.capsules = []

    def __dlpack_device__(self):
        return (self.device, 0)

    def _tensor(self):
        shape = (ctypes.c_int64 * 1)(self.n)
        t = DLTensor(self.ptr, self.tensor_device or self.device, 0, 1, self.code, self.bits, self.lanes,
                     shape, None, self.byte_offset)
        return t, shape

    def __dlpack__(self, stream=None, **kw):
        if not self.versioned and kw:
            raise TypeError("__dlpack__() got an unexpected keyword argument %r" % next(iter(kw)))
        self.calls.append(dict(stream=stream, **kw))
        t, shape = self._tensor()
        if self.versioned and kw.get("max_version", (0, 0))[0] >= 1:
            m = ManagedVersioned(self.major, 1, None, count_deleter, self.flags, t)
            name = b"dltensor_versioned"
        else:
            m = Managed(t, None, count_deleter)
            name = b"dltensor"
        deleted[ctypes.addressof(m)] = 0     # the address may be an earlier, freed tensor's
        self.made.append((m, shape))
        cap = _new(ctypes.addressof(m), NAMES[name], ctypes.cast(capsule_destructor, ctypes.c_void_p))
        self.capsules.append(cap)
        return cap

    def freed_once(self):
        """Every tensor handed out freed exactly once, once its capsule is gone."""
        self.capsules.clear()
        return all(deleted.get(ctypes.addressof(m), 0) == 1 for m, _ in self.made)


def u64(b):
    return struct.unpack("<Q", b)[0]


def test_the_structs_are_the_specs_sizes():
    assert ctypes.sizeof(DLTensor) == 48 and ctypes.sizeof(Managed) == 64
    assert ctypes.sizeof(ManagedVersioned) == 80


# ---- what goes through -------------------------------------------------------------------------


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "unversioned"])
def test_a_float32_tensor_goes_to_a_float_pointer(kernels, fake, versioned):
    x = DLArray(0x10000, versioned=versioned)
    y = DLArray(0x20000, versioned=versioned)
    kernels.saxpy(2.0, x, y, 16, grid=1, block=16)
    assert u64(fake.param("saxpy", "x")) == 0x10000 and u64(fake.param("saxpy", "y")) == 0x20000
    used = b"used_dltensor_versioned" if versioned else b"used_dltensor"
    assert _name(x.capsules[0]) == used and _name(y.capsules[0]) == used
    assert x.freed_once() and y.freed_once()


def test_the_byte_offset_is_added(kernels, fake):
    x = DLArray(0x10000, byte_offset=0x40)
    y = DLArray(0x20000, byte_offset=4, versioned=False)
    kernels.saxpy(2.0, x, y, 16, grid=1, block=16)
    assert u64(fake.param("saxpy", "x")) == 0x10040 and u64(fake.param("saxpy", "y")) == 0x20004
    assert x.freed_once() and y.freed_once()


def test_dlpack_1_is_asked_for_with_the_launchs_stream_and_no_copy(kernels, fake):
    x = DLArray(0x10000)
    kernels.saxpy(2.0, x, 0, 16, grid=1, block=16)
    kernels.saxpy(2.0, x, 0, 16, grid=1, block=16, stream=0x77)
    # DLPack numbers the legacy default stream 1 (0 is refused as ambiguous).
    assert x.calls == [dict(stream=1, max_version=(1, 1), copy=False),
                       dict(stream=0x77, max_version=(1, 1), copy=False)]
    old = DLArray(0x10000, versioned=False)
    kernels.saxpy(2.0, old, 0, 16, grid=1, block=16, stream=0x66)
    assert old.calls == [dict(stream=0x66)]
    assert x.freed_once() and old.freed_once()


@pytest.mark.parametrize("device", [CUDA_HOST, CUDA_MANAGED])
def test_pinned_and_managed_memory_go_through(kernels, fake, device):
    x = DLArray(0x10000, device=device)
    kernels.saxpy(2.0, x, 0, 16, grid=1, block=16, stream=0x77)
    assert u64(fake.param("saxpy", "x")) == 0x10000
    # Pinned host memory has no stream to order against.
    assert x.calls[0]["stream"] == (None if device == CUDA_HOST else 0x77)
    assert x.freed_once()


def test_the_cuda_array_interface_is_preferred(kernels, fake):
    class Both(DLArray):
        @property
        def __cuda_array_interface__(self):
            return {"shape": (16,), "typestr": "<f4", "data": (0x30000, False), "version": 3}

    x = Both(0x10000)
    kernels.saxpy(2.0, x, 0, 16, grid=1, block=16)
    assert u64(fake.param("saxpy", "x")) == 0x30000 and x.calls == []


@pytest.mark.parametrize("code, bits, lanes, param", [
    (FLOAT, 16, 1, "hp"),       # __half
    (FLOAT, 32, 1, "out"),
])
def test_half_and_float(kernels, fake, code, bits, lanes, param):
    args = dict(h=1.0, v=(1, 2, 3, 4), hp=0, out=0)
    a = DLArray(0x4000, code=code, bits=bits, lanes=lanes)
    args[param] = a
    kernels.halves(**args, grid=1, block=1)
    assert u64(fake.param("halves", param)) == 0x4000 and a.freed_once()


def test_the_dtype_picks_the_instance(kernels, fake):
    i = DLArray(0x100, code=INT)
    kernels.fill(i, 3, 10, grid=1, block=32)
    assert fake.last().symbol == b"_Z4fillIiEvPT_S0_j"
    assert len(i.made) == 2 and i.freed_once()      # fill_float tried first, then fill_int
    a = DLArray(0x200)
    kernels.fill(a, 1.5, 10, grid=1, block=32)
    assert fake.last().symbol == b"_Z4fillIfEvPT_S0_j"
    assert a.freed_once()       # each instance tried consumed and freed its own capsule


def test_void_pointers_take_any_dlpack_type(kernels, fake):
    p = DLArray(0x100, code=FLOAT8_E4M3, bits=8)
    q = DLArray(0x200, code=COMPLEX, bits=64, flags=READ_ONLY)
    kernels.untyped(p, q, 3, grid=1, block=1)
    assert u64(fake.param("untyped", "p")) == 0x100 and u64(fake.param("untyped", "q")) == 0x200
    assert p.freed_once() and q.freed_once()


def test_a_struct_field_takes_a_dlpack_tensor_without_a_stream(kernels, fake):
    b = DLArray(0x5000, code=UINT, bits=8)
    n = kernels.Nested(buf=b)
    assert n.buf == 0x5000 and b.calls == [dict(stream=None, max_version=(1, 1), copy=False)]
    old = DLArray(0x6000, code=UINT, bits=8, versioned=False)
    n.buf = old
    assert n.buf == 0x6000 and old.calls == [dict(stream=None)]     # asked again with nothing
    assert b.freed_once() and old.freed_once()


# ---- what is refused, naming the kernel and the parameter ------------------------------------------


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "unversioned"])
@pytest.mark.parametrize("code, bits, lanes, got", [
    (INT, 32, 1, "int32"), (FLOAT, 64, 1, "float64"), (BFLOAT, 16, 1, "bfloat16"), (BOOL, 8, 1, "bool"),
    (FLOAT, 32, 4, "16-byte records (void128)"), (FLOAT8_E4M3, 8, 1, "no C counterpart"),
])
def test_a_wrong_dtype_is_refused_and_still_freed(kernels, fake, versioned, code, bits, lanes, got):
    x = DLArray(0x1000, code=code, bits=bits, lanes=lanes, versioned=versioned)
    with pytest.raises(TypeError) as e:
        kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    msg = str(e.value)
    assert msg.startswith("saxpy(): parameter x (const float *) needs float32, not a DLPack tensor of "), msg
    assert got in msg, msg
    assert fake.launches() == 0 and x.freed_once()


@pytest.mark.parametrize("device, name", [(CPU, "kDLCPU"), (10, "kDLROCM"), (99, "a device type")])
def test_a_tensor_off_the_gpu_is_refused_before_it_is_exported(kernels, fake, device, name):
    x = DLArray(0x1000, device=device)
    with pytest.raises(ValueError) as e:
        kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    assert str(e.value) == ("saxpy(): parameter x (const float *): the DLPack tensor is on %s (device type %d), "
                            "not on a CUDA device" % (name, device))
    assert x.calls == [] and fake.launches() == 0


def test_a_numpy_array_is_refused_as_host_memory(kernels, fake):
    with pytest.raises(ValueError, match=r"saxpy\(\): parameter y \(float \*\): the DLPack tensor is on kDLCPU"):
        kernels.saxpy(1.0, 0, np.zeros(4, np.float32), 4, grid=1, block=1)


def test_a_tensor_whose_capsule_says_another_device_is_refused(kernels, fake):
    x = DLArray(0x1000, device=CUDA, tensor_device=CPU)
    with pytest.raises(ValueError, match=r"saxpy\(\): parameter x .*kDLCPU"):
        kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    assert fake.launches() == 0 and x.freed_once()


def test_read_only_goes_only_to_const_pointers(kernels, fake):
    x = DLArray(0x1000, flags=READ_ONLY)
    kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    y = DLArray(0x2000, flags=READ_ONLY)
    with pytest.raises(ValueError) as e:
        kernels.saxpy(1.0, 0, y, 4, grid=1, block=1)
    assert str(e.value) == "saxpy(): parameter y (float *) is written by the kernel, but a DLPack tensor is read-only"
    assert fake.launches() == 1 and x.freed_once() and y.freed_once()


def test_a_copy_is_refused(kernels, fake):
    x = DLArray(0x1000, flags=IS_COPIED)
    with pytest.raises(ValueError, match=r"saxpy\(\): parameter x .*gave a copy"):
        kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    assert fake.launches() == 0 and x.freed_once()


def test_a_later_major_version_is_left_to_its_producer(kernels, fake):
    x = DLArray(0x1000, major=2)
    with pytest.raises(ValueError, match=r"saxpy\(\): parameter x .*DLPack 2\.1 tensor; kstub reads DLPack 1"):
        kernels.saxpy(1.0, x, 0, 4, grid=1, block=1)
    assert _name(x.capsules[0]) == b"dltensor_versioned"   # not consumed: its destructor frees it
    assert x.freed_once()


class NotACapsule:
    def __dlpack_device__(self):
        return (CUDA, 0)

    def __dlpack__(self, stream=None, max_version=None, copy=None):
        return 0x1000


class Raising:
    def __dlpack_device__(self):
        return (CUDA, 0)

    def __dlpack__(self, stream=None, max_version=None, copy=None):
        raise BufferError("cannot export without a copy")


def test_a_producers_own_error_and_a_wrong_answer(kernels, fake):
    with pytest.raises(TypeError, match=r"saxpy\(\): parameter x \(const float \*\): __dlpack__\(\) gave int, "
                                        r"not a \"dltensor\""):
        kernels.saxpy(1.0, NotACapsule(), 0, 4, grid=1, block=1)
    with pytest.raises(BufferError, match=r"saxpy\(\): parameter x \(const float \*\): cannot export without a copy"):
        kernels.saxpy(1.0, Raising(), 0, 4, grid=1, block=1)
    assert fake.launches() == 0


def test_the_message_docs_python_md_quotes(kernels, fake):
    import os
    docs = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")).read()
    with pytest.raises(ValueError) as e:
        kernels.saxpy(1.0, DLArray(0x1000, device=CPU), 0, 4, grid=1, block=32)
    line = "%s: %s" % (type(e.value).__name__, e.value)
    assert line in docs, line
