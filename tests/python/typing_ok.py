# typing_ok.py — a caller mypy accepts against kernels.pyi (check-python.sh).
import kernels


def run(x: kernels.Pointer, y: kernels.Pointer) -> None:
    kernels.saxpy(2.0, x, y, 16, grid=1, block=(16, 1))
    kernels.saxpy(a=2, x=0x1000, y=None, n=16, grid=(1, 1, 1), block=16, stream=None)
    kernels.scale_params(kernels.Params(scale=1.0, count=4), y, grid=1, block=32)
    kernels.fill(x, 1.5, 10, grid=1, block=32)
    kernels.nested(kernels.Nested(v=[1.0, 2.0, 3.0], mode=kernels.Mode.Exact), in_=x, out=y, grid=1, block=1)
    kernels.c_table.set(list(range(8)))
    value: float = kernels.g_scale.get()
    print(value)
