"""GPU simulations (Gray-Scott, heat, Physarum) and kernels written in Rust, on the arrays you
already hold.

- ``GrayScott``, ``Heat``, ``Physarum``: the simulations of the ``rust-gpu-sim`` command, with its
  options, ``step(n)``, checkpoints, frames and outputs. On a GPU their fields (``sim.u``,
  ``sim.trail``) are zero-copy DLPack views: ``torch.from_dlpack(sim.u)`` is the simulation's own
  memory (valid until the next ``step``); on the CPU they are NumPy arrays.
- ``rust_gpu_sim.kernels``: ptxkit kernels on PyTorch/CuPy tensors, launched on the caller's
  current stream, every argument checked before anything is launched.
- ``rust_gpu_sim.torch_ops.register()``: the same kernels as ``torch.library`` custom operators
  (with fake implementations, so ``torch.compile(fullgraph=True)`` traces them).

See docs/python.md.
"""

from ._native import Array, Barkley, GrayScott, Heat, Physarum, __version__, cuda_available
from . import kernels

__all__ = ["Array", "Barkley", "GrayScott", "Heat", "Physarum", "kernels", "cuda_available", "__version__"]
