# conftest.py — the Python target's CPU tests (tests/python/python.mk runs them):
# the generated module `kernels` (from kernels.cu) over libkstub and the fake
# driver tests/support/fake_cuda.c, which records each launch's parameter
# bytes. KSTUB_LIBCUDA names the fake; KSPY_MANIFEST the kernels' manifest,
# from which every kernel and variable is declared to the fake.
import ctypes
import json
import os

import pytest

FAKE_PARAM_BYTES = 512


class FakeLaunch(ctypes.Structure):
    _fields_ = [
        ("symbol", ctypes.c_char_p),
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared", ctypes.c_uint),
        ("stream", ctypes.c_void_p),
        ("ctx", ctypes.c_int),
        ("ex", ctypes.c_int),
        ("graph", ctypes.c_int),
        ("nattrs", ctypes.c_int),
        ("cluster", ctypes.c_uint * 3),
        ("cooperative", ctypes.c_int),
        ("pdl", ctypes.c_int),
        ("priority", ctypes.c_int),
        ("has_priority", ctypes.c_int),
        ("nparams", ctypes.c_uint),
        ("params", ctypes.c_ubyte * FAKE_PARAM_BYTES),
    ]


class Fake:
    """The fake driver's control functions (the same library libkstub loads)."""

    def __init__(self, path, manifest):
        self.lib = ctypes.CDLL(path)
        self.lib.fake_cuda_launch.restype = ctypes.POINTER(FakeLaunch)
        self.lib.fake_cuda_global.restype = ctypes.POINTER(ctypes.c_ubyte)
        self.lib.fake_cuda_global.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.fake_cuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        self.lib.fake_cuda_set_global.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        with open(manifest) as f:
            self.manifest = json.load(f)
        self.layout = {}
        for k in self.manifest["kernels"]:
            self.layout[k["c_name"]] = {p["name"]: (p["offset"], p["size"]) for p in k["params"]}

    def reset(self):
        self.lib.fake_cuda_reset()
        for k in self.manifest["kernels"]:
            n = len(k["params"])
            offs = (ctypes.c_size_t * max(n, 1))(*[p["offset"] for p in k["params"]])
            sizes = (ctypes.c_size_t * max(n, 1))(*[p["size"] for p in k["params"]])
            self.lib.fake_cuda_set_params(k["symbol"].encode(), n, offs, sizes)
        for v in self.manifest["variables"]:
            self.lib.fake_cuda_set_global(v["symbol"].encode(), v["size"])

    def launches(self):
        return self.lib.fake_cuda_launch_count()

    def last(self):
        n = self.launches()
        assert n > 0, "no launch"
        return self.lib.fake_cuda_launch(n - 1).contents

    def param(self, kernel, name):
        """The bytes the last launch passed for a parameter."""
        off, size = self.layout[kernel][name]
        return bytes(self.last().params[off:off + size])

    def global_bytes(self, symbol, size):
        p = self.lib.fake_cuda_global(symbol.encode(), 0)
        return bytes(p[:size])

    def fail(self, entry, result, nth=1):
        self.lib.fake_cuda_fail(entry.encode(), result, nth)


@pytest.fixture(scope="session")
def fake_driver():
    return Fake(os.environ["KSTUB_LIBCUDA"], os.environ["KSPY_MANIFEST"])


@pytest.fixture(scope="session")
def kernels():
    import kernels as module
    return module


@pytest.fixture
def fake(fake_driver, kernels):
    kernels.unload()             # the fake forgets its libraries: libkstub must too
    fake_driver.reset()
    return fake_driver
