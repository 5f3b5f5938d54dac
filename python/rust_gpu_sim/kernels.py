"""ptxkit kernels on PyTorch or CuPy tensors (any DLPack producer on a CUDA GPU).

Each function takes its outputs as arguments (``out``, ``output``, ...), launches on the current
stream of the library that made its first tensor (``torch.cuda.current_stream()``,
``cupy.cuda.get_current_stream()``) unless ``stream=`` names one, and checks every argument first:
a CPU array, another dtype than float32, another GPU than the first tensor's, a non-contiguous
or read-only output, a wrong length or shape, or an output sharing memory with another argument
raises ``TypeError`` or ``ValueError`` naming the parameter, with nothing launched.

- ``saxpy(x, y, out, a)``, ``saxpy_raw(...)``: ``out = a*x + y`` (safe and raw-pointer kernels).
- ``softmax(input, output)``: softmax over each row of a 2-D tensor.
- ``jacobi(input, output)``: one Jacobi sweep of Laplace's equation on a 2-D grid.
- ``transpose(input, output)``: ``output = input.T``.
- ``grayscott_laplacian(u, v, lu, lv)``, ``grayscott_update(u, v, lu, lv, feed=, kill=)``: the
  Gray-Scott ``v1`` step's two kernels; ``grayscott_fused(u, v, u_next, v_next, feed=, kill=)``:
  the fused step (``du``, ``dv``, ``dt`` default to the simulation's defaults).
"""

from ._native import kernels as _native

saxpy = _native.saxpy
saxpy_raw = _native.saxpy_raw
softmax = _native.softmax
jacobi = _native.jacobi
transpose = _native.transpose
grayscott_laplacian = _native.grayscott_laplacian
grayscott_update = _native.grayscott_update
grayscott_fused = _native.grayscott_fused

__all__ = [
    "saxpy",
    "saxpy_raw",
    "softmax",
    "jacobi",
    "transpose",
    "grayscott_laplacian",
    "grayscott_update",
    "grayscott_fused",
]
