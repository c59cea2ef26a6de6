# test_exchange.py — an exact torch.Tensor read through its type's DLPack C
# exchange table (kstub_python.h: ks__py_dl_torch), with the test double
# array_double.c: its TensorBase gets a table whose
# dltensor_from_py_object_no_sync reads the same fields the getters read.
# Run in a pytest process of its own per form of the table
# (check-python.sh): the module looks the table up once, when it first finds
# torch.Tensor. KSPY_EXCHANGE=int gives DLPack 1.2's form (an int address
# named __c_dlpack_exchange_api__), else 1.3's (a capsule named
# __dlpack_c_exchange_api__).
#
# One C call instead of three getters, with their verdicts wherever they
# answer: what the table does not answer plainly (a tensor off the GPU, a
# dtype outside the getters' table, a failure) is read by the getters, so
# every refusal is theirs; a subclass is always read by its getters. (A
# getter of an exact tensor that would raise is not asked: the table answers.)
import os
import struct
import sys
import types

import pytest

import array_double as ad

DL = {"float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "int32": (0, 32), "int64": (0, 64),
      "bool": (6, 8), "float8": (10, 8), "floatwide": (2, 128)}


def u64(b):
    return struct.unpack("<Q", b)[0]


@pytest.fixture(scope="module")
def torch():
    t = types.ModuleType("torch")
    for name in DL:
        setattr(t, name, type("dtype", (), {"__repr__": lambda self, n=name: "torch." + n})())
    table = ad.exchange_api({getattr(t, n): cb for n, cb in DL.items() if n != "float64"},
                            as_int=os.environ.get("KSPY_EXCHANGE") == "int")

    class Tensor(ad.TensorBase):
        pass

    if os.environ.get("KSPY_EXCHANGE") == "int":
        Tensor.__c_dlpack_exchange_api__ = table
    else:
        Tensor.__dlpack_c_exchange_api__ = table
    t.Tensor = Tensor
    saved = sys.modules.get("torch")
    sys.modules["torch"] = t
    yield t
    if saved is None:
        sys.modules.pop("torch", None)
    else:
        sys.modules["torch"] = saved


class Counts:
    def __init__(self):
        self.exchange, self.getters = ad.exchange_calls(), ad.getter_calls()

    def since(self):
        return ad.exchange_calls() - self.exchange, ad.getter_calls() - self.getters


def launch(kernels, x, y):
    kernels.saxpy(1.0, x, y, 1, grid=1, block=1)


def outcome(kernels, fake, x):
    """What saxpy does with x as its x: ("ok", the address passed) or (exception type, text)."""
    try:
        launch(kernels, x, 0)
    except Exception as e:                      # noqa: BLE001 - the outcome is compared
        return type(e), str(e)
    return "ok", u64(fake.param("saxpy", "x"))


def test_an_exact_tensor_is_read_through_the_table(kernels, fake, torch):
    x, y = torch.Tensor(0x6004, torch.float32), torch.Tensor(0x7010, torch.float32)
    c = Counts()
    launch(kernels, x, y)
    assert (u64(fake.param("saxpy", "x")), u64(fake.param("saxpy", "y"))) == (0x6004, 0x7010)
    assert c.since() == (2, 0)                  # one call a tensor, no getter
    launch(kernels, torch.Tensor(0x6100, torch.float32), y)      # read on every call, nothing kept
    assert u64(fake.param("saxpy", "x")) == 0x6100


def test_the_tables_verdicts_are_the_getters(kernels, fake, torch):
    class Sub(torch.Tensor):                    # read by its getters only
        pass

    cases = [
        lambda T: T(0x6000, torch.float32),
        lambda T: T(0x60ff, torch.float32),
        lambda T: T(0x6000, torch.int32),                    # another dtype: refused
        lambda T: T(0x6000, torch.float64),                  # the table raises: the getters refuse
        lambda T: T(0x6000, torch.float16),
        lambda T: T(0x6000, torch.bool),
        lambda T: T(0x6000, torch.float8),                   # outside the getters' table
        lambda T: T(0x6000, torch.floatwide),
        lambda T: T(0x6000, torch.float32, is_cuda=False),   # on the CPU: the getters' message
        lambda T: T(0x6000, torch.float32, fail="dlpack"),   # the table fails: the getters read
    ]
    for i, make in enumerate(cases):
        c = Counts()
        via_getters = outcome(kernels, fake, make(Sub))
        assert c.since()[0] == 0, i
        c = Counts()
        via_table = outcome(kernels, fake, make(torch.Tensor))
        assert via_table == via_getters, (i, via_table, via_getters)
        took_table = c.since()[1] == 0
        assert took_table == (i in (0, 1, 2, 4, 5)), (i, c.since())   # the plain ones, and only they
    assert outcome(kernels, fake, torch.Tensor(0x6000, torch.int32)) == (
        TypeError, "saxpy(): parameter x (const float *) needs float32, not a torch tensor of int32")
    assert outcome(kernels, fake, torch.Tensor(0x6000, torch.float32, is_cuda=False)) == (
        ValueError, "saxpy(): parameter x (const float *): the tensor is not on a CUDA device "
        "(move it with .cuda())")


def test_a_subclass_is_read_by_its_getters(kernels, fake, torch):
    class Moved(torch.Tensor):
        def data_ptr(self):
            return 0x9000                       # its own: the table would not say so

    c = Counts()
    assert outcome(kernels, fake, Moved(0x6000, torch.float32)) == ("ok", 0x9000)
    assert c.since()[0] == 0


def test_a_type_changed_since_is_read_as_python_reads_it(kernels, fake, torch):
    T = torch.Tensor
    x = T(0x6000, torch.float32)
    T.data_ptr = lambda self: 0x9000            # assigned on the type: obeyed from the next call
    try:
        c = Counts()
        assert outcome(kernels, fake, x) == ("ok", 0x9000)
        assert c.since()[0] == 0
    finally:
        del T.data_ptr
    c = Counts()
    assert outcome(kernels, fake, x) == ("ok", 0x6000)
    assert c.since() == (1, 0)                  # the table again
    x.data_ptr = lambda: 0x9100                 # an instance's own method shadows the type's
    assert outcome(kernels, fake, x) == ("ok", 0x9100)
    name = "__c_dlpack_exchange_api__" if os.environ.get("KSPY_EXCHANGE") == "int" else "__dlpack_c_exchange_api__"
    table = getattr(T, name)
    delattr(T, name)                            # no table: the getters
    try:
        c = Counts()
        assert outcome(kernels, fake, T(0x6000, torch.float32)) == ("ok", 0x6000)
        assert c.since()[0] == 0
    finally:
        setattr(T, name, table)
    c = Counts()
    assert outcome(kernels, fake, T(0x6000, torch.float32)) == ("ok", 0x6000)
    assert c.since() == (1, 0)
