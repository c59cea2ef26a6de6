# typing_ok.py — a caller mypy accepts against kernels.pyi (check-python.sh).
from typing import Any, Optional, Tuple

import kernels


class OnlyDLPack:
    """An array known through DLPack alone (a JAX array's methods)."""

    def __dlpack__(self, *, stream: Optional[int] = None, max_version: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any: ...

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, 0)


def run(x: kernels.Pointer, y: kernels.Pointer) -> None:
    kernels.saxpy(2.0, x, y, 16, grid=1, block=(16, 1))
    kernels.saxpy(a=2, x=0x1000, y=None, n=16, grid=(1, 1, 1), block=16, stream=None)
    kernels.scale_params(kernels.Params(scale=1.0, count=4), y, grid=1, block=32)
    kernels.fill(x, 1.5, 10, grid=1, block=32)
    kernels.saxpy(2.0, OnlyDLPack(), OnlyDLPack(), 16, grid=1, block=16)
    kernels.nested(kernels.Nested(v=[1.0, 2.0, 3.0], mode=kernels.Mode.Exact), in_=x, out=y, grid=1, block=1)
    kernels.c_table.set(list(range(8)))
    value: float = kernels.g_scale.get()
    print(value)
