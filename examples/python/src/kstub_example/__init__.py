"""kstub_example: typed launches of examples/python/kernels/example.cu.

    import cupy as cp, kstub_example as k
    x = cp.arange(1000, dtype=cp.float32); y = cp.ones_like(x)
    k.saxpy(2.0, x, y, 1000, grid=8, block=128)
    k.affine(k.Affine(scale=2.0, shift=1.0, n=1000), x, y, grid=8, block=128)
"""
from ._kernels import *  # noqa: F401,F403  (the generated module: one function per kernel)
from ._kernels import Affine, KstubError, affine, saxpy  # noqa: F401

__all__ = ["saxpy", "affine", "Affine", "KstubError"]
