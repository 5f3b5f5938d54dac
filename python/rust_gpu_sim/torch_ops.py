"""The kernels of ``rust_gpu_sim.kernels`` as PyTorch custom operators.

``register()`` defines ``torch.ops.rust_gpu_sim.<name>`` with ``torch.library.custom_op``: each
allocates its output on the input's device (``torch.empty_like``) and launches on the current
stream; each has a fake (meta) implementation giving the output's shape and dtype, so
``torch.compile(fullgraph=True)`` traces a function that calls it without a graph break, and it
can be captured in a CUDA graph (call it once before capturing: the first call loads the kernels).

    import torch, rust_gpu_sim.torch_ops as ops
    ops.register()
    out = torch.ops.rust_gpu_sim.saxpy(x, y, 2.0)
"""

import torch

from . import kernels

_REGISTERED = False


def register():
    """Defines the operators (once; later calls do nothing)."""
    global _REGISTERED
    if _REGISTERED:
        return
    _define()
    _REGISTERED = True


def _define():
    @torch.library.custom_op("rust_gpu_sim::saxpy", mutates_args=())
    def saxpy(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
        out = torch.empty_like(x)
        kernels.saxpy(x, y, out, a)
        return out

    @saxpy.register_fake
    def _(x, y, a):
        torch._check(x.shape == y.shape, lambda: "saxpy: x and y differ in shape")
        return torch.empty_like(x)

    @torch.library.custom_op("rust_gpu_sim::softmax", mutates_args=())
    def softmax(input: torch.Tensor) -> torch.Tensor:
        output = torch.empty_like(input)
        kernels.softmax(input, output)
        return output

    @softmax.register_fake
    def _(input):
        return torch.empty_like(input)

    @torch.library.custom_op("rust_gpu_sim::jacobi", mutates_args=())
    def jacobi(input: torch.Tensor) -> torch.Tensor:
        output = torch.empty_like(input)
        kernels.jacobi(input, output)
        return output

    @jacobi.register_fake
    def _(input):
        return torch.empty_like(input)

    @torch.library.custom_op("rust_gpu_sim::transpose", mutates_args=())
    def transpose(input: torch.Tensor) -> torch.Tensor:
        output = input.new_empty((input.shape[1], input.shape[0]))
        kernels.transpose(input, output)
        return output

    @transpose.register_fake
    def _(input):
        return input.new_empty((input.shape[1], input.shape[0]))

    @torch.library.custom_op("rust_gpu_sim::grayscott_fused", mutates_args=())
    def grayscott_fused(
        u: torch.Tensor, v: torch.Tensor, feed: float, kill: float, du: float, dv: float, dt: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        u_next, v_next = torch.empty_like(u), torch.empty_like(v)
        kernels.grayscott_fused(u, v, u_next, v_next, feed=feed, kill=kill, du=du, dv=dv, dt=dt)
        return u_next, v_next

    @grayscott_fused.register_fake
    def _(u, v, feed, kill, du, dv, dt):
        return torch.empty_like(u), torch.empty_like(v)
