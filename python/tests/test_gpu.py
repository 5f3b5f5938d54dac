"""The package on a CUDA GPU with PyTorch (and CuPy where installed): zero copy, the command
line's results bit for bit, the caller's stream, CUDA graphs, torch.compile, and the refusals.
Skipped where there is no GPU or no PyTorch (the build machines); run on a GPU machine by
scripts/gpu-check.sh python."""

import numpy as np
import pytest

import rust_gpu_sim as rgs
from rust_gpu_sim import kernels

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or not rgs.cuda_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

DEVICE = torch.device("cuda", 0)


def fresh(*shape, seed=0):
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    return torch.rand(*shape, device=DEVICE, generator=generator)


# ---- zero copy ----------------------------------------------------------------------------------


def test_fields_are_the_simulations_own_memory():
    sim = rgs.GrayScott(size=67, variant="fused", backend="cuda")
    u = torch.from_dlpack(sim.u)
    assert u.data_ptr() == sim.u.data_ptr and u.shape == (67, 67) and u.dtype == torch.float32
    assert u.device == DEVICE
    before = u.clone()
    sim.step(2)  # fused ping-pongs: after an even count U is back in the same buffer
    assert torch.equal(u, torch.from_dlpack(sim.u)) and not torch.equal(u, before)
    heat = rgs.Heat(size=17, variant="single", backend="cuda")
    assert torch.from_dlpack(heat.u).data_ptr() == heat.u.data_ptr
    physarum = rgs.Physarum(size=64, agents=1000, variant="optimized", backend="cuda")
    assert torch.from_dlpack(physarum.trail).data_ptr() == physarum.trail.data_ptr


def test_numpy_gets_a_copy_once_the_steps_are_done():
    sim = rgs.GrayScott(size=45, variant="fused", backend="cuda")
    sim.step(300)  # queued; asarray waits for them
    host = np.asarray(sim.u)
    assert host.dtype == np.float32 and host.shape == (45, 45)
    np.testing.assert_array_equal(host, torch.from_dlpack(sim.u).cpu().numpy())


def test_cupy_sees_the_same_memory():
    cupy = pytest.importorskip("cupy")
    sim = rgs.GrayScott(size=33, backend="cuda")
    assert cupy.from_dlpack(sim.v).data.ptr == sim.v.data_ptr
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(sim.v)), torch.from_dlpack(sim.v).cpu().numpy())


# ---- the command line's results ------------------------------------------------------------------


def cli_fields(cli, tmp_path, *args):
    path = tmp_path / "saved.npz"
    cli(*args, "--save", path)
    return np.load(path)


@pytest.mark.parametrize("variant", ["v1", "v2", "fused", "tiled", "temporal", "streaming"])
def test_grayscott_matches_the_command_line(cli, tmp_path, variant):
    sim = rgs.GrayScott(width=203, height=117, preset="mitosis", seed=5, variant=variant, backend="cuda")
    sim.step(64)
    saved = cli_fields(cli, tmp_path, "grayscott", "--width", 203, "--height", 117, "--preset", "mitosis",
                       "--seed", 5, "--steps", 64, "--variant", variant, "--backend", "cuda")
    np.testing.assert_array_equal(torch.from_dlpack(sim.u).cpu().numpy(), saved["u"])
    np.testing.assert_array_equal(torch.from_dlpack(sim.v).cpu().numpy(), saved["v"])


@pytest.mark.parametrize("variant", ["fused", "single"])
def test_heat_matches_the_command_line(cli, tmp_path, variant):
    sim = rgs.Heat(nx=37, ny=29, nz=23, init="sine", variant=variant, backend="cuda")
    sim.step(7)
    saved = cli_fields(cli, tmp_path, "heat", "--nx", 37, "--ny", 29, "--nz", 23, "--init", "sine", "--steps", 7,
                       "--variant", variant, "--backend", "cuda")
    np.testing.assert_array_equal(torch.from_dlpack(sim.u).cpu().numpy(), saved["u"])


@pytest.mark.parametrize("variant", ["fused", "optimized"])
def test_physarum_matches_the_command_line(cli, tmp_path, variant):
    sim = rgs.Physarum(size=97, agents=20000, seed=9, variant=variant, backend="cuda")
    sim.step(15)
    saved = cli_fields(cli, tmp_path, "physarum", "--size", 97, "--agents", 20000, "--seed", 9, "--steps", 15,
                       "--variant", variant, "--backend", "cuda")
    np.testing.assert_array_equal(torch.from_dlpack(sim.trail).cpu().numpy(), saved["trail"])


def test_barkley_on_the_gpu_matches_its_command(barkley_cli, tmp_path):
    sim = rgs.Barkley(72, 40, backend="cuda")
    sim.step(80)
    barkley_cli("--width", 72, "--height", 40, "--steps", 80, "--save", tmp_path / "b.npz", "--output", tmp_path / "b.png")
    np.testing.assert_array_equal(sim.u, np.load(tmp_path / "b.npz")["u"])
    assert sim.variant == "cuda"


# ---- kernels against references, fresh random inputs, odd sizes ---------------------------------


def test_saxpy_safe_and_raw():
    for n, seed in [(1, 1), (1000003, 2), (4097, 3)]:
        x, y = fresh(n, seed=seed), fresh(n, seed=seed + 10)
        expected = torch.addcmul(y, x, torch.full_like(x, 2.5))  # one rounding, as the kernel's fma
        for op in (kernels.saxpy, kernels.saxpy_raw):
            out = torch.full_like(x, float("nan"))
            op(x, y, out, 2.5)
            torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)


def test_softmax_jacobi_transpose():
    x = fresh(37, 1001, seed=4) * 8 - 4
    out = torch.empty_like(x)
    kernels.softmax(x, out)
    torch.testing.assert_close(out, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    grid = fresh(67, 129, seed=5)
    swept = torch.empty_like(grid)
    kernels.jacobi(grid, swept)
    expected = grid.clone()
    expected[1:-1, 1:-1] = 0.25 * ((grid[1:-1, :-2] + grid[1:-1, 2:]) + (grid[:-2, 1:-1] + grid[2:, 1:-1]))
    torch.testing.assert_close(swept, expected, rtol=0, atol=0)
    wide = fresh(33, 65, seed=6)
    turned = torch.empty(65, 33, device=DEVICE)
    kernels.transpose(wide, turned)
    assert torch.equal(turned, wide.T)


def test_gray_scott_kernels_are_the_simulations_steps():
    for variant, steps in [("fused", 1), ("v1", 1), ("fused", 3)]:
        sim = rgs.GrayScott(width=131, height=77, preset="coral", variant=variant, backend="cuda")
        u, v = torch.from_dlpack(sim.u).clone(), torch.from_dlpack(sim.v).clone()
        rates = sim.rates
        for _ in range(steps):
            if variant == "fused":
                un, vn = torch.empty_like(u), torch.empty_like(v)
                kernels.grayscott_fused(u, v, un, vn, **rates)
                u, v = un, vn
            else:
                lu, lv = torch.empty_like(u), torch.empty_like(v)
                kernels.grayscott_laplacian(u, v, lu, lv)
                kernels.grayscott_update(u, v, lu, lv, **rates)
        sim.step(steps)
        assert torch.equal(u, torch.from_dlpack(sim.u)) and torch.equal(v, torch.from_dlpack(sim.v))


# ---- streams, graphs, torch.compile --------------------------------------------------------------


def test_launch_reads_what_torch_just_wrote_on_the_current_stream():
    n = 1 << 20
    x, y, source = torch.zeros(n, device=DEVICE), torch.ones(n, device=DEVICE), fresh(n, seed=7)
    out = torch.empty(n, device=DEVICE)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # the write below lands long after it is queued
        x.copy_(source)
        kernels.saxpy(x, y, out, 3.0)  # no synchronisation in between
        assert rgs._native._last_launch_stream() == side.cuda_stream
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 3.0 * source + 1.0)
    # The race is real: a read on another stream with no ordering sees x before the write, so
    # the test above fails if the launch goes to any stream but the current one unordered.
    other = torch.cuda.Stream()
    x.zero_()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        x.copy_(source)
    with torch.cuda.stream(other):
        out.copy_(x)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.zeros_like(out))
    # A stream named with stream= is ordered after the tensors' pending work (DLPack's rule).
    x.zero_()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        x.copy_(source)
        kernels.saxpy(x, y, out, 3.0, stream=other)
        assert rgs._native._last_launch_stream() == other.cuda_stream
    torch.cuda.synchronize()
    torch.testing.assert_close(out, 3.0 * source + 1.0)
    # Outside any `with`, torch's current stream is the default one.
    kernels.saxpy(x, y, out, 3.0)
    assert rgs._native._last_launch_stream() == torch.cuda.current_stream().cuda_stream


def test_cupy_launches_on_cupys_current_stream():
    cupy = pytest.importorskip("cupy")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.arange(10007, dtype=cupy.float32)
        y = cupy.ones(10007, dtype=cupy.float32)
        out = cupy.empty_like(x)
        kernels.saxpy(x, y, out, 2.0)
        assert rgs._native._last_launch_stream() == stream.ptr
        stream.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out), 2.0 * np.arange(10007, dtype=np.float32) + 1.0)


def test_cuda_graph_capture_and_replay():
    n = 4099
    x, y, out = fresh(n, seed=8), fresh(n, seed=9), torch.empty(n, device=DEVICE)
    kernels.saxpy(x, y, out, 1.5)  # loads the kernels before capturing
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kernels.saxpy(x, y, out, 1.5)
    x.copy_(fresh(n, seed=10))
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.addcmul(y, x, torch.full_like(x, 1.5)), rtol=0, atol=1e-6)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.addcmul(y, x, torch.full_like(x, 1.5)), rtol=0, atol=1e-6)


def test_torch_compile_fullgraph_traces_the_registered_op():
    from rust_gpu_sim import torch_ops

    torch_ops.register()
    torch._dynamo.reset()

    def f(x, y):
        return torch.ops.rust_gpu_sim.saxpy(x * 2, y, 0.5).sum() + torch.ops.rust_gpu_sim.softmax(x.view(8, -1)).sum()

    compiled = torch.compile(f, fullgraph=True)
    x, y = fresh(4096, seed=11), fresh(4096, seed=12)
    torch.testing.assert_close(compiled(x, y), f(x, y))


def test_views_with_odd_strides_and_alignment_are_taken():
    # A row of extent 1 may have any stride (torch calls it contiguous, and exports it as is).
    row = fresh(45).as_strided((1, 9), (5, 1))
    assert row.is_contiguous()
    out = torch.empty(1, 9, device=DEVICE)
    kernels.softmax(row, out)
    torch.testing.assert_close(out, torch.softmax(row, dim=1), rtol=1e-5, atol=1e-6)
    # Views 4 bytes off a 16-byte boundary: the fused step takes one column a thread there.
    n = 64
    storage = torch.empty(4 * n * n + 4, device=DEVICE)
    views = [storage[1 + k * n * n: 1 + (k + 1) * n * n].view(n, n) for k in range(4)]
    sim = rgs.GrayScott(size=n, backend="cuda")
    views[0].copy_(torch.from_dlpack(sim.u))
    views[1].copy_(torch.from_dlpack(sim.v))
    kernels.grayscott_fused(*views, **sim.rates)
    sim.step(1)
    torch.cuda.synchronize()
    assert torch.equal(views[2], torch.from_dlpack(sim.u)) and torch.equal(views[3], torch.from_dlpack(sim.v))


def test_a_simulation_dropped_under_a_pending_read_waits_for_it():
    def total():
        sim = rgs.GrayScott(size=2048, variant="fused", backend="cuda")
        sim.step(50)
        return torch.from_dlpack(sim.v).double().sum()  # the simulation goes with the tensor

    first, second = total(), total()
    torch.cuda.synchronize()
    assert first.item() == second.item() and first.item() > 0


# ---- refusals: a message naming the culprit, nothing launched ----------------------------------


@pytest.mark.parametrize("make, culprit, kind", [
    (lambda x, y, o: (x.double(), y, o), "x", TypeError),
    (lambda x, y, o: (x, y.cpu(), o), "y", TypeError),
    (lambda x, y, o: (x, y, o.half()), "out", TypeError),
    (lambda x, y, o: (x, torch.rand(2 * len(y), device=DEVICE)[::2], o), "y", ValueError),
    (lambda x, y, o: (x, y[:-1], o), "y", ValueError),
    (lambda x, y, o: (x, y, torch.empty(len(o) + 1, device=DEVICE)), "out", ValueError),
    (lambda x, y, o: (x, y, x), "out", ValueError),
])
def test_bad_tensors_are_refused_before_any_launch(make, culprit, kind):
    x, y = fresh(1000, seed=13), fresh(1000, seed=14)
    sentinel = torch.full((1000,), 7.0, device=DEVICE)
    x0 = x.clone()
    args = make(x, y, sentinel)
    with pytest.raises(kind, match=rf"^{culprit}: "):
        kernels.saxpy(*args, 2.0)
    torch.cuda.synchronize()
    assert torch.equal(sentinel, torch.full_like(sentinel, 7.0)) and torch.equal(x, x0)


def test_a_tensor_on_another_gpu_is_refused():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    x = fresh(64)
    with pytest.raises(ValueError, match=r"^y: on cuda:1"):
        kernels.saxpy(x, x.to("cuda:1"), torch.empty_like(x), 1.0)


def test_gray_scott_refuses_mismatched_grids():
    u = fresh(16, 16)
    with pytest.raises(ValueError, match=r"^v_next: shape"):
        kernels.grayscott_fused(u, u.clone(), torch.empty_like(u), torch.empty(16, 15, device=DEVICE), feed=0.05, kill=0.06)
    with pytest.raises(ValueError, match=r"^u: .*2-D"):
        kernels.grayscott_laplacian(fresh(8), fresh(8), fresh(8), fresh(8))


def test_simulation_refusals_on_the_gpu():
    with pytest.raises(ValueError, match="variant"):
        rgs.GrayScott(size=8, variant="cpu", backend="cuda")
    with pytest.raises(ValueError, match="memory"):
        rgs.Heat(size=4000, variant="single", backend="cuda")  # 4000³: 256 GB for u alone
