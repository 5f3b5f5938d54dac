"""The kernel path's refusals without a GPU: every one names its parameter and launches
nothing. (Launches themselves: test_gpu.py, on a GPU machine.)"""

import numpy as np
import pytest

import rust_gpu_sim as rgs
from rust_gpu_sim import kernels


def test_a_cpu_array_is_a_type_error_naming_it():
    x = np.ones(16, np.float32)
    with pytest.raises(TypeError, match=r"^x: .*host memory.*CUDA"):
        kernels.saxpy(x, x.copy(), np.empty_like(x), 2.0)


def test_a_non_array_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"^input: expected a tensor or array"):
        kernels.softmax([1.0, 2.0], np.zeros(2, np.float32))


def test_a_bad_stream_is_a_type_error():
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="stream"):
        kernels.saxpy(x, x, x, 1.0, stream="fast")


def test_gray_scott_kernels_need_their_rates():
    u = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match="feed"):
        kernels.grayscott_fused(u, u, u, u)


def test_every_kernel_is_there():
    for name in kernels.__all__:
        assert callable(getattr(kernels, name))


def test_cpu_fields_and_frames_speak_dlpack_on_the_cpu():
    sim = rgs.GrayScott(size=12, backend="cpu")
    u = np.from_dlpack(sim.u)
    assert u.shape == (12, 12) and u.dtype == np.float32
    frame = np.from_dlpack(sim.frame())
    assert frame.shape == (12, 12, 3)

