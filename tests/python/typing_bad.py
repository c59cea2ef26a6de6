# typing_bad.py — a caller with wrong arguments: mypy must report each line (check-python.sh).
import kernels

kernels.saxpy(2.0, 0, 0, "16", grid=1, block=1)
kernels.saxpy(2.0, 0, 0, grid=1, block=1)
kernels.saxpy(2.0, 0, 0, 16, 17, grid=1, block=1)
kernels.saxpy(2.0, 0, 0, 16, grid=1)
kernels.saxpy(2.0, "x", 0, 16, grid=1, block=1)
kernels.saxpy(2.0, 0, 0, 16, grid=(1, 2, 3, 4), block=1)
kernels.scale_params(3, 0, grid=1, block=1)
kernels.saxpy(2.0, 0, 0, 16, grid=1, block=1, strem=None)
